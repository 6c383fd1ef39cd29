#!/usr/bin/env python3
"""Checks that `streamhaz check` names the source lines of a race (GPU host, stacks_check.sh).

usage: check_stacks.py torch SCRIPT TEXT JSON SARIF
         the findings must name SCRIPT's lines marked `# stack: bucket copy`, `# stack:
         all-reduce` and `# stack: bucket allocation`, in the text, the JSON and (the first two)
         the SARIF output
       check_stacks.py reducer SRC_DIR TEXT JSON
         the findings' stacks must reach a file of SRC_DIR (native frames symbolised at check time)
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from report_frames import frames  # noqa: E402

failures = 0


def check(ok, what):
    global failures
    print(("ok    " if ok else "FAIL  ") + what)
    failures += 0 if ok else 1


def sarif_lines(node, uri_end):
    """(uri, startLine) of every physicalLocation in a SARIF log."""
    if isinstance(node, dict):
        loc = node.get("physicalLocation")
        if isinstance(loc, dict):
            uri = loc.get("artifactLocation", {}).get("uri", "")
            line = loc.get("region", {}).get("startLine")
            if uri.endswith(uri_end):
                yield line
        for v in node.values():
            yield from sarif_lines(v, uri_end)
    elif isinstance(node, list):
        for v in node:
            yield from sarif_lines(v, uri_end)


def marked_lines(script):
    marks = {}
    for number, line in enumerate(open(script), 1):
        m = re.search(r"# stack: (.+)$", line)
        if m:
            marks[m.group(1).strip()] = number
    return marks


mode = sys.argv[1]
if mode == "torch":
    script, text_path, json_path, sarif_path = sys.argv[2:6]
    base = os.path.basename(script)
    marks = marked_lines(script)
    text = open(text_path).read()
    doc = json.load(open(json_path))
    check("race" in text, "the race is found")
    seen = {(os.path.basename(f["file"]), f["line"]) for f in frames(doc)}
    for what in ("bucket copy", "all-reduce", "bucket allocation"):
        line = marks[what]
        check(f"{base}:{line}" in text, f"text names the {what}: {base}:{line}")
        check((base, line) in seen, f"JSON carries the {what}'s frame")
    sarif = json.load(open(sarif_path))
    lines = set(sarif_lines(sarif, base))
    for what in ("bucket copy", "all-reduce"):
        check(marks[what] in lines, f"SARIF has a physicalLocation at the {what} ({base}:{marks[what]})")
elif mode == "reducer":
    src, text_path, json_path = sys.argv[2:5]
    names = set(os.listdir(src))
    text = open(text_path).read()
    doc = json.load(open(json_path))
    check("race" in text, "the race is found")
    files = {os.path.basename(f["file"]) for f in frames(doc) if f.get("file")}
    check(bool(files & names), f"JSON frames reach the reducer's sources: {sorted(files & names)}")
    check(any(re.search(re.escape(n) + r":\d+", text) for n in names), "text names a reducer source line")
else:
    sys.exit(__doc__)
print(f"{'PASS' if failures == 0 else 'FAILED'}: {failures} failed check(s)")
sys.exit(1 if failures else 0)
