#!/usr/bin/env python3
"""Checks a `streamhaz export --perfetto` file against the Trace Event Format rules that
Perfetto's JSON importer (ui.perfetto.dev) and chrome://tracing rely on:

- strict UTF-8 JSON (no NaN), an object with a "traceEvents" array;
- every event has a known "ph", a string name, integer pid (and tid where it applies), a
  numeric ts (not for metadata);
- "X" complete events have dur >= 0 and, per (pid, tid) track, come in ts order and nest
  (a slice starting inside another ends inside it);
- flows: every id has exactly one "s" and one "f" with the same cat and name, "f" binds with
  bp "e", and each end's ts lies inside a complete event on its track (the slice it binds to);
- "i" instants have scope g, p or t; "M" metadata names every process and track used.

usage: check_perfetto.py FILE [--min-flows N] [--min-instants N] [--tracks-per-pid N]
Exit 0 when every rule holds, 1 otherwise (each broken rule printed).
"""
import argparse
import collections
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--min-flows", type=int, default=0)
    ap.add_argument("--min-instants", type=int, default=0)
    ap.add_argument("--min-processes", type=int, default=1)
    args = ap.parse_args()

    errors = []

    def bad(msg):
        if len(errors) < 50:
            errors.append(msg)

    raw = open(args.file, "rb").read()
    try:
        text = raw.decode("utf-8", errors="strict")
    except UnicodeDecodeError as e:
        print(f"{args.file}: not valid UTF-8: {e}")
        return 1

    def no_constants(name):
        raise ValueError(f"non-JSON number {name}")

    try:
        doc = json.loads(text, parse_constant=no_constants)
    except ValueError as e:
        print(f"{args.file}: not valid JSON: {e}")
        return 1
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        print(f"{args.file}: no traceEvents array")
        return 1
    events = doc["traceEvents"]

    def is_int(v):
        return isinstance(v, int) and not isinstance(v, bool)

    def is_num(v):
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    slices = collections.defaultdict(list)  # (pid, tid) -> [(ts, end)] in file order
    flows = collections.defaultdict(list)
    process_names, thread_names, used_tracks, used_pids = set(), set(), set(), set()
    instants = 0
    for n, e in enumerate(events):
        where = f"event {n}"
        if not isinstance(e, dict):
            bad(f"{where}: not an object")
            continue
        ph = e.get("ph")
        if ph not in ("X", "B", "E", "i", "I", "s", "t", "f", "M", "C"):
            bad(f"{where}: unknown ph {ph!r}")
            continue
        if not isinstance(e.get("name"), str):
            bad(f"{where}: name is not a string")
        if not is_int(e.get("pid")):
            bad(f"{where}: pid is not an integer")
            continue
        if ph == "M":
            a = e.get("args")
            if e["name"] == "process_name":
                if not isinstance(a, dict) or not isinstance(a.get("name"), str):
                    bad(f"{where}: process_name without args.name")
                process_names.add(e["pid"])
            elif e["name"] == "thread_name":
                if not isinstance(a, dict) or not isinstance(a.get("name"), str) or not is_int(e.get("tid")):
                    bad(f"{where}: thread_name without tid or args.name")
                thread_names.add((e["pid"], e.get("tid")))
            elif e["name"] in ("process_sort_index", "thread_sort_index"):
                if not isinstance(a, dict) or not is_int(a.get("sort_index")):
                    bad(f"{where}: {e['name']} without integer args.sort_index")
            else:
                bad(f"{where}: unknown metadata {e['name']!r}")
            continue
        if not is_int(e.get("tid")):
            bad(f"{where}: tid is not an integer")
            continue
        if not is_num(e.get("ts")) or e["ts"] < 0:
            bad(f"{where}: ts is not a non-negative number")
            continue
        track = (e["pid"], e["tid"])
        used_pids.add(e["pid"])
        if ph == "X":
            if not is_num(e.get("dur")) or e["dur"] < 0:
                bad(f"{where}: X without dur >= 0")
                continue
            slices[track].append((e["ts"], e["ts"] + e["dur"], n))
            used_tracks.add(track)
        elif ph in ("s", "t", "f"):
            if not is_int(e.get("id")) and not isinstance(e.get("id"), str):
                bad(f"{where}: flow without id")
                continue
            if ph == "f" and e.get("bp") != "e":
                bad(f"{where}: flow end without bp 'e'")
            flows[e["id"]].append((ph, e.get("cat"), e["name"], track, e["ts"], n))
        elif ph in ("i", "I"):
            if e.get("s", "t") not in ("g", "p", "t"):
                bad(f"{where}: instant with scope {e.get('s')!r}")
            instants += 1

    eps = 1e-6  # microseconds: ts are written with nanosecond fractions
    for track, lst in slices.items():
        stack = []
        last = -1.0
        for ts, end, n in lst:
            if ts < last - eps:
                bad(f"track {track}: event {n} at ts {ts} comes after ts {last} (not in time order)")
            last = ts
            while stack and stack[-1] <= ts + eps:
                stack.pop()
            if stack and end > stack[-1] + eps:
                bad(f"track {track}: event {n} [{ts}, {end}] overlaps the end {stack[-1]} of its enclosing slice")
            stack.append(end)
        if track not in thread_names:
            bad(f"track {track}: no thread_name metadata")

    def inside_slice(track, ts):
        for a, b, _ in slices.get(track, ()):
            if a - eps <= ts <= b + eps:
                return True
        return False

    for fid, ends in flows.items():
        kinds = sorted(p[0] for p in ends)
        if kinds.count("s") != 1 or kinds.count("f") != 1:
            bad(f"flow {fid}: ends {kinds}, expected one 's' and one 'f'")
            continue
        if len({(p[1], p[2]) for p in ends}) != 1:
            bad(f"flow {fid}: ends disagree on cat/name")
        for ph, _, _, track, ts, n in ends:
            if not inside_slice(track, ts):
                bad(f"flow {fid}: '{ph}' (event {n}) at ts {ts} binds to no slice on track {track}")

    for pid in used_pids:
        if pid not in process_names:
            bad(f"pid {pid}: no process_name metadata")
    if len(process_names) < args.min_processes:
        bad(f"{len(process_names)} processes, expected at least {args.min_processes}")
    if len(flows) < args.min_flows:
        bad(f"{len(flows)} flows, expected at least {args.min_flows}")
    if instants < args.min_instants:
        bad(f"{instants} instant events, expected at least {args.min_instants}")

    if errors:
        for m in errors:
            print(f"{args.file}: {m}")
        return 1
    print(f"{args.file}: {len(events)} events, {sum(map(len, slices.values()))} slices on {len(slices)} tracks, "
          f"{len(flows)} flows, {instants} instants: all rules hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
