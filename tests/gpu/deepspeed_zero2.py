"""A small real DeepSpeed ZeRO-2 training job for streamhaz's over-synchronisation and replay checks
(scripts/gpu/deepspeed_oversync.sh). DeepSpeed is not vendored: it is imported from PYTHONPATH
(the script unpacks it there) and only patched at run time, in this process.

Model: --layers blocks of LayerNorm -> Linear(d, 4d) -> GELU -> Linear(4d, d) with a residual,
fp32 (TF32 matmuls), MSE against a random target, random data from a fixed seed (the same batches
in every variant). DeepSpeed ZeRO stage 2, overlap_comm, contiguous_gradients, a reduce bucket of
--bucket-elems elements: with the defaults (8 blocks, d 1024, 9e6) each bucket holds about two
4.2M-element weights, the backward flushes the bucket 7 times and the epilogue once: 8 uses of the
double-buffered IPG bucket per step, an even number, so buffer k of one step is buffer k of the
next. Optimizer: torch.optim.AdamW handed to deepspeed.initialize (no DeepSpeed extension is built).

  --variant stock    DeepSpeed as shipped: average_tensor makes the compute stream wait for the whole
                     reduction stream before each bucket's reduction (#5606)
  --variant offload  offload_optimizer {device: cpu}: DeepSpeed's own per-buffer reuse events
                     (reduce_ipg_grads records one on the reduction stream after a bucket, the compute
                     stream waits on it before each copy into that buffer) with the #5606 barrier kept
                     on top ("Keep the existing overlap barrier; events only add ordering on top of it")
  --variant events   stock with the #5606 barrier replaced by one event per IPG buffer (the idea of
                     DeepSpeed issue #8364 / PR #8366; patch_events() below, written here)
  --ipg-buffers 1    both IPG buffer slots alias one buffer (setup_buckets is wrapped): stock then races
                     (the barrier waits for the previous bucket, not the one just queued), events
                     serialises correctly (it waits for the buffer's own last use)
  --epilogue-sync M  the device synchronize at the end of the backward (independent_gradient_partition_
                     epilogue: get_accelerator().synchronize()): device (as shipped), none (skipped: the
                     optimizer's gradient-norm kernels then race with the last bucket's copies into the
                     gradient partition), wait (the compute stream waits for the reduction stream instead,
                     the event wait streamhaz proposes in its place)
  --comm-delay-us U  a GPU sleep of U µs (torch.cuda._sleep) on the current stream, i.e. the reduction
                     stream, right before every gradient all-reduce DeepSpeed issues: the #5523 setting

Each iteration is an NVTX range "step" (nothing else is named so). Rank 0 prints one JSON line per
measured step ({"step", "ms", "loss"}) and a final one ({"median_ms", "variant", "comm_delay_us",
"deepspeed", ...}). Run under torchrun: torchrun --standalone --nproc_per_node 1 deepspeed_zero2.py
"""
import argparse
import ctypes
import inspect
import json
import logging
import os
import statistics
import sys
import threading
import time

os.environ.setdefault("DS_ACCELERATOR", "cuda")
os.environ.setdefault("DS_BUILD_OPS", "0")
os.environ.setdefault("DS_SKIP_CUDA_CHECK", "1")
for _k, _v in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"),
               ("MASTER_PORT", "29517")):
    os.environ.setdefault(_k, _v)  # only without torchrun

import torch  # noqa: E402
import torch.distributed as tdist  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class PatchError(RuntimeError):
    pass


def fail(msg):
    """A version change or a patch that no longer applies: stop loudly, non-zero (exit 3). Raised, not
    sys.exit, because it may fire inside a gradient hook on autograd's thread."""
    raise PatchError(msg)


# ----------------------------------------------------------------------------------------------
# streamhaz tracer names (no-ops when the program is not traced)

def tracer_hook(name):
    try:
        fn = getattr(ctypes.CDLL(None), name)
    except (AttributeError, OSError):
        return None
    return fn


_name_buffer = None
_name_stream = None


def name_buffer(t, label):
    if _name_buffer:
        _name_buffer(ctypes.c_void_p(t.data_ptr()), ctypes.c_size_t(t.numel() * t.element_size()), label.encode())


