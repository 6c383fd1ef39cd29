#!/usr/bin/env python3
"""Golden test: `streamhaz check` on one bundled trace folder gives the manifest's verdict.

usage: check_golden.py STREAMHAZ TRACES_DIR NAME FINDINGS_SCHEMA [oversync|no-oversync]

A manifest line may name the trace folder apart from the test (`folder`) and add arguments for
`check` (`check_args`; paths starting with traces/ are taken relative to TRACES_DIR's parent).

expect "race": exit 1, and a race finding on an ipg_buffer between a copy on the compute
stream and the all-reduce (or the copy-out that reads the bucket) on the reduction side; with
`kernel_race`, a race (on any buffer) with a kernel on at least one side instead;
expect "possible": exit 0, no race, and a possible race with a kernel on one side;
expect "clean": exit 0 with --fail-on races, and no race or possible race. The optional last
argument holds the over-synchronisation verdict too: some oversync finding, or none (and for a
clean trace, exit 0 with the default --fail-on). The JSON report is validated against its schema.
`unannotated` (a run with no buffer or stream names): the race is told by its operations alone.
`memo` (the exact tier's steady phase): some kernels have memo-tier footprints.
`stack_lines` ({what: "file:line"}, from the script's `# stack:` markers when it was captured):
the text report and a JSON frame must name each line.
`tensor_lines` ({what: "file:line"}): the line that allocated a finding's tensor, from PyTorch's allocator
history (the text's "a tensor allocated at" and the JSON tensor stack).
`oversync_findings` ([{"title": TEXT, "sync_line": "file:line"}]): exactly these over-synchronisation
findings, each told by a part of its title and a frame of the synchronisation's call stack.
`sync_sites` ([{"what": TEXT, "verdict": V, "min_instances": N}]): a judged site of that call, with at
least N instances, has verdict V (the site of that call with the most instances, if several).
"""
import json
import os
import subprocess
import sys

import jsonschema

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from report_frames import frames  # noqa: E402


def line_problems(text, report, lines, frames_of, said_as="", found_in="any stack"):
    """Each `what: file:line` of `lines` must be named in the check's text report (after
    `said_as`) and be a frame among `frames_of(finding)` of some JSON finding (file compared by its
    last component: the trace holds the path the script was run by)."""
    seen = {(f["file"].rsplit("/", 1)[-1], f["line"]) for x in report["findings"] for f in frames_of(x)}
    problems = []
    for what, where in lines.items():
        path, line = where.rsplit(":", 1)
        base = path.rsplit("/", 1)[-1]
        if f"{said_as}{base}:{line}" not in text:
            problems.append(f"the text report does not name the {what} ({said_as}{base}:{line})")
        if (base, int(line)) not in seen:
            problems.append(f"no JSON finding carries the {what} ({base}:{line}) in {found_in}")
    return problems


def tensor_frames(finding):
    """The frames of the stack that allocated a finding's tensor (from the allocator history)."""
    return (finding["buffer"].get("tensor") or {}).get("stack", [])


def oversync_problems(entry, over, report):
    """The manifest's over-synchronisation findings and site verdicts (see the module's text)."""
    problems = []
    want = entry.get("oversync_findings")
    if want is not None:
        if len(over) != len(want):
            problems.append(f"expected {len(want)} over-synchronisation findings, got {len(over)}: "
                            f"{[x['title'] for x in over]}")
        for w in want:
            path, line = w["sync_line"].rsplit(":", 1)
            base = path.rsplit("/", 1)[-1]
            if not any(w["title"] in x["title"] and any(
                    f.get("file", "").rsplit("/", 1)[-1] == base and f.get("line") == int(line)
                    for f in (x.get("sync") or {}).get("stack", [])) for x in over):
                problems.append(f"no over-synchronisation finding '{w['title']}' for the call at {base}:{line}")
    for w in entry.get("sync_sites", []):
        sites = [x for x in report.get("sync_sites", []) if x["what"] == w["what"]]
        site = max(sites, key=lambda x: x["instances"], default=None)
        if not site or site["instances"] < w.get("min_instances", 1):
            problems.append(f"no judged site {w['what']} with {w.get('min_instances', 1)} instances or more")
        elif site["verdict"] != w["verdict"]:
            problems.append(f"site {w['what']} ({site['instances']}x): expected {w['verdict']}, got {site['verdict']}")
    return problems


