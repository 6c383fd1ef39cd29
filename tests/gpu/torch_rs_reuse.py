"""A gradient reduce-scattered on a communication stream is freed without `record_stream`, and
its block is refilled on the compute stream while the reduce-scatter may still read it (the
allocator-lifetime class of DeepSpeed #7965), for streamhaz's real-workload suite.

Run under torchrun (1 or more ranks). Each step fills a gradient `g` on the compute stream,
reduce-scatters it on a communication stream (`dist.reduce_scatter_tensor`), drops `g`, and
fills a new tensor of the same size on the compute stream: PyTorch's caching allocator hands it
g's block at once.

  --fix none            as above
  --fix record-stream   g.record_stream(comm) before dropping g: the allocator keeps the block
                        until the communication stream's work on it has completed

--comm-delay-ms D sleeps on the communication stream before each reduce-scatter, so the refill
lands first and the corruption is real. The script counts elements of the reduce-scatter output
that differ from the exact sum and prints the count summed over ranks.
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
    p.add_argument("--comm-delay-ms", type=float, default=0.0)
    a = p.parse_args()

    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    rank, world = dist.get_rank(), dist.get_world_size()
    compute = torch.cuda.current_stream()
    comm = torch.cuda.Stream()
    sleep_cycles = int(a.comm_delay_ms * 1.9e6)  # H200 ~1.9 GHz
    out = torch.empty(a.elems // world, device="cuda")

    corrupted = torch.zeros((), dtype=torch.int64, device="cuda")
    reused = 0
    for step in range(a.steps):
        value = float(step + 1)
        g = torch.full((a.elems,), value, device="cuda")  # stack: gradient
        g_ptr = g.data_ptr()
        comm.wait_stream(compute)
        with torch.cuda.stream(comm):
            if sleep_cycles:
                torch.cuda._sleep(sleep_cycles)
            dist.reduce_scatter_tensor(out, g)  # stack: reduce-scatter
        if a.fix == "record-stream":
            g.record_stream(comm)
        del g
        z = torch.empty(a.elems, device="cuda")
        reused += z.data_ptr() == g_ptr
        z.fill_(-1.0)  # stack: refill
        compute.wait_stream(comm)
        corrupted += (out != value * world).sum()
        del z
    torch.cuda.synchronize()
    total = torch.stack([corrupted, torch.tensor(reused, device="cuda")])
    dist.all_reduce(total)
    if rank == 0:
        print(f"torch_rs_reuse: fix={a.fix} ranks={world} steps={a.steps} "
              f"reused_blocks={int(total[1].item())} corrupted_elements_all_ranks={int(total[0].item())}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
