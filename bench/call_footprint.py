#!/usr/bin/env python3
"""What each marked call of bench/tracer_call_footprint touched, from valgrind lackey's
--trace-mem log: per kind of call, the median instructions, distinct 64-byte lines and 4 KiB
pages of code and of data. Calls come in the program's order, CALLS of each kind, each between
two stores to the marker whose address the program printed.
  call_footprint.py MARKER_HEX LACKEY_LOG"""
import statistics
import sys

KINDS = ["launch, api tier", "launch, pointer tier (3 operands)", "event record",
         "launch, pointer tier, 12-frame Python stack"]
CALLS = 5  # tracer_call_footprint's kCalls


def calls_in(log, marker):
    """Yields (instructions, code addresses, data addresses) per marked call."""
    inside, count, code, data = False, 0, set(), set()
    for line in log:
        parts = line.split()
        if len(parts) != 2 or parts[0] not in ("I", "L", "S", "M"):
            continue
        address = int(parts[1].split(",")[0], 16)
        if parts[0] in ("S", "M") and address == marker:
            if inside:
                yield count, code, data
            inside, count, code, data = not inside, 0, set(), set()
        elif inside and parts[0] == "I":
            count += 1
            code.add(address)
        elif inside:
            data.add(address)


def main():
    marker = int(sys.argv[1], 16)
    with open(sys.argv[2]) as log:
        calls = list(calls_in(log, marker))
    if len(calls) != CALLS * len(KINDS):
        sys.exit(f"call_footprint: {len(calls)} marked calls in {sys.argv[2]}, expected {CALLS * len(KINDS)}")
    print(f"{'call':<46} {'instr':>6} {'code lines':>10} {'pages':>5} {'data lines':>10} {'pages':>5}")
    for i, kind in enumerate(KINDS):
        rows = calls[i * CALLS:(i + 1) * CALLS]
        med = lambda f: int(statistics.median(f(r) for r in rows))
        print(f"{kind:<46} {med(lambda r: r[0]):>6} {med(lambda r: len({a >> 6 for a in r[1]})):>10} "
              f"{med(lambda r: len({a >> 12 for a in r[1]})):>5} {med(lambda r: len({a >> 6 for a in r[2]})):>10} "
              f"{med(lambda r: len({a >> 12 for a in r[2]})):>5}")


if __name__ == "__main__":
    main()
