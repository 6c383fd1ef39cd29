"""Host time per PyTorch kernel launch, for the tracer's per-launch budget with Python stacks.

Launches a one-element in-place add (one kernel per call) in batches of 256 from call chains
of two depths, SHALLOW and DEEP Python frames (a training step's stack is some 20 to 40
frames), batches of the two depths interleaved in one process, and prints for each the median
and 10th percentile over batches of ns per launch. Run it untraced and under `streamhaz run`
with --stacks off / auto / all (scripts/gpu/stacks_check.sh does). Across processes the launch
time moves by up to a microsecond (CPU placement, clocks); within one process the difference
between the depths does not, so `deep_minus_shallow` under --stacks auto against the same
difference under --stacks off is the cost of walking and interning the extra frames.

usage: python3 torch_launch_overhead.py [BATCHES] [DEEP] [SHALLOW]
"""
import statistics
import sys
import time

import torch


def launches(x, n):
    for _ in range(n):
        x.add_(1.0)


def nested(depth, fn, *args):
    if depth <= 0:
        return fn(*args)
    return nested(depth - 1, fn, *args)


def main():
    batches = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    deep = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    shallow = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    x = torch.zeros(1, device="cuda")
    for depth in (shallow, deep):
        nested(depth, launches, x, 2048)  # warm up: kernels loaded, stacks interned
    torch.cuda.synchronize()
    per_launch = {shallow: [], deep: []}
    for b in range(2 * batches):
        depth = deep if b % 2 else shallow
        # An empty queue before each batch: 256 launches fit in it, so the time is the host's
        # launch path alone, never the GPU draining a full queue.
        torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        nested(depth, launches, x, 256)
        per_launch[depth].append((time.perf_counter_ns() - t0) / 256)
    torch.cuda.synchronize()
    p10 = {d: statistics.quantiles(v, n=10)[0] for d, v in per_launch.items()}
    # The 10th percentile is what scheduling noise disturbs least: compare it across runs.
    print(f"launch_ns_median={statistics.median(per_launch[deep]):.0f} launch_ns_p10={p10[deep]:.0f} "
          f"shallow_ns_p10={p10[shallow]:.0f} deep_minus_shallow={p10[deep] - p10[shallow]:.0f} "
          f"depth={deep} shallow={shallow}")


if __name__ == "__main__":
    main()