def name_stream(s, label):
    if _name_stream:
        _name_stream(ctypes.c_void_p(s.cuda_stream), label.encode())


# ----------------------------------------------------------------------------------------------
# the model

class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.ln(x))))


class MLPStack(nn.Module):
    def __init__(self, d, layers):
        super().__init__()
        self.blocks = nn.ModuleList(Block(d) for _ in range(layers))

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x


# ----------------------------------------------------------------------------------------------
# run-time patches of DeepSpeedZeroOptimizer (runtime/zero/stage_1_and_2.py), this process only

STATS = {"flushes": 0, "delayed_allreduces": 0, "barriers_removed": 0, "reuse_waits": 0, "reuse_records": 0, "epilogue_syncs_removed": 0,
         "aliased_buffers": 0}
_tls = threading.local()


def require(cls, names):
    for n in names:
        if not callable(getattr(cls, n, None)):
            fail(f"DeepSpeedZeroOptimizer.{n} is missing in this DeepSpeed version: the patches here were "
                 f"written for 0.19.x (runtime/zero/stage_1_and_2.py)")


def require_source(fn, fragments):
    try:
        src = inspect.getsource(fn)
    except (OSError, TypeError) as e:
        fail(f"cannot read the source of {fn.__qualname__}: {e}")
    for frag in fragments:
        if frag not in src:
            fail(f"{fn.__qualname__} no longer contains `{frag}`: DeepSpeed changed, re-read stage_1_and_2.py "
                 f"before trusting this variant")


def patch_common(ZeroOpt, args):
    """Every variant: count the bucket flushes, name the IPG buffers for the tracer, and (--ipg-buffers 1)
    alias the second IPG buffer slot to the first. Adds no CUDA work and no synchronisation."""
    require(ZeroOpt, ["setup_buckets", "reduce_ipg_grads"])
    orig_setup = ZeroOpt.setup_buckets
    orig_reduce = ZeroOpt.reduce_ipg_grads

    def setup_buckets(self, *a, **k):
        ret = orig_setup(self, *a, **k)
        named = self.__dict__.setdefault("_shz_named", {})
        for dt, bucket in self.ipg_buckets.items():
            if args.ipg_buffers == 1 and len(bucket.buffer) == 2 and bucket.buffer[1] is not bucket.buffer[0]:
                # DeepSpeed swaps bucket.index between 0 and 1 after every flush
                # (reduce_independent_p_g_buckets_and_remove_grads); with both slots holding one tensor the
                # swap changes nothing and every bucket reuses the same memory.
                bucket.buffer[1] = bucket.buffer[0]
                STATS["aliased_buffers"] += 1
            for i, buf in enumerate(bucket.buffer[:1] if args.ipg_buffers == 1 else bucket.buffer):
                key = (str(dt), i)
                if named.get(key) != buf.data_ptr():
                    named[key] = buf.data_ptr()
                    name_buffer(buf, f"ipg_buffer[{i}]")
        return ret

    def reduce_ipg_grads(self, *a, **k):
        STATS["flushes"] += 1
        return orig_reduce(self, *a, **k)

    ZeroOpt.setup_buckets = setup_buckets
    ZeroOpt.reduce_ipg_grads = reduce_ipg_grads


def patch_comm_delay(ZeroOpt, ds_comm, cycles):
    """--comm-delay-us: a GPU sleep right before every gradient all-reduce.

    The gradient all-reduces are the `dist.all_reduce` calls (dist = deepspeed.comm, looked up at call
    time) inside DeepSpeedZeroOptimizer.allreduce_bucket (reached from average_tensor ->
    allreduce_and_scatter -> allreduce_and_copy_with_multiple_ranks, and from allreduce_and_copy) and
    gradient_reduction_w_predivide (average_tensor with reduce_scatter off). Those run inside
    `with get_accelerator().stream(self.reduction_stream)`, so the sleep lands on the reduction stream,
    after the bucket's pre-divide and before the all-reduce. Other all-reduces (grad norm, overflow
    flags in step()) are not delayed."""
    require(ZeroOpt, ["allreduce_bucket", "gradient_reduction_w_predivide"])
    if not callable(getattr(ds_comm, "all_reduce", None)):
        fail("deepspeed.comm.all_reduce is missing")
    orig_all_reduce = ds_comm.all_reduce

    def all_reduce(*a, **k):
        if getattr(_tls, "grad_reduce", 0) > 0:
            torch.cuda._sleep(cycles)
            STATS["delayed_allreduces"] += 1
        return orig_all_reduce(*a, **k)

    ds_comm.all_reduce = all_reduce

    def marked(fn):
        def wrapper(self, *a, **k):
            _tls.grad_reduce = getattr(_tls, "grad_reduce", 0) + 1
            try:
                return fn(self, *a, **k)
            finally:
                _tls.grad_reduce -= 1
        wrapper.__name__ = fn.__name__
        return wrapper

    ZeroOpt.allreduce_bucket = marked(ZeroOpt.allreduce_bucket)
    ZeroOpt.gradient_reduction_w_predivide = marked(ZeroOpt.gradient_reduction_w_predivide)


