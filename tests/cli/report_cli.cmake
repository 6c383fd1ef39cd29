# End-to-end tests of `streamhaz report` and `streamhaz export --perfetto` (included by
# tests/cli/CMakeLists.txt, which defines cli_check, ${scenarios} and the scenario fixture).
set(report $<TARGET_FILE:streamhaz> report)
set(pages ${scenarios})  # made by the scenario fixture

cli_check("report: racy trace to stdout names the finding, exit 0" 0
  --contains "<!DOCTYPE html>" --contains "write-after-write race on ipg_buffer[0]" --contains "Missing order"
  --contains "timeline-data" -- ${report} ${scenarios}/racy -o -)
cli_check("report: clean trace says no findings" 0 --contains "No findings." -- ${report} --no-sync ${scenarios}/clean -o -)
# report runs check's pipeline: the clean scenario's serialising wait is an over-synchronisation there too.
cli_check("report: shows over-synchronisation findings as check does" 0 --contains "stronger than needed"
  --not-contains "No findings." -- ${report} ${scenarios}/clean -o -)
cli_check("report: writes the file and says so" 0 --contains "wrote ${pages}/racy.html"
  -- ${report} ${scenarios}/racy -o ${pages}/racy.html --force)
cli_check("report: existing output without --force: exit 2, file kept" 2 --contains "pass --force to replace it"
  --file-is ${scenarios}/existing.txt "keep me\n"
  -- ${report} ${scenarios}/racy -o ${scenarios}/existing.txt)
cli_check("report: corrupt trace: exit 2, output file not created" 2 --contains "checksum mismatch"
  -- sh -c "\"$0\" report \"$1\" -o \"$2\"\; s=$?\; test ! -e \"$2\" && exit $s" $<TARGET_FILE:streamhaz>
     ${scenarios}/bad ${pages}/never-made.html)
cli_check("report: -o is required" 2 --contains "--output is required" -- ${report} ${scenarios}/racy)
cli_check("report: --help names the options and exit statuses" 0 --contains=--detail-ops --contains "Exit status: 0"
  -- ${report} --help)
cli_check("report: non-UTF-8 names" 0 --contains "timeline-data" -- ${report} ${scenarios}/latin1 -o -)

# Perfetto: the file, then its structure against the Trace Event Format rules Perfetto's
# importer applies (tests/report/check_perfetto.py).
set(export $<TARGET_FILE:streamhaz> export)
set(perfetto_check ${STREAMHAZ_VALIDATION_PYTHON} ${PROJECT_SOURCE_DIR}/tests/report/check_perfetto.py)
cli_check("export --perfetto: racy trace" 0 --contains "finding markers"
  -- ${export} ${scenarios}/racy --perfetto ${pages}/racy.perfetto.json --force)
set_tests_properties("cli: export --perfetto: racy trace" PROPERTIES FIXTURES_SETUP cli_perfetto_racy)
add_test(NAME "cli: export --perfetto: racy trace follows the trace-event rules"
         COMMAND ${perfetto_check} ${pages}/racy.perfetto.json --min-processes 2 --min-flows 3 --min-instants 1)
set_tests_properties("cli: export --perfetto: racy trace follows the trace-event rules" PROPERTIES FIXTURES_REQUIRED cli_perfetto_racy)
cli_check("export --perfetto: non-UTF-8 names" 0 -- ${export} ${scenarios}/latin1 --perfetto ${pages}/latin1.perfetto.json --force)
set_tests_properties("cli: export --perfetto: non-UTF-8 names" PROPERTIES FIXTURES_SETUP cli_perfetto_latin1)
add_test(NAME "cli: export --perfetto: non-UTF-8 names follow the trace-event rules"
         COMMAND ${perfetto_check} ${pages}/latin1.perfetto.json)
set_tests_properties("cli: export --perfetto: non-UTF-8 names follow the trace-event rules" PROPERTIES FIXTURES_REQUIRED cli_perfetto_latin1)
cli_check("export --perfetto: existing file without --force: exit 2, file kept" 2 --contains "pass --force to replace it"
  --file-is ${scenarios}/existing.txt "keep me\n"
  -- ${export} ${scenarios}/racy --perfetto ${scenarios}/existing.txt)
cli_check("export: --json and --perfetto together are refused" 2 --contains "excludes"
  -- ${export} ${scenarios}/racy --json --perfetto ${pages}/both.json)
cli_check("export: neither --json nor --perfetto is refused" 2 --contains "--json or --perfetto" -- ${export} ${scenarios}/racy)

# A bundled 2-rank H200 trace (sampled-free, every operation timed) through the same rules.
if(EXISTS ${PROJECT_SOURCE_DIR}/traces/race-2gpu-delay)
  cli_check("export --perfetto: bundled race-2gpu-delay" 0
    -- ${export} ${PROJECT_SOURCE_DIR}/traces/race-2gpu-delay --perfetto ${pages}/race-2gpu-delay.perfetto.json --force)
  set_tests_properties("cli: export --perfetto: bundled race-2gpu-delay" PROPERTIES FIXTURES_SETUP cli_perfetto_bundled)
  add_test(NAME "cli: export --perfetto: bundled 2-rank trace follows the trace-event rules"
           COMMAND ${perfetto_check} ${pages}/race-2gpu-delay.perfetto.json --min-processes 2 --min-flows 20 --min-instants 1)
  set_tests_properties("cli: export --perfetto: bundled 2-rank trace follows the trace-event rules"
                       PROPERTIES FIXTURES_REQUIRED cli_perfetto_bundled)
endif()
