# The allocator of the streamhaz command: mimalloc (Debian's libmimalloc-dev) where found.
# `check` with the over-synchronisation pass builds and frees millions of small objects (records,
# clocks, pair sets, per-what-if tables): under glibc's malloc its own bookkeeping was about a
# tenth of a 1,024-rank check, which took 16.5 s there and 14.5 s on mimalloc (README, "Performance").
# Only the streamhaz command links it: never the tracer, which lives inside the traced program,
# nor streamhaz-check-mpi, whose MPI library hooks memory calls of its own.
set(STREAMHAZ_ALLOCATOR AUTO CACHE STRING "Allocator of the streamhaz command: AUTO (mimalloc where found), mimalloc or system")
set_property(CACHE STREAMHAZ_ALLOCATOR PROPERTY STRINGS AUTO mimalloc system)

function(streamhaz_use_allocator target)
  if(STREAMHAZ_ALLOCATOR STREQUAL "system")
    return()
  endif()
  find_package(mimalloc CONFIG QUIET)
  if(NOT mimalloc_FOUND)
    if(STREAMHAZ_ALLOCATOR STREQUAL "mimalloc")
      message(FATAL_ERROR "streamhaz: STREAMHAZ_ALLOCATOR=mimalloc but mimalloc is not found (Debian: libmimalloc-dev)")
    endif()
    message(STATUS "streamhaz: mimalloc not found; ${target} uses the system's malloc")
    return()
  endif()
  # Linked as a whole (not as-needed): it replaces malloc by being loaded before the C library,
  # not through any symbol of its own that the program names.
  set(CMAKE_LINK_LIBRARY_USING_STREAMHAZ_NO_AS_NEEDED "LINKER:--push-state,--no-as-needed" "<LINK_ITEM>" "LINKER:--pop-state"
      PARENT_SCOPE)
  set(CMAKE_LINK_LIBRARY_USING_STREAMHAZ_NO_AS_NEEDED_SUPPORTED TRUE PARENT_SCOPE)
  target_link_libraries(${target} PRIVATE "$<LINK_LIBRARY:STREAMHAZ_NO_AS_NEEDED,mimalloc>")
  target_compile_definitions(${target} PRIVATE STREAMHAZ_WITH_MIMALLOC)
  set_property(GLOBAL PROPERTY STREAMHAZ_ALLOCATOR_IN_USE mimalloc)  # tests/cli checks --version says so
  message(STATUS "streamhaz: ${target} uses mimalloc")
endfunction()