def patch_events(ZeroOpt):
    """--variant events: one event per IPG buffer in place of the #5606 whole-stream barrier.

    Replaced: in DeepSpeedZeroOptimizer.average_tensor, the branch `elif self.overlap_comm:` ends with
        get_accelerator().current_stream().wait_stream(stream)        # stream = self.reduction_stream
    (0.19.8: stage_1_and_2.py line 1612): the compute stream waits for everything queued on the
    reduction stream so far, i.e. the previous bucket, which is the last user of the buffer the next
    copies go into. That one wait is skipped (only it: the same branch's `stream.wait_stream(producer)`,
    the reduction stream waiting for the copies into the bucket, stays).

    Added, in a wrapper of reduce_ipg_grads (everything a flush queues on the reduction stream, including
    the copies out of the bucket in copy_grads_in_partition, is queued when it returns):
      - an event recorded on the reduction stream after the flush: the last use of the buffer it reduced;
      - on a flush from reduce_independent_p_g_buckets_and_remove_grads (the one call with comm_dtype=...;
        it then swaps bucket.index and copies the next gradient into bucket.buffer[1 - index]): the
        current (compute) stream waits for that next buffer's event before the copy.
    Events are kept by buffer address, so with --ipg-buffers 1 the wait is for the flush just queued.
    _release_ipg_buffers (end of backward, after DeepSpeed's device synchronize; setup_buckets allocates
    the buffers anew next step) forgets them, as DeepSpeed forgets its own bucket.reuse_events there.
    The epilogue flush (reduce_ipg_grads() without comm_dtype) is followed by no copy: no wait."""
    require(ZeroOpt, ["average_tensor", "reduce_ipg_grads", "reduce_independent_p_g_buckets_and_remove_grads",
                      "_release_ipg_buffers"])
    require_source(ZeroOpt.average_tensor, ["elif self.overlap_comm:",
                                            "get_accelerator().current_stream().wait_stream(stream)"])
    require_source(ZeroOpt.reduce_independent_p_g_buckets_and_remove_grads,
                   ["self.reduce_ipg_grads(comm_dtype=comm_dtype)", "bucket.index = 1 - bucket.index",
                    "bucket.buffer[bucket.index].narrow("])
    orig_wait_stream = torch.cuda.Stream.wait_stream
    orig_average = ZeroOpt.average_tensor
    orig_reduce = ZeroOpt.reduce_ipg_grads
    orig_release = ZeroOpt._release_ipg_buffers

    def wait_stream(self_stream, other):
        red = getattr(_tls, "skip_wait_for", None)
        if (red is not None and getattr(other, "cuda_stream", None) == red
                and getattr(self_stream, "cuda_stream", None) != red):
            _tls.skipped += 1
            STATS["barriers_removed"] += 1
            return None
        return orig_wait_stream(self_stream, other)

    torch.cuda.Stream.wait_stream = wait_stream

    def average_tensor(self, *a, **k):
        if not self.overlap_comm or self.cpu_offload or self.reduction_stream is None:
            return orig_average(self, *a, **k)
        _tls.skip_wait_for, _tls.skipped = self.reduction_stream.cuda_stream, 0
        try:
            ret = orig_average(self, *a, **k)
        finally:
            skipped, _tls.skip_wait_for = _tls.skipped, None
        if skipped != 1:
            fail(f"average_tensor made the compute stream wait for the reduction stream {skipped} times "
                 f"(expected exactly the one #5606 wait): DeepSpeed changed")
        return ret

    def reduce_ipg_grads(self, comm_dtype=None, *a, **k):
        dtypes = list(self.ipg_buckets) if comm_dtype is None else [comm_dtype]
        used = []
        for dt in dtypes:
            b = self.ipg_buckets[dt]
            if (self.contiguous_gradients and b.buffer and 0 < b.elements <= self.reduce_bucket_size
                    and dt not in getattr(self, "extra_large_param_to_reduce", {})):
                used.append(b.buffer[b.index])
        ret = orig_reduce(self, comm_dtype, *a, **k)
        events = self.__dict__.setdefault("_shz_buffer_events", {})
        for buf in used:
            ev = torch.cuda.Event()
            ev.record(self.reduction_stream)
            events[buf.data_ptr()] = ev
            STATS["reuse_records"] += 1
        if comm_dtype is not None and self.contiguous_gradients and self.overlap_comm:
            b = self.ipg_buckets[comm_dtype]
            if len(b.buffer) == 2:
                nxt = b.buffer[1 - b.index]  # the caller swaps to it right after this returns
                ev = events.get(nxt.data_ptr())
                if ev is not None:
                    torch.cuda.current_stream().wait_event(ev)
                    STATS["reuse_waits"] += 1
        return ret

    def release(self, *a, **k):
        self.__dict__.get("_shz_buffer_events", {}).clear()
        return orig_release(self, *a, **k)

    ZeroOpt.average_tensor = average_tensor
    ZeroOpt.reduce_ipg_grads = reduce_ipg_grads
    ZeroOpt._release_ipg_buffers = release


