#!/usr/bin/env python3
"""Runs a command and checks its exit status and output (used by the CLI tests in ctest).

usage: run_expect.py --exit N [--contains TEXT]... [--not-contains TEXT]... [--matches REGEX]...
                     [--not-matches REGEX]... [--printable] [--file-is PATH TEXT] -- COMMAND ARGS...

--contains/--not-contains/--matches/--not-matches look at stdout and stderr together (regexes in
multi-line mode). --printable fails on any control character but newline in the output, C1
controls included, and on bytes that are not UTF-8. --file-is checks that a file holds exactly
TEXT afterwards (a file the command must not have overwritten).
"""
import argparse
import re
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--exit", type=int, required=True)
    parser.add_argument("--contains", action="append", default=[])
    parser.add_argument("--not-contains", action="append", default=[])
    parser.add_argument("--matches", action="append", default=[])
    parser.add_argument("--not-matches", action="append", default=[])
    parser.add_argument("--printable", action="store_true")
    parser.add_argument("--file-is", nargs=2, action="append", default=[], metavar=("PATH", "TEXT"))
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given")

    run = subprocess.run(command, capture_output=True, text=True, errors="replace")
    output = run.stdout + run.stderr
    problems = []
    if run.returncode != args.exit:
        problems.append(f"exit status {run.returncode}, expected {args.exit}")
    problems += [f"output lacks {t!r}" for t in args.contains if t not in output]
    problems += [f"output contains {t!r}" for t in args.not_contains if t in output]
    problems += [f"output does not match /{r}/" for r in args.matches if not re.search(r, output, re.M)]
    problems += [f"output matches /{r}/" for r in args.not_matches if re.search(r, output, re.M)]
    if args.printable:
        bad = sorted({c for c in output if (c < " " and c != "\n") or "\x7f" <= c <= "\x9f" or c == "\ufffd"})
        if bad:
            problems.append("output holds unprintable characters " + ", ".join(f"U+{ord(c):04X}" for c in bad))
    for path, text in args.file_is:
        with open(path, encoding="utf-8") as f:
            if f.read() != text:
                problems.append(f"{path} was changed")
    if problems:
        print("command:", " ".join(command))
        print("--- stdout ---\n" + run.stdout + "--- stderr ---\n" + run.stderr)
        for p in problems:
            print("FAILED:", p)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
