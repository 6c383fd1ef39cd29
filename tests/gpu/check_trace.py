#!/usr/bin/env python3
"""Compares a trace (as JSON lines from trace_to_jsonl) with what tracer_probe says it issued.

usage: check_trace.py EXPECT.json TRACE.jsonl [--peer OTHER_RANK.jsonl]
Checks operation counts per stream, copy/set byte ranges, NCCL calls (buffers, counts, kinds,
per-communicator sequence, rank facts), the event edge s1 -> s2, NVTX paths, names, and that
every executed operation has GPU timestamps. Prints one line per check; exits 1 on a failure.
"""
import json
import sys
from collections import Counter

failures = 0


def check(ok, what):
    global failures
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures += 1


def P(x):
    """Addresses are written as hex strings."""
    return int(x, 16) if isinstance(x, str) else x


def load(path):
    rows = [json.loads(line) for line in open(path)]
    return rows[0]["header"], rows[1:-1], rows[-1]


def main():
    expect = json.load(open(sys.argv[1]))
    header, records, eof = load(sys.argv[2])
    check(eof["clean_end"] and not eof["truncated"], f"trace ends cleanly ({eof['records']} records)")
    want_rank = expect["rank"] if expect["world"] > 1 else -1  # no launcher variables: no rank
    check(header.get("rank") == want_rank, f"header rank {header.get('rank')} == {want_rank}")
    check(len(header.get("devices", [])) >= 1 and "H200" in header["devices"][0].get("name", ""),
          f"header devices: {[d.get('name') for d in header.get('devices', [])]}")
    check("cuda_driver" in header, f"header cuda_driver={header.get('cuda_driver')} cuda_runtime={header.get('cuda_runtime')}")

    strings = {r["id"]: r["text"] for r in records if r["type"] == "string"}
    streams = {r["stream"]: r for r in records if r["type"] == "stream_create"}
    by_handle = {r["handle"]: r["stream"] for r in streams.values() if r["flags"] & 6 == 0}
    sid = {"s1": by_handle.get(expect["s1"]), "s2": by_handle.get(expect["s2"])}
    legacy = [s for s, r in streams.items() if r["flags"] & 2 and r["device"] == expect["rank"]]
    per_thread = [s for s, r in streams.items() if r["flags"] & 4]
    sid["legacy"] = legacy[0] if legacy else None
    check(sid["s1"] is not None and sid["s2"] is not None, f"created streams found: {sid}")
    check(streams.get(sid["s1"], {}).get("priority") == -1 and streams.get(sid["s1"], {}).get("flags") == 1,
          "s1 is non-blocking with priority -1")
    check(len(per_thread) == 1, f"one per-thread default stream ({len(per_thread)})")

    ops = Counter((r["type"], r.get("stream")) for r in records)
    names = {r["stream"]: strings.get(r["name"]) for r in records if r["type"] == "stream_name"}
    check(names.get(sid["s1"]) == "side stream" and names.get(sid["s2"]) == "main stream", f"stream names {names}")
    bufnames = [strings.get(r["name"]) for r in records if r["type"] == "buffer_name"]
    check("buffer a" in bufnames, f"buffer names {bufnames}")

    timed = {r["op_seq"] for r in records if r["type"] == "timing"}
    in_capture = set()
    capturing = False
    for r in records:
        if r["type"] == "capture_begin":
            capturing = True
        elif r["type"] == "capture_end":
            capturing = False
        elif capturing and "seq" in r:
            in_capture.add(r["seq"])

    type_of = {"kernel": "kernel", "memset": "memset", "memcpy": "memcpy", "hostfunc": "host_func",
               "record": "event_record", "wait": "event_wait", "graph": "graph_launch", "streamsync": "stream_sync",
               "streamquery": "stream_query"}
    memcpys = [r for r in records if r["type"] == "memcpy"]
    memsets = [r for r in records if r["type"] == "memset"]
    nccl = [r for r in records if r["type"] == "nccl"]
    exact = expect["nccl"] == 0  # NCCL's own init work also uses the legacy stream
    for e in expect["ops"]:
        op, st = e["op"], e.get("stream")
        if op in ("kernel", "hostfunc", "record", "wait", "graph", "streamsync", "streamquery"):
            n = ops[(type_of[op], sid[st])]
            if op == "record" and not exact:  # NCCL records its own events on the user's stream
                check(n >= e["count"], f"{op} on {st}: {n} >= {e['count']} (NCCL's own records included)")
            else:
                check(n == e["count"], f"{op} on {st}: {n} == {e['count']}")
        elif op == "memcpy":
            hit = [m for m in memcpys if m["stream"] == sid[st] and P(m["dst"]) == e["dst"] and P(m["src"]) == e["src"]
                   and m["width"] == e["width"] and m["rows"] == e["rows"] and m["kind"] == e["kind"]]
            check(len(hit) == 1, f"memcpy on {st} {e['kind']} {e['width']}x{e['rows']} bytes, exact range")
            if st == "legacy" and hit:
                check(hit[0]["flags"] == 3, f"legacy copy flagged sync + pageable ({hit[0]['flags']})")
        elif op == "memset":
            hit = [m for m in memsets if m["stream"] == sid[st] and P(m["dst"]) == e["dst"] and m["width"] == e["width"]]
            check(len(hit) == 1, f"memset on {st} of {e['width']} bytes, exact range")
        elif op == "eventsync":
            check(ops[("event_sync", None)] == e["count"], f"event syncs {ops[('event_sync', None)]}")
        elif op == "eventquery":
            q = [r for r in records if r["type"] == "event_query" and r["complete"]]
            check(len(q) >= e["count"], f"complete event queries {len(q)}")
        elif op == "devicesync":
            n = ops[("device_sync", None)]
            check(n == e["count"] if exact else n >= e["count"], f"device syncs {n}")
        elif op == "alloc_async":
            a = [r for r in records if r["type"] == "alloc" and r["kind"] == "async" and r["stream"] == sid[st]]
            f = [r for r in records if r["type"] == "free" and r["kind"] == "async" and r["stream"] == sid[st]]
            check(len(a) == 1 and P(a[0]["ptr"]) == e["ptr"] and a[0]["bytes"] == e["bytes"] and len(f) == 1,
                  "stream-ordered alloc and free on s1")
        elif op == "free":
            f = [r for r in records if r["type"] == "free" and P(r["ptr"]) == e["ptr"] and r["kind"] == "device"]
            check(len(f) == 1, "cudaFree recorded")
        elif op == "nccl":
            hit = [r for r in nccl if r["stream"] == sid[st] and r["kind"] == e["kind"] and P(r["sendbuf"]) == e["send"]
                   and P(r["recvbuf"]) == e["recv"] and r["count"] == e["count"] and r["comm_seq"] == e["comm_seq"]]
            check(len(hit) == 1 and hit[0]["nranks"] == expect["world"] and hit[0]["rank"] == expect["rank"],
                  f"{e['kind']} on {st} count {e['count']} comm_seq {e['comm_seq']}")
            if hit:
                check(hit[0]["seq"] in timed, f"{e['kind']} comm_seq {e['comm_seq']} has GPU timestamps")

    # Legacy stream: the synchronous copy, set and one kernel (more under NCCL, which uses it too).
    lk = ops[("kernel", sid["legacy"])]
    check(lk == 1 if exact else lk >= 1, f"kernels on the legacy stream: {lk}")
    check(ops[("kernel", per_thread[0] if per_thread else None)] == 1, "one kernel on the per-thread stream")

    # The event edge: s1 records e, s2 waits on the same e.
    recs = [r for r in records if r["type"] == "event_record" and r["stream"] == sid["s1"]]
    waits = [r for r in records if r["type"] == "event_wait" and r["stream"] == sid["s2"]]
    check(recs and waits and recs[0]["event"] == waits[0]["event"] and recs[0]["seq"] < waits[0]["seq"],
          "event edge s1 -> s2 (same event id, record before wait)")

    # Timestamps on every executed operation of the probe's streams.
    executed = [r for r in records if r["type"] in ("kernel", "memcpy", "memset") and r["stream"] in
                (sid["s1"], sid["s2"]) and r["seq"] not in in_capture]
    missing = [r["seq"] for r in executed if r["seq"] not in timed]
    check(not missing, f"GPU timestamps on {len(executed) - len(missing)}/{len(executed)} executed ops of s1/s2")
    graphs = [r for r in records if r["type"] == "graph_launch"]
    check(all(g["seq"] in timed for g in graphs) and all(g["graph"] != 0 for g in graphs),
          "graph launches timed and tied to the captured graph")
    check(len(in_capture) >= 2, f"captured kernels between capture begin/end: {len(in_capture)}")

    # NVTX: the side-stream kernels carry "probe/side".
    side = [r for r in records if r["type"] == "kernel" and r["stream"] == sid["s1"]]
    check(side and all(strings.get(r["nvtx"]) == "probe/side" for r in side),
          f"NVTX path on side kernels: {set(strings.get(r['nvtx']) for r in side)}")

    seqs = [r["seq"] for r in records if "seq" in r]
    check(all(a < b for a, b in zip(seqs, seqs[1:])), "sequence numbers increase through the file")

    if len(sys.argv) > 4 and sys.argv[3] == "--peer":
        _, peer_records, _ = load(sys.argv[4])
        mine = sorted((r["comm_seq"], r["comm"], r["kind"]) for r in nccl)
        theirs = sorted((r["comm_seq"], r["comm"]) for r in peer_records if r["type"] == "nccl")
        check([m[:2] for m in mine] == theirs, "both ranks agree on communicator hash and sequence numbers")

    print(f"{'PASS' if failures == 0 else 'FAILED'}: {failures} failed check(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
