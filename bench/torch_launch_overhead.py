"""Host time per PyTorch kernel launch, for the tracer's per-launch budget with Python stacks.

Launches a one-element in-place add (one kernel per call) in batches of 256 from a call chain
DEPTH Python frames deep (a training step's stack is some 20 to 40 frames), and prints the
median and 10th percentile over batches of ns per launch. Run it untraced and under `streamhaz run` with
--stacks off / auto / all and subtract (scripts/gpu/stacks_check.sh does).

usage: python3 torch_launch_overhead.py [BATCHES] [DEPTH]
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
    depth = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    x = torch.zeros(1, device="cuda")
    nested(depth, launches, x, 2048)  # warm up: kernels loaded, caches filled
    torch.cuda.synchronize()
    per_launch = []
    for _ in range(batches):
        # An empty queue before each batch: 256 launches fit in it, so the time is the host's
        # launch path alone, never the GPU draining a full queue.
        torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        nested(depth, launches, x, 256)
        per_launch.append((time.perf_counter_ns() - t0) / 256)
    torch.cuda.synchronize()
    q = statistics.quantiles(per_launch, n=10)
    # The 10th percentile is what scheduling noise disturbs least: compare it across runs.
    print(f"launch_ns_median={statistics.median(per_launch):.0f} launch_ns_p10={q[0]:.0f} "
          f"p90={q[-1]:.0f} depth={depth}")


if __name__ == "__main__":
    main()
