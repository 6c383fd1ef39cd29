# Runs `streamhaz check --no-sync` and `mpirun ... streamhaz-check-mpi` on the same traces and
# fails unless both give the same report (-D FORMAT) and exit status.
execute_process(COMMAND ${STREAMHAZ} check --no-sync --format ${FORMAT} ${TRACES}
                OUTPUT_VARIABLE plain RESULT_VARIABLE plain_rc ERROR_QUIET)
set(ENV{OMPI_ALLOW_RUN_AS_ROOT} 1)
set(ENV{OMPI_ALLOW_RUN_AS_ROOT_CONFIRM} 1)
execute_process(COMMAND ${MPIEXEC} --oversubscribe -np ${NP} ${CHECK_MPI} --format ${FORMAT} ${TRACES}
                OUTPUT_VARIABLE sharded RESULT_VARIABLE sharded_rc ERROR_VARIABLE sharded_err)
if(NOT plain STREQUAL sharded)
  message(FATAL_ERROR "reports differ\n--- check:\n${plain}\n--- streamhaz-check-mpi -np ${NP}:\n${sharded}\n${sharded_err}")
endif()
if(NOT plain_rc EQUAL sharded_rc)
  message(FATAL_ERROR "exit status ${sharded_rc}, check gave ${plain_rc}\n${sharded_err}")
endif()
if(plain STREQUAL "")
  message(FATAL_ERROR "empty report")
endif()
