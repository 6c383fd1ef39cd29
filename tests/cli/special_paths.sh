#!/bin/sh
# CLI cases about paths that are not plain files: FIFOs, symbolic links, device nodes, and a
# standard output that cannot be written. Each case exits 0 when streamhaz behaved.
# usage: special_paths.sh STREAMHAZ SCENARIOS CASE
set -u
bin=$1
scenarios=$2
case_name=$3
work="$scenarios/special-$case_name"
rm -rf "$work"
mkdir -p "$work"
trace="$scenarios/clean/rank0.shz"

expect_status() {  # expect_status WANT GOT WHAT
  if [ "$2" -ne "$1" ]; then
    echo "FAILED: $3: exit status $2, expected $1"
    exit 1
  fi
}
fail() {
  echo "FAILED: $1"
  exit 1
}

case $case_name in
  check-fifo | inspect-fifo)
    # Opening a FIFO for reading waits for a writer: the verb must refuse it at once.
    mkfifo "$work/rank0.shz"
    "$bin" "${case_name%-fifo}" "$work/rank0.shz" 2>"$work/err"
    expect_status 2 $? "$case_name"
    grep -q "not a regular file" "$work/err" || fail "no 'not a regular file' in: $(cat "$work/err")"
    ;;
  fifo-in-folder)
    cp "$trace" "$work/rank0.shz"
    mkfifo "$work/rank1.shz"
    "$bin" check "$work" 2>"$work/err"
    expect_status 2 $? "check of a folder holding a FIFO"
    grep -q "rank1.shz.*not a regular file" "$work/err" || fail "FIFO not named: $(cat "$work/err")"
    ;;
  export-through-symlink)
    printf 'old\n' >"$work/target.jsonl"
    ln -s target.jsonl "$work/link.jsonl"
    "$bin" export --json --force -o "$work/link.jsonl" "$trace"
    expect_status 0 $? "export through a link"
    [ -L "$work/link.jsonl" ] || fail "the link was replaced"
    grep -q '"type"' "$work/target.jsonl" || fail "the file the link names was not written"
    ;;
  export-dangling-symlink)
    ln -s missing.jsonl "$work/dangling.jsonl"
    "$bin" export --json -o "$work/dangling.jsonl" "$trace" 2>"$work/err"
    expect_status 2 $? "export to a link to nothing"
    [ -L "$work/dangling.jsonl" ] || fail "the link was replaced"
    [ ! -e "$work/missing.jsonl" ] || fail "a file was created where the link points"
    ;;
  export-to-fifo)
    mkfifo "$work/out.fifo"
    cat "$work/out.fifo" >"$work/got" &
    reader=$!
    "$bin" export --json --force -o "$work/out.fifo" "$trace"
    status=$?
    if [ ! -p "$work/out.fifo" ]; then
      kill "$reader" 2>/dev/null
      fail "the FIFO was replaced"
    fi
    wait "$reader"
    expect_status 0 "$status" "export into a FIFO"
    grep -q '"type"' "$work/got" || fail "nothing came through the FIFO"
    ;;
  export-to-device)
    "$bin" export --json -o /dev/null "$trace"
    expect_status 0 $? "export to /dev/null"
    [ -c /dev/null ] || fail "/dev/null is no longer a device"
    # (without --force: an old build replaced a device given with --force, as root even /dev/full)
    "$bin" export --json -o /dev/full "$trace" 2>"$work/err"
    expect_status 2 $? "export to /dev/full"
    [ -c /dev/full ] || fail "/dev/full is no longer a device"
    ;;
  export-to-folder)
    mkdir "$work/out"
    "$bin" export --json --force -o "$work/out" "$trace" 2>"$work/err"
    expect_status 2 $? "export onto a folder"
    [ -d "$work/out" ] || fail "the folder was replaced"
    ;;
  export-keeps-partial-name)
    # The file written beside the output must not be one the user owns.
    printf 'keep me\n' >"$work/out.jsonl.partial"
    "$bin" export --json -o "$work/out.jsonl" "$trace"
    expect_status 0 $? "export beside a .partial file"
    [ "$(cat "$work/out.jsonl.partial")" = "keep me" ] || fail "out.jsonl.partial was overwritten"
    grep -q '"type"' "$work/out.jsonl" || fail "no output"
    [ -z "$(find "$work" -name '.out.jsonl.*')" ] || fail "a temporary file was left behind"
    ;;
  export-stdout-full | inspect-stdout-full | inspect-json-stdout-full)
    case $case_name in
      export-*) "$bin" export --json "$trace" >/dev/full 2>"$work/err" ;;
      inspect-json-*) "$bin" inspect --json "$trace" >/dev/full 2>"$work/err" ;;
      *) "$bin" inspect "$trace" >/dev/full 2>"$work/err" ;;
    esac
    expect_status 2 $? "$case_name"
    grep -q "standard output" "$work/err" || fail "no message: $(cat "$work/err")"
    ;;
  what-if-fifo | suppressions-fifo | kernels-fifo)
    # Side files are opened as traces are: a FIFO is refused at once, not waited on for ever.
    mkfifo "$work/side"
    case $case_name in
      what-if-*) "$bin" replay "$scenarios/clean" --what-if "@$work/side" 2>"$work/err" ;;
      *) "$bin" check --no-sync "--${case_name%-fifo}" "$work/side" "$scenarios/clean" 2>"$work/err" ;;
    esac
    expect_status 2 $? "$case_name"
    grep -q "side.*not a regular file" "$work/err" || fail "FIFO not named: $(cat "$work/err")"
    ;;
  check-dangling-symlink | minimal-sync-dangling-symlink)
    # The same refusal as report and export: writing through would create the missing target.
    ln -s missing.txt "$work/dangling.txt"
    case $case_name in
      check-*) "$bin" check --force -o "$work/dangling.txt" "$scenarios/clean" 2>"$work/err" ;;
      *) "$bin" check --force --minimal-sync "$work/dangling.txt" "$scenarios/clean" >/dev/null 2>"$work/err" ;;
    esac
    expect_status 2 $? "$case_name"
    [ -L "$work/dangling.txt" ] || fail "the link was replaced"
    [ ! -e "$work/missing.txt" ] || fail "a file was created where the link points"
    grep -q "symbolic link to nothing" "$work/err" || fail "no message: $(cat "$work/err")"
    ;;
  check-output-is-input | report-output-is-input | export-output-is-input | perfetto-output-is-input)
    # --force replaces outputs, never the traces being read (found by device and inode, here
    # through a link).
    cp "$scenarios/clean/rank0.shz" "$scenarios/clean/rank1.shz" "$work/"
    ln -s rank1.shz "$work/link.out"
    for out in "$work/rank0.shz" "$work/link.out"; do
      case $case_name in
        check-*) "$bin" check --no-sync --force -o "$out" "$work" 2>"$work/err" ;;
        report-*) "$bin" report --force -o "$out" "$work" 2>"$work/err" ;;
        export-*) "$bin" export --json --force -o "$out" "$work" 2>"$work/err" ;;
        *) "$bin" export --force --perfetto "$out" "$work" 2>"$work/err" ;;
      esac
      expect_status 2 $? "$case_name: $out"
      grep -q "refusing to write over it" "$work/err" || fail "no message: $(cat "$work/err")"
    done
    cmp -s "$scenarios/clean/rank0.shz" "$work/rank0.shz" || fail "rank0.shz was overwritten"
    cmp -s "$scenarios/clean/rank1.shz" "$work/rank1.shz" || fail "rank1.shz was overwritten through the link"
    ;;
  *)
    fail "unknown case $case_name"
    ;;
esac
rm -rf "$work"
exit 0
