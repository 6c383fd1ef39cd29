"""A CUDA-graph step (torch.cuda.graph capture, then replay) with its input staged on a side
stream, for streamhaz's real-workload suite.

The graph computes y = (2x) + (x + 1) on two branches: the capture forks onto a second stream
through an event and joins back, so captured work has cross-stream dependencies of its own.
Every step replays the graph on the compute stream, then stages the next step's input into the
graph's static input `x` with a copy on a side stream.

  --fix none     the side stream copies the next input into x without waiting for the replay:
                 the copy can land while the replay still reads x (corrupts under --delay-ms)
  --fix wait     the side stream waits for the compute stream (the replay) before it copies

--delay-ms D sleeps on the compute stream before each replay (torch.cuda._sleep), so that the
racy copy lands first and the corruption is real. The script counts elements of y that differ
from 3 * v + 1 (v: the step's input value) and prints the count.
"""
import argparse
import os

import torch
import torch.distributed as dist


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--fix", choices=["none", "wait"], default="none")
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--elems", type=int, default=1 << 22)
    p.add_argument("--delay-ms", type=float, default=0.0)
    a = p.parse_args()

    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    sleep_cycles = int(a.delay_ms * 1.9e6)  # H200 ~1.9 GHz
    compute = torch.cuda.current_stream()
    side = torch.cuda.Stream()
    branch = torch.cuda.Stream()

    # Every step's input, made before the capture (no allocation while capturing).
    inputs = [torch.full((a.elems,), float(s + 1), device="cuda") for s in range(a.steps + 1)]
    x = torch.empty(a.elems, device="cuda")
    x.copy_(inputs[0])

    def step_fn(x):
        doubled = x * 2  # stack: capture branch 1
        branch.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(branch):
            plus_one = x + 1  # stack: capture branch 2
        torch.cuda.current_stream().wait_stream(branch)
        return doubled + plus_one

    # Warm-up on a side stream, as torch.cuda.graph's documentation asks.
    warm = torch.cuda.Stream()
    warm.wait_stream(compute)
    with torch.cuda.stream(warm):
        for _ in range(2):
            step_fn(x)
    compute.wait_stream(warm)
    torch.cuda.synchronize()

    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = step_fn(x)

    corrupted = torch.zeros((), dtype=torch.int64, device="cuda")
    for s in range(a.steps):
        if sleep_cycles:
            torch.cuda._sleep(sleep_cycles)
        g.replay()  # stack: replay
        if a.fix == "wait":
            side.wait_stream(compute)
        with torch.cuda.stream(side):
            x.copy_(inputs[s + 1])  # stack: stage next input
        compute.wait_stream(side)
        corrupted += (y != 3.0 * (s + 1) + 1.0).sum()
    torch.cuda.synchronize()
    print(f"torch_cuda_graph: fix={a.fix} steps={a.steps} corrupted_elements_all_ranks={int(corrupted.item())}")


if __name__ == "__main__":
    main()