def patch_epilogue_sync(ZeroOpt, mode):
    """--epilogue-sync none|wait: the device synchronize of independent_gradient_partition_epilogue (0.19.8:
    stage_1_and_2.py line 1028, `get_accelerator().synchronize()` under `if self.overlap_comm:`) is
    skipped (none) or replaced by the compute stream waiting for the reduction stream (wait); nothing
    else changes. The accelerator's synchronize is replaced only while the epilogue runs, and exactly
    one call there is expected per backward."""
    from deepspeed.accelerator import get_accelerator
    require(ZeroOpt, ["independent_gradient_partition_epilogue"])
    require_source(ZeroOpt.independent_gradient_partition_epilogue,
                   ["if self.overlap_comm:", "get_accelerator().synchronize()"])
    acc = get_accelerator()
    orig_sync = acc.synchronize
    orig_epilogue = ZeroOpt.independent_gradient_partition_epilogue

    def synchronize(*a, **k):
        if getattr(_tls, "in_epilogue", None) is not None:
            _tls.skipped_syncs += 1
            STATS["epilogue_syncs_removed"] += 1
            if mode == "wait":
                torch.cuda.current_stream().wait_stream(_tls.in_epilogue.reduction_stream)
            return None
        return orig_sync(*a, **k)

    acc.synchronize = synchronize

    def epilogue(self, *a, **k):
        _tls.in_epilogue, _tls.skipped_syncs = self, 0
        try:
            ret = orig_epilogue(self, *a, **k)
        finally:
            _tls.in_epilogue = None
        if _tls.skipped_syncs != 1:
            fail(f"the epilogue called the accelerator's synchronize {_tls.skipped_syncs} times (expected exactly "
                 f"one): DeepSpeed changed")
        return ret

    ZeroOpt.independent_gradient_partition_epilogue = epilogue


def check_offload_path(ZeroOpt):
    """--variant offload relies on DeepSpeed's own reuse events: say so loudly if they are gone."""
    require_source(ZeroOpt.reduce_independent_p_g_buckets_and_remove_grads,
                   ["bucket.reuse_events[bucket.index]"])
    require_source(ZeroOpt.reduce_ipg_grads, ["bucket.reuse_events[bucket.index] = event"])
    require_source(ZeroOpt.average_tensor, ["get_accelerator().current_stream().wait_stream(stream)"])


# ----------------------------------------------------------------------------------------------

def nccl_version():
    try:
        v = torch.cuda.nccl.version()
        return ".".join(map(str, v)) if isinstance(v, tuple) else str(v)
    except Exception as e:  # informative only
        return f"? ({e})"


