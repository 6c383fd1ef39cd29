"""The tracer's Python side (tracer/python/sitecustomize.py) against a fake torch and a fake
tracer library (fake_tracer_exports.cpp, preloaded as the real one is): it switches PyTorch's
allocator history on when CUDA starts, hands it over at exit in the tracer's text format, says
why when PyTorch refuses, does nothing where the tracer is absent or does not want it, and still
runs the sitecustomize it shadows. The program's own output and exit status never change.

usage: python_side_test.py SITECUSTOMIZE_DIR FAKE_TRACER_LIB
"""
import os
import subprocess
import sys
import tempfile

FAKE_TORCH = {
    "torch/__init__.py": "from . import cuda\n",
    "torch/cuda/__init__.py": """
_queued = []
_started = False

def _lazy_call(fn):
    if _started:
        fn()
    else:
        _queued.append(fn)

def start():  # what the first CUDA call does
    global _started
    _started = True
    for fn in _queued:
        fn()

def is_initialized():
    return _started

from . import memory
""",
    "torch/cuda/memory.py": """
import os, sys
_recording = None
_entries = []
MODE = os.environ.get("FAKE_TORCH_MODE", "")

def _record_memory_history(max_entries=None, context=None, stacks=None, **kw):
    global _recording
    if MODE == "refuses":
        raise RuntimeError("not supported by cudaMallocAsync")
    if MODE == "old" and "skip_actions" in kw:
        raise TypeError("unexpected keyword argument 'skip_actions'")
    _recording = dict(max_entries=max_entries, context=context, stacks=stacks, **kw)

def empty(addr, size):  # a tensor allocation: recorded with its caller's frames, innermost first
    if _recording is None:
        return
    frames, f = [], sys._getframe(1)
    while f:
        frames.append({"filename": f.f_code.co_filename, "line": f.f_lineno, "name": f.f_code.co_name})
        f = f.f_back
    _entries.append({"action": "segment_alloc", "addr": addr, "size": size * 2, "stream": 0, "time_us": 5, "frames": frames})
    _entries.append({"action": "alloc", "addr": addr, "size": size, "stream": 7, "time_us": 6, "frames": frames})

def _snapshot():
    return {"device_traces": [_entries], "segments": []}
""",
}

PROGRAM = """
import torch
def make_bucket():
    torch.cuda.memory.empty(4096, 512)
torch.cuda.start()
make_bucket()
print("program output")
"""


def run(site_dir, fake_lib, workdir, wanted=True, preload=True, mode="", program=PROGRAM, user_site=True):
    out = os.path.join(workdir, "handed.txt")
    if os.path.exists(out):
        os.remove(out)
    env = dict(os.environ)
    path = [site_dir, os.path.join(workdir, "pkgs")]
    if user_site:
        path.append(os.path.join(workdir, "user_site"))
    env["PYTHONPATH"] = os.pathsep.join(path)
    env["FAKE_TRACER_OUT"] = out
    env["FAKE_TRACER_WANTED"] = "1" if wanted else "0"
    env["FAKE_TORCH_MODE"] = mode
    if preload:
        env["LD_PRELOAD"] = fake_lib
    else:
        env.pop("LD_PRELOAD", None)
    script = os.path.join(workdir, "train.py")
    with open(script, "w") as f:
        f.write(program)
    p = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True, cwd=workdir)
    handed = open(out).read() if os.path.exists(out) else ""
    return p, handed


def main():
    site_dir, fake_lib = sys.argv[1:3]
    failures = []

    def expect(cond, what):
        if not cond:
            failures.append(what)

    with tempfile.TemporaryDirectory() as workdir:
        for rel, text in FAKE_TORCH.items():
            path = os.path.join(workdir, "pkgs", rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        os.makedirs(os.path.join(workdir, "user_site"))
        with open(os.path.join(workdir, "user_site", "sitecustomize.py"), "w") as f:
            f.write("print('user sitecustomize ran')\n")

        p, handed = run(site_dir, fake_lib, workdir)
        expect(p.returncode == 0 and p.stdout.splitlines() == ["user sitecustomize ran", "program output"],
               f"history on: output or exit changed: {p.returncode} {p.stdout!r} {p.stderr!r}")
        lines = handed.splitlines()
        expect(lines[:2] == ["history", "streamhaz-allocator-history 1"], f"history on: handed {handed!r}")
        expect("alloc 0 4096 512 7 6" in lines, f"history on: no alloc line (segment allocs are left out): {handed!r}")
        expect(not any(x.startswith("alloc 0 4096 1024") for x in lines), "history on: a segment_alloc was handed over")
        frames = [x.split("\t") for x in lines if x.startswith("frame\t")]
        expect(len(frames) >= 2 and frames[0][2] == "make_bucket" and frames[0][3].endswith("train.py")
               and frames[1][2] == "<module>", f"history on: frames not innermost first: {frames}")

        p, handed = run(site_dir, fake_lib, workdir, mode="old")
        expect("alloc 0 4096 512 7 6" in handed, f"a PyTorch without skip_actions: nothing handed over: {handed!r}")

        p, handed = run(site_dir, fake_lib, workdir, mode="refuses")
        expect(p.returncode == 0 and "program output" in p.stdout, "refused: the program was disturbed")
        expect(handed.startswith("unavailable\n") and "not supported by cudaMallocAsync" in handed,
               f"refused: the reason was not handed over: {handed!r}")

        p, handed = run(site_dir, fake_lib, workdir, wanted=False)
        expect(handed == "" and p.stdout.splitlines() == ["user sitecustomize ran", "program output"],
               f"not wanted: {handed!r} {p.stdout!r}")

        p, handed = run(site_dir, fake_lib, workdir, preload=False)
        expect(handed == "" and p.returncode == 0 and p.stderr == "" and "user sitecustomize ran" in p.stdout,
               f"no tracer: {p.returncode} {p.stdout!r} {p.stderr!r}")

        p, handed = run(site_dir, fake_lib, workdir, program="import torch\nprint('no cuda')\n")
        expect(handed == "" and p.stdout.splitlines()[-1] == "no cuda", f"CUDA never started: {handed!r}")

        p, handed = run(site_dir, fake_lib, workdir, user_site=False, program="import sys\nsys.exit(3)\n")
        expect(p.returncode == 3 and p.stderr == "", f"exit status changed: {p.returncode} {p.stderr!r}")

    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
