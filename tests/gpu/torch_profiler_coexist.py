"""streamhaz beside PyTorch's profiler (torch.profiler, which subscribes to CUPTI through Kineto).

CUPTI takes one subscriber per process. This job runs 6 small steps (a matmul on the current
stream, a reduction on a side stream joined back) and opens torch.profiler either before CUDA
starts (`--profile-at start`: Kineto subscribes first) or for steps 2 and 3 only (`--profile-at
middle`: streamhaz's injection subscribed first). It prints the steps' result (which must not
change under any tracer) and how many CUDA kernels the profiler saw, so that both tools can be
judged from one run: scripts/gpu/profiler_coexist.sh.
"""
import argparse

import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--profile-at", choices=["start", "middle", "none"], default="middle")
    a = p.parse_args()
    prof = None
    if a.profile_at == "start":
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        prof.__enter__()
    gen = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(1024, 1024, device="cuda", generator=gen)
    w = torch.randn(1024, 1024, device="cuda", generator=gen)
    side = torch.cuda.Stream()
    total = 0.0
    for step in range(6):
        if a.profile_at == "middle" and step == 2:
            prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
            prof.__enter__()
        torch.cuda.nvtx.range_push("step")
        y = (x @ w).relu().sum()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            z = (x * 2).sum()
        torch.cuda.current_stream().wait_stream(side)
        total += float(y + z)
        torch.cuda.nvtx.range_pop()
        if a.profile_at == "middle" and step == 3:
            prof.__exit__(None, None, None)
    if a.profile_at == "start":
        prof.__exit__(None, None, None)
    kernels = 0
    if prof is not None:
        kernels = sum(1 for e in prof.events() if e.device_type == DeviceType.CUDA)
    print(f"torch_profiler_coexist: profile_at={a.profile_at} total={total:.4f} profiler_cuda_events={kernels}")


if __name__ == "__main__":
    main()
