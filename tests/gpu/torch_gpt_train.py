"""A small GPT trained with real PyTorch parallelism: correct training code for streamhaz's
real-workload suite (scripts/gpu/real_workloads.sh). Every configuration here is a correct
program: a race or possible race that `streamhaz check` reports on it is a false one.

Run under torchrun (1 or more ranks):
  --parallel ddp     DistributedDataParallel (gradient buckets all-reduced on NCCL's stream)
  --parallel fsdp2   fully_shard on every block and on the model (all-gathers, reduce-scatters)
  --optim foreach    AdamW(foreach=True): TensorList kernels touching many tensors per launch
  --optim fused      AdamW(fused=True): one fused kernel over the parameter lists
  --optim single     AdamW(foreach=False, fused=False): one kernel per tensor
The forward runs under bf16 autocast with scaled_dot_product_attention. Each iteration is an
NVTX range "step"; the script prints the median step time of the steps after the warm-up and
the last loss.
"""
import argparse
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

from tracer_ab import tracer_ab_line, tracer_pause


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        shape = (b, t, self.heads, d // self.heads)
        q, k, v = (z.view(shape).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab, d, heads, layers, seq):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(seq, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--parallel", choices=["ddp", "fsdp2"], default="ddp")
    p.add_argument("--optim", choices=["foreach", "fused", "single"], default="foreach")
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--d", type=int, default=768)
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--vocab", type=int, default=50257)
    p.add_argument("--compile", action="store_true",
                   help="torch.compile the model (DDP only): Inductor's Triton kernels, launched by Triton's own launcher")
    p.add_argument("--tracer-ab", action="store_true",
                   help="under streamhaz run: after the warm-up, pause the tracer on every other step "
                        "and print the traced and paused steps' medians (bench/real_step_cost.sh)")
    a = p.parse_args()
    pause = tracer_pause() if a.tracer_ab else None

    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = GPT(a.vocab, a.d, a.d // 64, a.layers, a.seq).cuda()
    if a.parallel == "ddp":
        model = nn.parallel.DistributedDataParallel(model, device_ids=[local])
        if a.compile:
            model = torch.compile(model)
    elif a.compile:
        p.error("--compile goes with --parallel ddp")
    else:
        from torch.distributed.fsdp import fully_shard
        for blk in model.blocks:
            fully_shard(blk)
        fully_shard(model)
    kinds = {"foreach": dict(foreach=True), "fused": dict(fused=True), "single": dict(foreach=False, fused=False)}
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, **kinds[a.optim])
    gen = torch.Generator(device="cuda").manual_seed(1 + rank)

    times, paused_times, host_times, loss = [], [], [], None
    for step in range(a.steps):
        paused = pause is not None and step >= a.warmup and (step - a.warmup) % 2 == 1
        if pause is not None:
            pause(paused)  # outside the timed part: switching costs CUPTI calls
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        torch.cuda.nvtx.range_push("step")
        idx = torch.randint(0, a.vocab, (a.batch, a.seq + 1), device="cuda", generator=gen)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(idx[:, :-1])
            loss = F.cross_entropy(logits.float().view(-1, a.vocab), idx[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.nvtx.range_pop()
        issued = time.perf_counter()  # the host's part: a step whose host_ms is near step_ms is host-bound
        torch.cuda.synchronize()
        if step >= a.warmup:
            (paused_times if paused else times).append((time.perf_counter() - t0) * 1e3)
            host_times.append((issued - t0) * 1e3)
    if rank == 0:
        med = statistics.median(times) if times else float("nan")
        host_med = statistics.median(host_times) if host_times else float("nan")
        print(f"torch_gpt_train: parallel={a.parallel}{'+compile' if a.compile else ''} optim={a.optim} "
              f"ranks={dist.get_world_size()} "
              f"steps={a.steps} step_ms={med:.3f} host_ms={host_med:.3f} loss={loss.item():.4f}")
        print("torch_gpt_train: step_ms_each=" + ",".join(f"{t:.2f}" for t in times))
        if pause is not None:
            print(tracer_ab_line("torch_gpt_train", times, paused_times))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