def main():
    streamhaz, traces, name, schema_path = sys.argv[1:5]
    oversync = sys.argv[5] if len(sys.argv) > 5 else None
    with open(f"{traces}/manifest.jsonl") as f:
        entry = next(e for e in map(json.loads, f) if e["name"] == name)
    root = traces.rsplit("/", 1)[0] if "/" in traces.rstrip("/") else "."
    extra = [f"{root}/{a}" if a.startswith("traces/") else a for a in entry.get("check_args", [])]
    folder = entry.get("folder", name)
    run = subprocess.run([streamhaz, "check", "--format", "json", "--fail-on", "races", f"{traces}/{folder}", *extra],
                         capture_output=True, text=True)
    problems = []
    if run.returncode == 2 or not run.stdout.strip():
        print(run.stderr)
        return 1
    report = json.loads(run.stdout)
    with open(schema_path) as f:
        jsonschema.validate(report, json.load(f))
    races = [x for x in report["findings"] if x["kind"] == "race"]
    possible = [x for x in report["findings"] if x["kind"] == "possible-race"]
    over = [x for x in report["findings"] if x["kind"] == "oversync"]

    def has_kernel(x):
        return x["first"]["kind"] == "kernel" or x["second"]["kind"] == "kernel"

    if oversync == "oversync" and not over:
        problems.append("expected an over-synchronisation finding, got none")
    if oversync == "no-oversync" and over:
        problems.append(f"expected no over-synchronisation finding, got {len(over)}: {over[0]['title']}")
    # A trace of the exact tier's steady phase: some launches took their footprint from the memo.
    if entry.get("memo") and not report["summary"]["kernels_by_tier"].get("memo"):
        problems.append("expected kernels with memo-tier footprints, got none")
    if entry["expect"] == "clean":
        if run.returncode != 0 or races or possible:
            problems.append(f"expected clean, got exit {run.returncode}, {len(races)} races, {len(possible)} possible")
    elif entry["expect"] == "possible":
        if run.returncode != 0 or races:
            problems.append(f"expected exit 0 and no race, got exit {run.returncode} and {len(races)} races")
        if not any(has_kernel(x) for x in possible):
            problems.append("no possible race with a kernel on one side")
    elif entry.get("kernel_race"):
        if run.returncode != 1:
            problems.append(f"expected exit 1, got {run.returncode}")
        if not any(has_kernel(x) for x in races):
            problems.append("no race with a kernel on one side")
    else:
        if run.returncode != 1:
            problems.append(f"expected exit 1, got {run.returncode}")
        # An unannotated run names no buffer or stream: the race is told by its operations.
        unannotated = entry.get("unannotated", False)
        ipg = races if unannotated else [x for x in races if x["buffer"]["name"].startswith("ipg_buffer")]
        if not ipg:
            problems.append("no race on an ipg_buffer")

        def is_compute_copy(op):
            return ((unannotated or op["stream_name"] == "compute stream") and op["kind"].startswith("memcpy")
                    and op["role"] == "write")

        def is_reduction_side(op):
            return "ncclAllReduce" in op["kind"] or (not unannotated and op["stream_name"] == "reduction stream")

        if not any((is_compute_copy(x["second"]) and is_reduction_side(x["first"])) or
                   (is_compute_copy(x["first"]) and is_reduction_side(x["second"])) for x in ipg):
            problems.append("no ipg_buffer race between the compute-stream copy and the reduction side")
        if not any("ncclAllReduce" in x["first"]["kind"] or "ncclAllReduce" in x["second"]["kind"] for x in ipg):
            problems.append("no ipg_buffer race names the ncclAllReduce")
    if entry.get("stack_lines") or entry.get("tensor_lines"):
        text = subprocess.run([streamhaz, "check", "--fail-on", "none", f"{traces}/{folder}", *extra],
                              capture_output=True, text=True).stdout
        problems += line_problems(text, report, entry.get("stack_lines", {}), frames)
        problems += line_problems(text, report, entry.get("tensor_lines", {}), tensor_frames,
                                  "a tensor allocated at ", "a tensor's allocation stack")
    problems += oversync_problems(entry, over, report)
    if problems:
        print(f"{name}: {entry.get('command', '')}")
        for x in report["findings"][:5]:
            print(" ", x["title"], "|", x["first"]["kind"], x["first"]["stream_name"], "|",
                  x["second"]["kind"], x["second"]["stream_name"])
        for p in problems:
            print("FAILED:", p)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
