#!/usr/bin/env python3
"""What the exact tier's 32 KiB table (tier coarse) costs in precision, per kernel class.

usage: coarse_precision.py STREAMHAZ FINE_TRACE COARSE_TRACE

FINE_TRACE and COARSE_TRACE are exact-tier traces of the same deterministic program, the second
recorded with STREAMHAZ_EXACT_FINE_REGIONS set low so that launches which fit the 128-byte table
in the first run overflow it into the 32 KiB one. Launches are paired by their order; for every
kernel class (kernel name, template arguments folded) with coarse launches in COARSE_TRACE the
script prints the bytes those launches claim against the bytes the same launches claim at
128-byte granules in FINE_TRACE, and the ratio. Launches coarse in both runs (over 1 GiB
touched) are counted apart: no fine reference exists for them.
"""
import collections
import json
import re
import subprocess
import sys


def launches(streamhaz, trace):
    """[(kernel name, {tier: bytes})] in launch order."""
    out = subprocess.run([streamhaz, "export", trace, "--json"], capture_output=True, text=True, check=True).stdout
    names, kernels, by_seq = {}, [], {}
    for line in out.splitlines():
        r = json.loads(line)
        t = r.get("type")
        if t == "string":
            names[r["id"]] = r["text"]
        elif t == "kernel":
            entry = (names.get(r["name"], str(r["name"])), collections.Counter())
            kernels.append(entry)
            by_seq[r["seq"]] = entry[1]
        elif t == "access" and r.get("tier") in ("exact", "coarse", "memo") and r["op_seq"] in by_seq:
            by_seq[r["op_seq"]][r["tier"]] += r["bytes"]
    return kernels


def kernel_class(mangled):
    """The function's own name, without template arguments: one row per kernel family."""
    if not mangled.startswith("_Z"):
        return mangled[:60]
    # Take the last plain identifier of the nested name before the template arguments.
    name, i = [], 3 if mangled.startswith("_ZN") else 2
    while i < len(mangled) and mangled[i].isdigit():
        j = i
        while mangled[j].isdigit():
            j += 1
        n = int(mangled[i:j])
        part = mangled[j:j + n]
        anonymous = re.match(r"_GLOBAL__N__[0-9a-f]+_\d+_(\w+?)_cu_[0-9a-f]+$", part)
        name.append(anonymous.group(1) + ".cu" if anonymous else part)
        i = j + n
    return "::".join(name[-2:]) if name else mangled[:60]


def main():
    streamhaz, fine_trace, coarse_trace = sys.argv[1:4]
    fine, coarse = launches(streamhaz, fine_trace), launches(streamhaz, coarse_trace)
    if [n for n, _ in fine] != [n for n, _ in coarse]:
        print("the two traces launched different kernels: not the same program run", file=sys.stderr)
        return 2
    rows = collections.defaultdict(lambda: [0, 0, 0, 0])  # launches, coarse bytes, fine bytes, both-coarse launches
    for (name, f), (_, c) in zip(fine, coarse):
        if not c["coarse"]:
            continue
        row = rows[kernel_class(name)]
        if f["coarse"]:
            row[3] += 1
            continue
        row[0] += 1
        row[1] += c["coarse"] + c["exact"]
        row[2] += f["exact"] + f["memo"]
    print("| kernel class | launches (coarse only here) | bytes claimed, 32 KiB table | bytes at 128-byte granules | ratio | coarse in both runs |")
    print("|---|---|---|---|---|---|")
    total = [0, 0, 0, 0]
    for k, (n, cb, fb, both) in sorted(rows.items(), key=lambda kv: -kv[1][1]):
        ratio = f"{cb / fb:.3f}" if fb else "-"
        print(f"| {k} | {n} | {cb:,} | {fb:,} | {ratio} | {both} |")
        total = [a + b for a, b in zip(total, (n, cb, fb, both))]
    n, cb, fb, both = total
    print(f"| all | {n} | {cb:,} | {fb:,} | {cb / fb if fb else 0:.3f} | {both} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
