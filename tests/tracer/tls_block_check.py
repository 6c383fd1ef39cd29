#!/usr/bin/env python3
"""The tracer's thread-local block stays small enough for a dlopen to place it.

The tracer is built with initial-exec TLS (tracer/core/include/streamhaz/tracer/per_thread.h),
so a process that opens it with dlopen (CUDA_INJECTION64_PATH alone, no LD_PRELOAD) must find
room for the whole block in the static TLS glibc keeps spare (about 1.7 KiB in a bare process,
shared with every other initial-exec library it opens); past that dlopen fails ("cannot allocate
memory in static TLS block") and the run goes untraced without a word. Checks that the tracer is
built initial-exec (at most one module-id relocation: libstdc++'s exception globals, built
global-dynamic), that its block is within BUDGET, and that Python opens it with the spare static
TLS cut to what holds about BUDGET bytes.
  tls_block_check.py TRACER_SO STUB_DRIVER_DIR"""
import os
import subprocess
import sys

BUDGET = 512  # bytes: a third of what a bare process leaves, so that other libraries find room
# glibc's spare static TLS cut down (glibc.rtld tunables): places 512 bytes, not 576.
SMALL_SURPLUS = "glibc.rtld.nns=1:glibc.rtld.optional_static_tls=256"


def tls_bytes(library):
    headers = subprocess.run(["readelf", "-lW", library], capture_output=True, text=True, check=True).stdout
    for line in headers.splitlines():
        fields = line.split()
        if fields and fields[0] == "TLS":
            return int(fields[5], 16)  # MemSiz
    return 0


def module_id_relocations(library):
    relocations = subprocess.run(["readelf", "-rW", library], capture_output=True, text=True, check=True).stdout
    return sum("DTPMOD64" in line for line in relocations.splitlines())


def main():
    library, stub_dir = sys.argv[1], sys.argv[2]
    dynamic = module_id_relocations(library)
    if dynamic > 1:
        sys.exit(f"tls_block_check: {library} has {dynamic} module-id (global-dynamic TLS) relocations: "
                 "some of it is not built with -ftls-model=initial-exec")
    size = tls_bytes(library)
    print(f"thread-local block: {size} bytes (budget {BUDGET})")
    if size > BUDGET:
        sys.exit(f"tls_block_check: {library}'s thread-local block is {size} bytes, over {BUDGET}: "
                 "move large thread_locals into PerThread (per_thread.h)")
    env = dict(os.environ, LD_LIBRARY_PATH=stub_dir, GLIBC_TUNABLES=SMALL_SURPLUS)
    opened = subprocess.run([sys.executable, "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1])", library],
                            env=env, capture_output=True, text=True)
    if opened.returncode != 0:
        why = (opened.stderr.strip().splitlines() or ["no message"])[-1]
        sys.exit(f"tls_block_check: Python could not open {library} with {SMALL_SURPLUS}: {why}")
    print(f"opened by dlopen from Python with {SMALL_SURPLUS}")


if __name__ == "__main__":
    main()
