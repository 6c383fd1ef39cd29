# End-to-end tests of hostile input, round two (issue 27): trace values that must not size
# allocations, memory and thread limits, side files, outputs and escaping. Included by
# tests/cli/CMakeLists.txt, which defines cli_check, ${check} and the scenario fixture.

# cli_limited(NAME EXIT LIMITS [run_expect options...] -- COMMAND...): cli_check with the
# shell limits LIMITS (e.g. "ulimit -v 1048576", several joined by &&: a ';' would split the
# CMake list) set before COMMAND runs.
function(cli_limited name exit_status limits)
  list(FIND ARGN "--" dashes)
  list(SUBLIST ARGN 0 ${dashes} expectations)
  math(EXPR first "${dashes} + 1")
  list(SUBLIST ARGN ${first} -1 command)
  cli_check("${name}" ${exit_status} ${expectations} -- sh -c "${limits} && exec \"$@\"" limited ${command})
endfunction()

# A communicator that claims 2^32 - 1 ranks: 16 such calls took 8.4 GB in the issue's probe.
cli_limited("an absurd NCCL nranks does not size the analysis's memory" 0 "ulimit -v 1048576"
  --contains "not reached by all their ranks"
  -- ${check} --no-sync ${scenarios}/nranks-bomb)

# A thread the system refuses is not a crash: the ranks are checked on the threads that
# started. Here 1 GB thread stacks in 1.5 GB of address space: the first worker thread
# starts, the next one cannot (the build before aborted: "terminate called without an
# active exception", exit 134).
cli_limited("a refused worker thread: the check goes on with a warning" 1 "ulimit -s 1000000 && ulimit -v 1500000"
  --matches "could start only [12] of the 4 threads asked for" --contains "streamhaz: race:"
  -- ${check} --no-sync --jobs 4 ${scenarios}/racy4)

# Names past 64 KiB are cut, and check says so.
cli_check("a name longer than 64 KiB is cut, with a warning" 1 --contains "cut to their first 64 KiB"
  --contains "streamhaz: race:" -- ${check} --no-sync ${scenarios}/long-name)
# A check that runs out of memory says where.
cli_limited("out of memory names the trace and the record" 2 "ulimit -v 262144"
  --matches "out of memory while checking .*name-bomb/rank0\\.shz at record [1-9][0-9]*"
  -- ${check} --no-sync ${scenarios}/name-bomb)
cli_check("--memory-limit: the same error, without a shell limit" 2
  --matches "out of memory while checking .*name-bomb/rank0\\.shz at record [1-9][0-9]*"
  -- ${check} --no-sync --memory-limit 128 ${scenarios}/name-bomb)
cli_check("--memory-limit leaves a check that fits alone" 1 --contains "streamhaz: race:"
  -- ${check} --memory-limit 512 ${scenarios}/racy)

# Side files are opened as traces are: regular files only, bounded, errors naming the file.
# (A FIFO would block for ever: tests/cli/special_paths.sh. /dev/zero was read until memory
# ran out: the address-space limit keeps a regression from taking the machine's memory.)
foreach(side suppressions kernels)
  cli_limited("--${side} /dev/zero is refused" 2 "ulimit -v 1048576" --contains "/dev/zero" --contains "not a regular file"
    -- ${check} --no-sync --${side} /dev/zero ${scenarios}/clean)
  cli_check("--${side} naming a folder is refused" 2 --contains "not a regular file"
    -- ${check} --no-sync --${side} ${data} ${scenarios}/clean)
endforeach()
cli_limited("replay --what-if @/dev/zero is refused" 2 "ulimit -v 1048576" --contains "/dev/zero" --contains "not a regular file"
  -- $<TARGET_FILE:streamhaz> replay ${scenarios}/clean --what-if @/dev/zero)
cli_check("replay --what-if @FOLDER is refused" 2 --contains "not a regular file"
  -- $<TARGET_FILE:streamhaz> replay ${scenarios}/clean --what-if @${data})

# Trace-derived names and user-given text reach the terminal escaped in every verb.
string(ASCII 27 ESC)
cli_check("replay: minimal-sync advice escapes stream names" 0 --printable --not-matches "^FAKE:"
  --contains "minimal sync:" --contains "FAKE: forged line\\x1b"
  -- $<TARGET_FILE:streamhaz> replay ${scenarios}/hostile-sync --what-if minimal-sync)
