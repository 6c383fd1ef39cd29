#!/usr/bin/env python3
"""Runs a command and checks its exit status and output (used by the CLI tests in ctest).

usage: run_expect.py --exit N [--contains TEXT]... [--not-contains TEXT]... [--matches REGEX]...
                     [--file-is PATH TEXT] -- COMMAND ARGS...

--contains/--not-contains/--matches look at stdout and stderr together. --file-is checks that a
file holds exactly TEXT afterwards (a file the command must not have overwritten).
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
    problems += [f"output does not match /{r}/" for r in args.matches if not re.search(r, output)]
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