def cycles_per_us():
    """SM clock cycles per µs, as torch.cuda._sleep counts them: a timed sleep (CUDA events)."""
    torch.cuda._sleep(100_000)
    torch.cuda.synchronize()
    rate = None
    for n in (2_000_000, 10_000_000):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        torch.cuda._sleep(n)
        e.record()
        e.synchronize()
        rate = n / (s.elapsed_time(e) * 1000.0)
    return rate


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--variant", choices=["stock", "offload", "events"], default="stock")
    p.add_argument("--ipg-buffers", type=int, choices=[1, 2], default=2)
    p.add_argument("--comm-delay-us", type=float, default=0.0)
    p.add_argument("--epilogue-sync", choices=["device", "none", "wait"], default="device",
                   help="the device synchronize at the end of the backward (independent_gradient_partition_epilogue): "
                        "as shipped, skipped, or replaced by a wait of the compute stream for the reduction stream")
    p.add_argument("--steps", type=int, default=5, help="measured steps")
    p.add_argument("--warmup", type=int, default=1, help="steps before the measured ones")
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--d", type=int, default=1024)
    p.add_argument("--batch", type=int, default=8192, help="rows of the (batch, d) input per rank")
    p.add_argument("--bucket-elems", type=int, default=9_000_000, help="ZeRO reduce_bucket_size (elements)")
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-names", action="store_true", help="leave streams and buffers unnamed for the tracer")
    a = p.parse_args()
    if a.variant == "offload" and a.ipg_buffers != 2:
        fail("--ipg-buffers 1 with --variant offload is not supported: DeepSpeed keys its reuse events by "
             "bucket.index, which the aliasing makes wrong")

    global _name_buffer, _name_stream
    if not a.no_names:
        _name_buffer = tracer_hook("streamhaz_tracer_name_buffer")
        _name_stream = tracer_hook("streamhaz_tracer_name_stream")

    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    # No torch.use_deterministic_algorithms: it would also fill every torch.empty (the IPG buffers,
    # the gradient partition) with NaN, kernels DeepSpeed does not issue. The ops used here (GEMMs,
    # LayerNorm, GELU, MSE, AdamW) give the same bits run to run on one GPU without it.
    t_start = time.perf_counter()

    import deepspeed
    import deepspeed.comm as ds_comm
    from deepspeed.runtime.zero import stage_1_and_2
    logging.getLogger("DeepSpeed").setLevel(logging.WARNING)
    t_import = time.perf_counter() - t_start
    ZeroOpt = stage_1_and_2.DeepSpeedZeroOptimizer
    ds_version = str(getattr(deepspeed, "__version__", "?")).strip()

    cycles = 0
    rate = None
    if a.comm_delay_us > 0:
        rate = cycles_per_us()
        cycles = int(a.comm_delay_us * rate)
    # Source checks read DeepSpeed's own functions, so they come before any wrapper replaces them.
    if a.variant == "offload":
        check_offload_path(ZeroOpt)
    if a.variant == "events":
        patch_events(ZeroOpt)
    patch_common(ZeroOpt, a)
    if a.epilogue_sync != "device":
        patch_epilogue_sync(ZeroOpt, a.epilogue_sync)
    if cycles:
        patch_comm_delay(ZeroOpt, ds_comm, cycles)

    # DeepSpeed's own init (env:// from torchrun). It binds no device_id on a one-rank world (#8248:
    # torch would then build every new_group() with ncclCommSplit), so neither do we.
    deepspeed.init_distributed(dist_backend="nccl")
    rank, world = tdist.get_rank(), tdist.get_world_size()

    torch.manual_seed(a.seed)
    model = MLPStack(a.d, a.layers).cuda()
    largest = max(q.numel() for q in model.parameters())
    if a.bucket_elems <= largest:
        fail(f"--bucket-elems {a.bucket_elems} must exceed the largest parameter ({largest} elements): larger "
             f"ones bypass the IPG bucket")
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr)
    zero = {
        "stage": 2,
        "overlap_comm": True,
        "contiguous_gradients": True,
        "reduce_scatter": True,
        "reduce_bucket_size": a.bucket_elems,
        "allgather_bucket_size": a.bucket_elems,
    }
    if a.variant == "offload":
        zero["offload_optimizer"] = {"device": "cpu", "pin_memory": True}
    config = {
        "train_micro_batch_size_per_gpu": a.batch,
        "gradient_accumulation_steps": 1,
        "zero_optimization": zero,
        "zero_allow_untested_optimizer": True,
        "zero_force_ds_cpu_optimizer": False,
        "steps_per_print": 1 << 30,
        "wall_clock_breakdown": False,
        "gradient_clipping": 0.0,
    }
    engine, _, _, _ = deepspeed.initialize(model=model, optimizer=opt, config=config)
    zopt = engine.optimizer
    if not isinstance(zopt, ZeroOpt):
        fail(f"engine.optimizer is {type(zopt).__name__}, not DeepSpeedZeroOptimizer")
    if not (zopt.overlap_comm and zopt.contiguous_gradients and zopt.reduction_stream is not None):
        fail("ZeRO-2 did not enable overlap_comm with contiguous gradients and a reduction stream")
    if bool(zopt.cpu_offload) != (a.variant == "offload"):
        fail(f"cpu_offload is {zopt.cpu_offload} for variant {a.variant}")
    name_stream(torch.cuda.current_stream(), "compute stream")
    name_stream(zopt.reduction_stream, "reduction stream")
    t_init = time.perf_counter() - t_start

    g = torch.Generator(device="cuda").manual_seed(1000 + 17 * rank + a.seed)
    total = a.warmup + a.steps
    data = [(torch.randn(a.batch, a.d, device="cuda", generator=g),
             torch.randn(a.batch, a.d, device="cuda", generator=g)) for _ in range(total)]
    torch.cuda.synchronize()

    times, losses = [], []
    flushes_per_step = []
    for it in range(total):
        x, y = data[it]
        f0 = STATS["flushes"]
        t0 = time.perf_counter()  # the GPU is idle here: the data's or the previous step's synchronize
        torch.cuda.nvtx.range_push("step")
        out = engine(x)
        loss = F.mse_loss(out, y)
        engine.backward(loss)
        engine.step()
        torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
        ms = (time.perf_counter() - t0) * 1e3
        flushes_per_step.append(STATS["flushes"] - f0)
        if it >= a.warmup:
            lv = loss.item()
            times.append(ms)
            losses.append(lv)
            if rank == 0:
                print(json.dumps({"step": it, "ms": round(ms, 3), "loss": lv}), flush=True)
    with torch.no_grad():
        param_sum = float(sum(q.double().sum() for q in engine.module.parameters()).item())
    if cycles and STATS["delayed_allreduces"] == 0:
        fail("--comm-delay-us was given but no gradient all-reduce was delayed: the hook missed DeepSpeed's call")
    if a.variant == "events" and STATS["reuse_waits"] == 0:
        fail("events variant: no reuse wait was placed (no bucket flushed twice in a step?)")
    if rank == 0:
        final = {
            "median_ms": round(statistics.median(times), 3) if times else None,
            "mean_ms": round(statistics.fmean(times), 3) if times else None,
            "variant": a.variant,
            "epilogue_sync": a.epilogue_sync,
            "ipg_buffers": a.ipg_buffers,
            "comm_delay_us": a.comm_delay_us,
            "deepspeed": ds_version,
            "torch": torch.__version__,
            "nccl": nccl_version(),
            "world": world,
            "steps": a.steps,
            "warmup": a.warmup,
            "final_loss": losses[-1] if losses else None,
            "param_sum": param_sum,
            "flushes_per_step": flushes_per_step,
            "cycles_per_us": round(rate, 2) if rate else None,
            "sleep_cycles": cycles,
            "stats": STATS,
            "import_s": round(t_import, 2),
            "init_s": round(t_init, 2),
            "total_s": round(time.perf_counter() - t_start, 2),
        }
        if flushes_per_step and flushes_per_step[-1] % 2:
            final["note"] = ("odd number of bucket flushes per step: buffer k of one step is not buffer k of the "
                             "next, which `replay --what-if ipg-buffers N` may not take as one rotation")
        print(json.dumps(final), flush=True)
    if world > 1:
        tdist.barrier()
    tdist.destroy_process_group()


if __name__ == "__main__":
    try:
        main()
    except PatchError as e:
        print(f"deepspeed_zero2: FAILED: {e}", file=sys.stderr, flush=True)
        sys.exit(3)
