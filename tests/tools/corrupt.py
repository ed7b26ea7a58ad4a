#!/usr/bin/env python3
"""Write damaged copies of an EROFS image, deterministically, for robustness tests.

Usage: corrupt.py IMAGE OUTDIR [--seeds FIRST-LAST] [--flips N] [--start OFFSET] [--end OFFSET]
                  [--superblock]

For every seed, OUTDIR/flip-SEED.img is IMAGE with N bytes (default 1) at seeded random offsets
in [START, END) (default: byte 4096 to the end) XORed with a seeded non-zero value. The result
depends only on IMAGE and the arguments.

--superblock: flip bytes in the 128-byte on-disk superblock (offsets 1024..1151) instead, and then
recompute the superblock checksum (crc32c, as the kernel checks it when the sb_csum feature is
set), so that the damage gets past the checksum into the reader's field checks. The checksum
field itself (bytes 1028..1031) is never flipped.

Prints one line per written image: "SEED OFFSET[,OFFSET...] PATH".
"""

import argparse
import os
import random
import struct
import sys

SB_OFFSET = 1024
SB_SIZE = 128
SB_CSUM_FEATURE = 0x1   # EROFS_FEATURE_COMPAT_SB_CHKSUM


def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c_raw(crc, data):
    """crc32c without the final inversion, like the kernel's crc32c(seed, data, len)."""
    for byte in data:
        crc = _TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc


def fix_sb_checksum(img):
    feature_compat = struct.unpack_from("<I", img, SB_OFFSET + 8)[0]
    if not feature_compat & SB_CSUM_FEATURE:
        return
    blkszbits = img[SB_OFFSET + 12]
    bs = 1 << blkszbits if 9 <= blkszbits <= 16 else 4096
    length = bs - SB_OFFSET if bs > SB_OFFSET else bs
    length = min(length, len(img) - SB_OFFSET)
    sb = bytearray(img[SB_OFFSET:SB_OFFSET + length])
    sb[4:8] = b"\0\0\0\0"
    struct.pack_into("<I", img, SB_OFFSET + 4, crc32c_raw(0xFFFFFFFF, sb))


def parse_seeds(s):
    if "-" in s:
        a, b = s.split("-", 1)
        return range(int(a), int(b) + 1)
    return range(int(s), int(s) + 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("image")
    ap.add_argument("outdir")
    ap.add_argument("--seeds", type=parse_seeds, default=parse_seeds("1-100"))
    ap.add_argument("--flips", type=int, default=1)
    ap.add_argument("--start", type=int, default=4096)
    ap.add_argument("--end", type=int, default=None)
    ap.add_argument("--superblock", action="store_true")
    args = ap.parse_args()

    base = open(args.image, "rb").read()
    if args.superblock:
        offsets = [o for o in range(SB_OFFSET, SB_OFFSET + SB_SIZE)
                   if not SB_OFFSET + 4 <= o < SB_OFFSET + 8]
    else:
        end = len(base) if args.end is None else min(args.end, len(base))
        if not 0 <= args.start < end:
            print("corrupt.py: empty range [%d, %d)" % (args.start, end), file=sys.stderr)
            return 2
        offsets = None
    os.makedirs(args.outdir, exist_ok=True)
    for seed in args.seeds:
        rng = random.Random(seed)
        img = bytearray(base)
        where = []
        for _ in range(args.flips):
            off = rng.choice(offsets) if offsets else rng.randrange(args.start, end)
            img[off] ^= rng.randrange(1, 256)
            where.append(off)
        if args.superblock:
            fix_sb_checksum(img)
        path = os.path.join(args.outdir, "flip-%d.img" % seed)
        with open(path, "wb") as f:
            f.write(img)
        print("%d %s %s" % (seed, ",".join(map(str, where)), path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
