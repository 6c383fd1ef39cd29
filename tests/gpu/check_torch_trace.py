#!/usr/bin/env python3
"""Compares a PyTorch rank's trace (JSON lines) with what torch_side_stream.py issued.
usage: check_torch_trace.py EXPECT.json TRACE.jsonl"""
import json
import sys

failures = 0


def check(ok, what):
    global failures
    print(("ok    " if ok else "FAIL  ") + what)
    failures += 0 if ok else 1


expect = json.load(open(sys.argv[1]))
rows = [json.loads(line) for line in open(sys.argv[2])]
header, records, eof = rows[0]["header"], rows[1:-1], rows[-1]
check(eof["clean_end"], f"trace ends cleanly ({eof['records']} records)")
check(header.get("rank") == expect["rank"] and header.get("world_size") == expect["world"], "header rank and world size")
streams = {r["handle"]: r["stream"] for r in records if r["type"] == "stream_create" and r["flags"] & 6 == 0}
side, main = streams.get(expect["side"]), streams.get(expect["main"])
legacy = [r["stream"] for r in records if r["type"] == "stream_create" and r["flags"] & 2]
if main is None and expect["main"] == 0 and legacy:
    main = legacy[0]
check(side is not None and main is not None, f"side stream {side}, main stream {main}")
ar = [r for r in records if r["type"] == "nccl" and r["kind"] == "ncclAllReduce" and int(r["recvbuf"], 16) == expect["bucket"]]
check(len(ar) == expect["iters"], f"all_reduce calls on the bucket: {len(ar)} == {expect['iters']}")
check(all(r["stream"] == side and r["count"] == expect["count"] and r["sendbuf"] == r["recvbuf"]
          and r["nranks"] == expect["world"] and r["rank"] == expect["rank"] for r in ar),
      "all on the side stream, in place, full count, rank facts")
seqs = [r["comm_seq"] for r in ar]
check(seqs == sorted(seqs) and len(set(seqs)) == len(seqs), f"per-communicator sequence increases: {seqs}")
timed = {r["op_seq"] for r in records if r["type"] == "timing"}
check(all(r["seq"] in timed for r in ar), "every all_reduce has GPU timestamps from its NCCL kernel")
cp = [r for r in records if r["type"] == "memcpy" and int(r["dst"], 16) == expect["bucket"] and r["width"] == expect["bytes"]]
check(len(cp) == expect["iters"] and all(r["stream"] == main and r["kind"] == "DtoD" for r in cp),
      f"copy_ into the bucket: {len(cp)} device-to-device copies on the main stream")
check(all(r["seq"] in timed for r in cp), "every copy has GPU timestamps")
waits_side = [r for r in records if r["type"] == "event_wait" and r["stream"] == side]
waits_main = [r for r in records if r["type"] == "event_wait" and r["stream"] == main]
check(len(waits_side) >= expect["iters"] and len(waits_main) >= expect["iters"],
      f"wait_stream edges: side waits {len(waits_side)}, main waits {len(waits_main)}")
allocs = [r for r in records if r["type"] == "alloc"]
nvtx = [r for r in records if r["type"] in ("kernel", "memcpy", "nccl") and r["nvtx"]]
check(not nvtx, f"no NVTX path on operations of a program without NVTX ranges ({len(nvtx)})")
check(len(allocs) >= 1, f"caching allocator segments seen: {len(allocs)} allocations")
metas = [json.loads(r["json"]) for r in records if r["type"] == "meta"]
check(any("nccl_version" in m for m in metas), f"NCCL version noted: {metas}")
print(f"{'PASS' if failures == 0 else 'FAILED'}: {failures} failed check(s)")
sys.exit(1 if failures else 0)