cli_check("replay: the --step-range and the spec lines are echoed escaped" 0 --printable --not-matches "^FAKE:"
  --contains "NVTX range 'step\\x0aFAKE: range'" --contains "given: drop kind=wait # \\x0aFAKE: spec"
  -- $<TARGET_FILE:streamhaz> replay ${scenarios}/clean --step-range "step\nFAKE: range"
     --what-if "drop kind=wait # \nFAKE: spec")
cli_check("replay: a bad spec is quoted escaped" 2 --printable --not-matches "^FAKE:" --contains "unterminated quote"
  -- $<TARGET_FILE:streamhaz> replay ${scenarios}/clean --what-if "drop \"kind=wait\nFAKE: spec${ESC}c")
cli_check("report: the output path and the warnings are escaped" 0 --printable --not-matches "^(FAKE|=====)"
  --contains "wrote " -- $<TARGET_FILE:streamhaz> report ${scenarios}/evil-truncated --force
     -o "${scenarios}/report\n=====\nFAKE: forged.html")
cli_check("report: an existing output's message is escaped" 2 --printable --not-matches "^streamhaz: forged"
  -- $<TARGET_FILE:streamhaz> report ${scenarios}/clean -o "${scenarios}/evil-name/rank0\nstreamhaz: forged line.shz")
cli_check("export --perfetto: the output path and the warnings are escaped" 0 --printable --not-matches "^(FAKE|=====)"
  --contains "wrote " -- $<TARGET_FILE:streamhaz> export ${scenarios}/evil-truncated --force
     --perfetto "${scenarios}/perfetto\n=====\nFAKE: forged.json")

# Outputs: one that cannot be made is refused before the analysis (here the analysis would fail
# on the corrupt trace, so the message shows which came first).
cli_check("check -o in a missing folder is refused before the analysis" 2 --contains "cannot write beside"
  --not-contains "checksum" -- ${check} -o ${scenarios}/no-such-folder/report.txt ${scenarios}/bad)

# export --json: an NCCL record keeps its communicator rank; the trace's rank has its own key.
cli_check("export --json keeps the NCCL record's communicator rank" 0 --contains "\"rank\":5,"
  --contains "\"trace_rank\":0" -- ${export} --json ${scenarios}/nranks-bomb)

# replay on a truncated trace says so, and does not blame --gpu-times for times it lost.
cli_check("replay warns about a truncated trace" 0 --contains "warning: truncated trace"
  -- $<TARGET_FILE:streamhaz> replay ${scenarios}/truncated-clean)
cli_check("replay of a cut-off trace without GPU times blames the cut" 2 --contains "was cut off"
  --not-contains "--gpu-times all" -- $<TARGET_FILE:streamhaz> replay ${scenarios}/truncated-untimed)

# What-ifs that name nothing are refused rather than predicting "+0.00 %".
set(replay $<TARGET_FILE:streamhaz> replay)
cli_check("what-if: a rank past 2^31 - 1 is refused, not masked to rank 0" 2 --contains "rank= is at most 2147483647"
  -- ${replay} ${scenarios}/clean --what-if "drop rank=2147483648 seq=5")
cli_check("what-if: a rank the run does not have is refused" 2 --contains "the run has no rank 7"
  -- ${replay} ${scenarios}/clean --what-if "drop rank=7 seq=5")
cli_check("what-if: a seq that is no synchronisation is refused" 2 --contains "rank 0 has no synchronisation"
  -- ${replay} ${scenarios}/clean --what-if "drop rank=0 seq=999999")
cli_check("what-if: a stream no operation is on is refused" 2 --contains "no operation of the run matches"
  -- ${replay} ${scenarios}/clean --what-if "scale stream=nosuch factor=2")
cli_check("what-if: add-wait on a rank the run does not have is refused" 2 --contains "the run has no rank 3"
  -- ${replay} ${scenarios}/clean --what-if "add-wait rank=3 after=1 before=2")
cli_check("what-if: add-wait naming an operation its rank does not have is refused" 2
  --contains "add-wait: rank 0 has no operation with seq 999999"
  -- ${replay} ${scenarios}/clean --what-if "add-wait rank=0 after=6 before=999999")

# --minimal-sync needs the over-synchronisation pass that --no-sync skips.
cli_check("check --minimal-sync with --no-sync is refused" 2 --contains "excludes"
  -- ${check} --no-sync --minimal-sync ${scenarios}/never-written.spec ${scenarios}/clean)

# A header key of the wrong type is a trace error naming the file and offset.
cli_check("a header version that is not a number: exit 2 naming the file" 2
  --matches "bad-version/rank0\\.shz: at byte 16: header has a \"version\" that is not a whole number"
  -- ${check} ${scenarios}/bad-version)
