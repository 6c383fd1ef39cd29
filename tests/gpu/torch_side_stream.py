"""PyTorch workload for the tracer's GPU test, under torchrun with 2 ranks:
all_reduce on a side stream, the caching allocator, copy_ into a preallocated buffer.
Writes what it issued to $PROBE_EXPECT_DIR/torch_expect<rank>.json for check_torch_trace.py."""
import json
import os

import torch
import torch.distributed as dist

rank = int(os.environ["RANK"])
local = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local)
dist.init_process_group("nccl", device_id=torch.device("cuda", local))
side = torch.cuda.Stream()
main = torch.cuda.current_stream()
n, iters = 1 << 20, 5
bucket = torch.empty(n, device="cuda")  # preallocated, reused every step
grads = []
for step in range(iters):
    g = torch.full((n,), float(step + rank), device="cuda")  # caching allocator
    bucket.copy_(g)  # device-to-device copy into the preallocated buffer
    side.wait_stream(main)
    with torch.cuda.stream(side):
        dist.all_reduce(bucket)
    main.wait_stream(side)
    grads.append(bucket.sum().item())
torch.cuda.synchronize()
expected = {
    "rank": rank, "world": dist.get_world_size(), "iters": iters,
    "bucket": bucket.data_ptr(), "bytes": bucket.numel() * 4, "count": bucket.numel(),
    "side": side.cuda_stream, "main": main.cuda_stream,
    "sums": grads,
}
with open(os.path.join(os.environ["PROBE_EXPECT_DIR"], f"torch_expect{rank}.json"), "w") as f:
    json.dump(expected, f)
dist.destroy_process_group()
print(f"torch rank {rank}: sums {grads}")
