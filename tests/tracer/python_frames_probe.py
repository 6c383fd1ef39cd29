#!/usr/bin/env python3
"""The tracer's Python frame reader against the interpreter running this script.

usage: python_frames_probe.py LIBRARY

LIBRARY is tests/tracer/python_frames_probe.cpp built as a shared library. It is called through
ctypes, which releases the GIL for the call, as PyTorch's bindings do around every operator: the
reader must then find this thread's frames, innermost first, with the lines and qualified names
Python itself reports. Exits 77 (skipped) on an interpreter version the reader does not know,
after checking that it says so.
"""
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
lib.streamhaz_probe_python_frames.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
failures = 0


def check(ok, what):
    global failures
    print(("ok    " if ok else "FAIL  ") + what)
    failures += 0 if ok else 1


def probe():
    """(attached, frames below this function): the reader's view from inside the ctypes call."""
    buf = ctypes.create_string_buffer(1 << 16)
    attached = lib.streamhaz_probe_python_frames(buf, len(buf))
    text = buf.value.decode()
    if not attached:
        return attached, text
    lines = text.strip().splitlines()
    check(lines[0].endswith(" probe"), f"innermost frame is the caller of the ctypes call: {lines[0]}")
    return attached, "\n".join(lines[1:])


def expected_here(depth=0):
    """(file, line, qualname) of the caller `depth` frames up, as Python reports it."""
    f = sys._getframe(depth + 1)
    return f.f_code.co_filename, f.f_lineno, f.f_code.co_qualname


class Model:
    def forward(self, depth):
        if depth:
            return self.forward(depth - 1)
        return probe(), expected_here()  # the probe and expected_here share this line


def run():
    (attached, text), (file, line, _) = Model().forward(3)
    if not attached:
        check(f"{sys.version_info.major}.{sys.version_info.minor}" in text, f"names the unknown version: {text}")
        return 77
    frames = [l.rsplit(" ", 1) for l in text.strip().splitlines()]
    print("\n".join(f"  {where} {fn}" for where, fn in frames))
    check(len(frames) >= 6, f"{len(frames)} frames (forward x4, run, <module>)")
    check(frames[0] == [f"{file}:{line}", "Model.forward"], f"innermost: {frames[0]}")
    check(all(f[1] == "Model.forward" for f in frames[:4]), "four Model.forward frames, innermost first")
    check(frames[4][1] == "run", f"then run: {frames[4]}")
    check(frames[-1][1] == "<module>", f"outermost <module>: {frames[-1]}")

    # A generator's frame, and a frame the reader meets again at another line.
    def gen():
        yield probe()[1]
    inner = next(gen()).strip().splitlines()
    check(inner[0].endswith("run.<locals>.gen") and inner[1].split(" ")[1] == "run", f"generator frame: {inner[:2]}")
    again = probe()[1].strip().splitlines()[0]
    check(again.startswith(f"{__file__}:") and again.endswith(" run") and again != inner[1], f"same code, new line: {again}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(run())
