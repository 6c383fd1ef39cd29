"""Traced and untraced steps in one process, for bench/real_step_cost.sh (--tracer-ab).

Separate runs on the GPU machine drift apart by more than the tracer's cost (a step's median
moved 20-30 % between neighbouring runs), so the scripts can alternate instead: after the
warm-up every other step runs with the tracer paused (streamhaz_tracer_pause: CUPTI's driver
callbacks off, NCCL calls passed straight through), and neighbouring steps are compared.
TRACER_AB_CONTROL=1 alternates without pausing (an A/A run: the ratio it prints is what the
alternation itself shows, about 1.00 when the method is sound).
TRACER_AB_LEVELS=A,B sets the pause levels of the two kinds of step (default 0,1): 0 records,
1 pauses with CUPTI's callbacks off, 2 pauses with them on and ignored. So 0,2 times the
tracer's own work and 2,1 CUPTI's dispatch of the callbacks alone.
"""
import ctypes
import os
import statistics
import sys


def tracer_pause():
    """A function pause(paused) that switches the tracer `streamhaz run` preloaded; exits when
    the tracer is absent or not tracing through CUPTI."""
    try:
        fn = ctypes.CDLL(None).streamhaz_tracer_pause
    except AttributeError:
        sys.exit("--tracer-ab: the streamhaz tracer is not loaded (run the script under `streamhaz run`)")
    fn.argtypes, fn.restype = [ctypes.c_int], ctypes.c_int

    levels = ab_levels()

    def pause(paused):
        if not fn(levels[1] if paused else levels[0]):
            sys.exit("--tracer-ab: the streamhaz tracer is loaded but not tracing through CUPTI")
    return pause


def ab_levels():
    """The pause levels of the 'traced' and the 'paused' steps."""
    if os.environ.get("TRACER_AB_CONTROL") == "1":
        return (0, 0)
    text = os.environ.get("TRACER_AB_LEVELS", "0,1")
    try:
        levels = tuple(int(v) for v in text.split(","))
    except ValueError:
        levels = ()
    if len(levels) != 2 or not all(0 <= v <= 2 for v in levels):
        sys.exit(f"--tracer-ab: TRACER_AB_LEVELS is two levels among 0, 1, 2 (e.g. 0,1), not '{text}'")
    return levels


def tracer_ab_line(script, traced, paused):
    """The traced and paused steps' medians, their ratio, and the median ratio of each traced step
    to the paused step after it."""
    if not traced or not paused:
        return f"{script}: tracer_ab no pairs (more steps after the warm-up needed)"
    pairs = [t / u for t, u in zip(traced, paused)]
    control = " control=1" if os.environ.get("TRACER_AB_CONTROL") == "1" else ""
    a, b = ab_levels()
    levels = f" levels={a},{b}" if (a, b) not in ((0, 1), (0, 0)) else ""
    return (f"{script}: tracer_ab{control}{levels} traced_ms={statistics.median(traced):.3f} "
            f"paused_ms={statistics.median(paused):.3f} "
            f"ratio={statistics.median(traced) / statistics.median(paused):.4f} "
            f"pair_ratio={statistics.median(pairs):.4f} pairs={len(pairs)}")
