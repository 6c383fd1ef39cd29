#!/usr/bin/env python3
"""The tracer's thread-local block stays small enough for a dlopen to place it.

The tracer is built with initial-exec TLS (tracer/core/include/streamhaz/tracer/per_thread.h),
so a process that opens it with dlopen (CUDA_INJECTION64_PATH alone, no LD_PRELOAD) must find
room for the whole block in the static TLS glibc keeps spare, some 500 bytes once Python is up;
past that dlopen fails ("cannot allocate memory in static TLS block") and the run goes untraced.
Checks the block's size in the library's program headers, then opens it from Python.
  tls_block_check.py TRACER_SO STUB_DRIVER_DIR"""
import os
import subprocess
import sys

BUDGET = 512  # bytes: what a Python process has been seen to place, with room to spare


def tls_bytes(library):
    headers = subprocess.run(["readelf", "-lW", library], capture_output=True, text=True, check=True).stdout
    for line in headers.splitlines():
        fields = line.split()
        if fields and fields[0] == "TLS":
            return int(fields[5], 16)  # MemSiz
    return 0


def main():
    library, stub_dir = sys.argv[1], sys.argv[2]
    size = tls_bytes(library)
    print(f"thread-local block: {size} bytes (budget {BUDGET})")
    if size > BUDGET:
        sys.exit(f"tls_block_check: {library}'s thread-local block is {size} bytes, over {BUDGET}: "
                 "move large thread_locals into PerThread (per_thread.h)")
    env = dict(os.environ, LD_LIBRARY_PATH=stub_dir)
    opened = subprocess.run([sys.executable, "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1])", library],
                            env=env, capture_output=True, text=True)
    if opened.returncode != 0:
        sys.exit(f"tls_block_check: Python could not open {library}: {opened.stderr.strip().splitlines()[-1]}")
    print("opened by dlopen from Python")


if __name__ == "__main__":
    main()
