"""The streamhaz tracer's Python side, loaded into every Python process `streamhaz run` starts
with --allocator-history on (its folder is put first on PYTHONPATH).

PyTorch's caching allocator serves many tensors from one cudaMalloc'd segment, so the tracer's
own allocation records name the segment, not the tensor. PyTorch can record every block it hands
out with the Python stack that asked for it (torch.cuda.memory._record_memory_history, the data
behind its memory visualiser). Here that history is switched on when CUDA starts, and handed to
the tracer when the process exits; the tracer places each allocation among its calls and writes
it into the trace, so that `streamhaz check` can name the tensor's own line.

Nothing here changes what the program computes: the history is PyTorch's own bookkeeping. A
sitecustomize module that was on the path before this one still runs (imported after this).
"""
import atexit
import ctypes
import importlib
import importlib.abc
import importlib.util
import os
import sys

_MAGIC = "streamhaz-allocator-history 1"
# Allocations kept: PyTorch keeps the newest entries of its history when there are more.
_MAX_ENTRIES = 1_000_000


def _tracer():
    """The tracer's exported functions, when the tracer is loaded (LD_PRELOAD) and wants them."""
    try:
        lib = ctypes.CDLL(None)
        wanted = lib.streamhaz_tracer_allocator_history_wanted
        hand_over = lib.streamhaz_tracer_allocator_history
        unavailable = lib.streamhaz_tracer_allocator_history_unavailable
    except (AttributeError, OSError):
        return None
    wanted.restype = ctypes.c_int
    if not wanted():
        return None
    hand_over.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    hand_over.restype = ctypes.c_long
    unavailable.argtypes = [ctypes.c_char_p]
    unavailable.restype = None
    return hand_over, unavailable


def _field(text):
    return str(text).replace("\t", " ").replace("\n", " ")


class _History:
    def __init__(self, hand_over, unavailable):
        self.hand_over = hand_over
        self.unavailable = unavailable
        self.failed = None  # why the history could not be switched on

    def say_unavailable(self, why):
        self.unavailable(why.encode("utf-8", "replace"))

    def start(self, torch):
        """Runs when CUDA starts in this process (torch.cuda._lazy_call)."""
        record = torch.cuda.memory._record_memory_history
        try:
            try:
                record(max_entries=_MAX_ENTRIES, context="alloc", stacks="python",
                       skip_actions=["free_requested", "free_completed"])
            except TypeError:  # a PyTorch without skip_actions
                record(max_entries=_MAX_ENTRIES, context="alloc", stacks="python")
        except Exception as e:  # another allocator backend, a build without it
            self.failed = f"PyTorch could not record its allocator history: {type(e).__name__}: {e}"

    def finish(self, torch):
        """Runs at exit: hands the history over."""
        try:
            if not torch.cuda.is_initialized():
                return  # no CUDA here (a launcher process): nothing to say
            if self.failed:
                self.say_unavailable(self.failed)
                return
            snapshot = torch.cuda.memory._snapshot()
            lines = [_MAGIC]
            for device, entries in enumerate(snapshot.get("device_traces", [])):
                for e in entries:
                    if e.get("action") != "alloc":
                        continue
                    lines.append(f"alloc {device} {int(e['addr'])} {int(e['size'])} {int(e['stream'])} {int(e['time_us'])}")
                    for f in e.get("frames", []):
                        lines.append(f"frame\t{int(f['line'])}\t{_field(f['name'])}\t{_field(f['filename'])}")
            data = "\n".join(lines).encode("utf-8", "replace")
            self.hand_over(data, len(data))
        except Exception as e:
            self.say_unavailable(f"reading PyTorch's allocator history failed: {type(e).__name__}: {e}")


class _WhenTorchIsImported(importlib.abc.MetaPathFinder):
    """Runs `then(torch)` once the torch package has finished importing."""

    def __init__(self, then):
        self.then = then

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader, then = spec.loader, self.then
        run_module = loader.exec_module

        def exec_module(module):
            run_module(module)
            then(module)

        loader.exec_module = exec_module
        return spec


def _install():
    tracer = _tracer()
    if tracer is None:
        return
    history = _History(*tracer)

    def on_torch(torch):
        torch.cuda._lazy_call(lambda: history.start(torch))
        atexit.register(history.finish, torch)

    if "torch" in sys.modules:
        on_torch(sys.modules["torch"])
    else:
        sys.meta_path.insert(0, _WhenTorchIsImported(on_torch))


def _chain_to_next_sitecustomize():
    """Imports the sitecustomize this one shadows, as site.py would have."""
    here = os.path.dirname(os.path.abspath(__file__))
    saved_path = list(sys.path)
    ours = sys.modules.pop("sitecustomize", None)
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    try:
        importlib.import_module("sitecustomize")
    except ImportError as e:
        if e.name != "sitecustomize":
            raise
        if ours is not None:
            sys.modules["sitecustomize"] = ours
    finally:
        sys.path[:] = saved_path


try:
    _install()
except Exception as e:  # never stop the program
    print(f"streamhaz: allocator history not recorded: {type(e).__name__}: {e}", file=sys.stderr)
_chain_to_next_sitecustomize()
