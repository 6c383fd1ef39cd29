"""DeepSpeed ZeRO-2's IPG bucket pattern in plain PyTorch, for streamhaz's end-to-end traces.

Run under torchrun (2 ranks). Each step's "backward" produces gradients layer by layer on the
compute (current) stream and copies them into one of two preallocated IPG buffers; a full
bucket is all-reduced on a side stream, then copied into this rank's fp32 partition.

  --sync race   the reduction stream waits for the compute stream before each flush, but the
                compute stream never waits before writing a buffer again (DeepSpeed 0.8-0.14.2)
  --sync event  one event per buffer, recorded on the reduction stream after the buffer's last
                read and waited on by the compute stream before the buffer's next write

--no-names leaves buffers and streams unnamed, as a user's unannotated run would be: findings then
name them by their allocation line and creation line. Lines marked `# stack:` are the ones the GPU
checks expect in the findings' stacks.

--reused-segment first allocates and frees a larger scratch tensor, so the buckets are carved out
of a cached caching-allocator segment that another line requested (as DeepSpeed's are): only the
allocator's own history (`streamhaz run --allocator-history on`) then names the bucket's line.

--comm-delay-ms D sleeps on the reduction stream before each all-reduce (torch.cuda._sleep), so
the race corrupts for real; the script counts corrupted partition elements against the exact
values, like streamhaz-reducer does.
"""
import argparse
import ctypes
import os
import statistics
import time

import torch
import torch.distributed as dist

from tracer_ab import tracer_ab_line, tracer_pause


def tracer_hook(name):
    """The streamhaz tracer's naming function, when it is loaded (streamhaz run); else None."""
    try:
        return getattr(ctypes.CDLL(None), name)
    except (AttributeError, OSError):
        return None


name_buffer = tracer_hook("streamhaz_tracer_name_buffer")
name_stream = tracer_hook("streamhaz_tracer_name_stream")


def name(t, label):
    if name_buffer:
        name_buffer(ctypes.c_void_p(t.data_ptr()), ctypes.c_size_t(t.numel() * t.element_size()), label.encode())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sync", choices=["race", "event"], default="race")
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--layer-elems", type=int, default=1 << 20)
    p.add_argument("--layers-per-bucket", type=int, default=2)
    p.add_argument("--comm-delay-ms", type=float, default=0.0)
    p.add_argument("--no-names", action="store_true")
    p.add_argument("--reused-segment", action="store_true")
    p.add_argument("--tracer-ab", type=int, default=0, metavar="WARMUP",
                   help="under streamhaz run: after WARMUP steps, pause the tracer on every other step and "
                        "print the traced and paused steps' medians (bench/real_step_cost.sh)")
    a = p.parse_args()
    pause = tracer_pause() if a.tracer_ab else None
    global name_buffer, name_stream
    if a.no_names:
        name_buffer = name_stream = None

    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    rank, world = dist.get_rank(), dist.get_world_size()

    compute = torch.cuda.current_stream()
    reduction = torch.cuda.Stream()  # stack: reduction stream
    if name_stream:
        name_stream(ctypes.c_void_p(reduction.cuda_stream), b"reduction stream")
        name_stream(ctypes.c_void_p(compute.cuda_stream), b"compute stream")
    bucket_elems = a.layer_elems * a.layers_per_bucket
    if a.reused_segment:
        scratch = torch.empty(3 * bucket_elems, device="cuda")  # stack: segment request
        del scratch
    ipg = [torch.empty(bucket_elems, device="cuda") for _ in range(2)]  # stack: bucket allocation
    for i, b in enumerate(ipg):
        name(b, f"ipg_buffer[{i}]")
    partition = torch.zeros(a.layers * a.layer_elems // world, device="cuda")
    name(partition, "grad_partition")
    weight = torch.randn(1024, 1024, device="cuda")
    freed = [torch.cuda.Event() for _ in range(2)]
    used = [False, False]
    sleep_cycles = int(a.comm_delay_ms * 1.9e6)  # H200 ~1.9 GHz

    corrupted = 0
    step_ms, traced_ms, paused_ms = [], [], []
    for step in range(a.steps):
        paused = pause is not None and step >= a.tracer_ab and (step - a.tracer_ab) % 2 == 1
        if pause is not None:
            pause(paused)  # outside the timed part: switching costs CUPTI calls
        started = time.perf_counter()
        index, offset, flushed = 0, 0, 0
        for layer in reversed(range(a.layers)):
            weight = torch.tanh(weight @ weight) * 0.5  # stand-in for the layer's backward GEMM
            grad = torch.arange(a.layer_elems, device="cuda", dtype=torch.float32)
            grad = (grad + 7 * layer + 5 * step + 3 * rank) % 31 - 15  # exact small integers
            if a.sync == "event" and used[index] and offset == 0:
                compute.wait_event(freed[index])
            ipg[index][offset:offset + a.layer_elems].copy_(grad)  # stack: bucket copy
            offset += a.layer_elems
            if offset == bucket_elems:
                reduction.wait_stream(compute)
                with torch.cuda.stream(reduction):
                    if sleep_cycles:
                        torch.cuda._sleep(sleep_cycles)
                    dist.all_reduce(ipg[index])  # stack: all-reduce
                    part = bucket_elems // world
                    start = flushed * part
                    partition[start:start + part].copy_(ipg[index][rank * part:(rank + 1) * part])
                    freed[index].record(reduction)
                used[index] = True
                index, offset, flushed = 1 - index, 0, flushed + 1
        compute.wait_stream(reduction)
        # Exact check: bucket f holds layers (L-1-2f, L-2-2f); this rank owns slice `rank`.
        expected = []
        for f in range(flushed):
            layers = [a.layers - 1 - a.layers_per_bucket * f - j for j in range(a.layers_per_bucket)]
            full = torch.cat([
                sum(((torch.arange(a.layer_elems, device="cuda", dtype=torch.float32) + 7 * l + 5 * step + 3 * r) % 31 - 15)
                    for r in range(world))
                for l in layers])
            part = bucket_elems // world
            expected.append(full[rank * part:(rank + 1) * part])
        corrupted += int((partition != torch.cat(expected)).sum().item())  # synchronises
        step_ms.append((time.perf_counter() - started) * 1e3)
        if pause is not None and step >= a.tracer_ab:
            (paused_ms if paused else traced_ms).append(step_ms[-1])
    torch.cuda.synchronize()
    total = torch.tensor([corrupted], device="cuda")
    dist.all_reduce(total)
    if rank == 0:
        print(f"torch_ipg_bucket: sync={a.sync} ranks={world} steps={a.steps} "
              f"corrupted_elements_all_ranks={int(total.item())} "
              f"step_ms={statistics.median(step_ms[1:] or step_ms):.3f}")
        if pause is not None:
            print(tracer_ab_line("torch_ipg_bucket", traced_ms, paused_ms))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
