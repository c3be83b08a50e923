#!/usr/bin/env python3
"""Extracts the uncompressed vmlinux ELF (which keeps its .BTF section) from a bzImage.

Usage: extract-vmlinux.py BZIMAGE OUTPUT
The payload is found by trying each known compression magic until one yields an ELF.
"""
import subprocess
import sys

COMPRESSORS = {b"\x28\xb5\x2f\xfd": "zstd", b"\xfd7zXZ\x00": "xz", b"\x1f\x8b\x08": "gzip"}


def extract(image: bytes) -> bytes:
    for magic, tool in COMPRESSORS.items():
        offset = image.find(magic)
        while offset != -1:
            out = subprocess.run([tool, "-dc"], input=image[offset:], capture_output=True).stdout
            if out[:4] == b"\x7fELF":
                return out
            offset = image.find(magic, offset + 1)
    sys.exit(f"extract-vmlinux: no compressed ELF found in {sys.argv[1]}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: extract-vmlinux.py BZIMAGE OUTPUT")
    with open(sys.argv[1], "rb") as f:
        elf = extract(f.read())
    with open(sys.argv[2], "wb") as f:
        f.write(elf)
