#!/usr/bin/env python3
"""Rewrites the `command` of trace headers so that bundled traces name no folder of the machine
that captured them: every argument under ROOT becomes relative to it, and a build folder's
bin/ programs are named by their file name alone.

usage: relative_trace_commands.py ROOT TRACE.shz...

The header is the JSON after the 16-byte preamble (docs/trace-format.md); only it and its length
change, the chunks that follow are copied as they are. Each file is rewritten beside itself and
renamed over the original.
"""
import json
import os
import struct
import sys


def relative(arg, root):
    if not arg.startswith(root + "/"):
        return arg
    rel = arg[len(root) + 1:]
    parts = rel.split("/")
    if len(parts) >= 3 and parts[-2] == "bin" and parts[0].startswith("build"):
        return parts[-1]
    return rel


def rewrite(path, root):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"SHZTRACE":
        sys.exit(f"{path}: not a streamhaz trace")
    version, length = struct.unpack("<II", data[8:16])
    header = json.loads(data[16:16 + length])
    header["command"] = [relative(a, root) for a in header.get("command", [])]
    text = json.dumps(header, separators=(",", ":")).encode()
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data[:8] + struct.pack("<II", version, len(text)) + text + data[16 + length:])
    os.replace(tmp, path)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    root = sys.argv[1].rstrip("/")
    for path in sys.argv[2:]:
        rewrite(path, root)


if __name__ == "__main__":
    main()
