"""A tensor read on a side stream is freed without `record_stream`, for streamhaz's kernel
footprint checks (the bug of DeepSpeed #7965 and Megatron-LM #5788, in plain PyTorch).

Run under torchrun (1 or 2 ranks). Each step fills `x` on the compute stream, reads it on a side
stream (`y = x * 2`, an elementwise kernel), then drops `x`. PyTorch's caching allocator gives
x's block back to the compute stream's pool at once, so the next allocation of that size, `z`,
gets the same bytes, and `z.fill_` (a kernel) overwrites them while the side stream may still be
reading. Both sides of the race are kernels.

  --fix none            as above: corrupts when the side stream is late
  --fix record-stream   x.record_stream(side) before dropping x: the allocator holds the block
                        until the side stream's work on it has completed

--side-delay-ms D sleeps on the side stream before it reads (torch.cuda._sleep), so the refill
lands first and the corruption is real. The script counts corrupted elements of `y` against the
exact values and prints the sum over ranks.
"""
import argparse
import os

import torch
import torch.distributed as dist


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--fix", choices=["none", "record-stream"], default="none")
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--elems", type=int, default=1 << 22)
    p.add_argument("--side-delay-ms", type=float, default=0.0)
    a = p.parse_args()

    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    rank, world = dist.get_rank(), dist.get_world_size()
    compute = torch.cuda.current_stream()
    side = torch.cuda.Stream()
    sleep_cycles = int(a.side_delay_ms * 1.9e6)  # H200 ~1.9 GHz

    corrupted = 0
    reused = 0
    for step in range(a.steps):
        value = float(step + rank + 1)
        x = torch.full((a.elems,), value, device="cuda")
        x_ptr = x.data_ptr()
        side.wait_stream(compute)
        with torch.cuda.stream(side):
            if sleep_cycles:
                torch.cuda._sleep(sleep_cycles)
            y = x * 2  # stack: side read
        if a.fix == "record-stream":
            x.record_stream(side)
        del x
        z = torch.empty(a.elems, device="cuda")
        reused += z.data_ptr() == x_ptr
        z.fill_(-1.0)  # stack: refill
        compute.wait_stream(side)
        corrupted += int((y != 2 * value).sum().item())
        del y, z
    torch.cuda.synchronize()
    total = torch.tensor([corrupted, reused], device="cuda")
    dist.all_reduce(total)
    if rank == 0:
        print(f"torch_freed_block: fix={a.fix} ranks={world} steps={a.steps} "
              f"reused_blocks={int(total[1].item())} corrupted_elements_all_ranks={int(total[0].item())}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
