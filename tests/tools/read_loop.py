#!/usr/bin/env python3
"""Read every file of a mount again and again, logging each read call, until the mount goes away.

Usage: read_loop.py MOUNT LOG [--seconds S] [--chunk BYTES]

The regular files below MOUNT are read front to back with O_DIRECT (every read reaches the
filesystem; none is served from the page cache), in chunks of --chunk bytes (default 256 KiB),
over and over, until MOUNT is no longer a mount point, a read or open fails, or --seconds
(default 30) pass. Each read call is one line of LOG:

    START_NS END_NS RESULT

with CLOCK_REALTIME nanoseconds (bash's $EPOCHREALTIME is on the same clock) and RESULT the
byte count or the errno name. A test unmounting MOUNT meanwhile can tell from LOG which reads
were in flight while it did. Exit status: 0 (also when reads failed because the mount went
away); 2 on a usage error (no file to read).
"""

import argparse
import errno
import mmap
import os
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mount")
    ap.add_argument("log")
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--chunk", type=int, default=256 * 1024)
    args = ap.parse_args()

    files = []
    for d, dirs, names in os.walk(args.mount):
        dirs.sort()
        for n in sorted(names):
            p = os.path.join(d, n)
            if not os.path.islink(p) and os.path.isfile(p) and os.path.getsize(p) > 0:
                files.append(p)
    if not files:
        print("read_loop: no file to read below %s" % args.mount, file=sys.stderr)
        return 2
    buf = mmap.mmap(-1, args.chunk)  # page-aligned, as O_DIRECT wants
    deadline = time.monotonic() + args.seconds
    with open(args.log, "w", buffering=1) as log:
        while time.monotonic() < deadline:
            for p in files:
                if not os.path.ismount(args.mount):
                    return 0
                try:
                    fd = os.open(p, os.O_RDONLY | os.O_DIRECT)
                except OSError as e:
                    log.write("0 0 open:%s\n" % errno.errorcode.get(e.errno, str(e.errno)))
                    return 0
                off = 0
                try:
                    while True:
                        start = time.time_ns()
                        try:
                            n = os.preadv(fd, [buf], off)
                            result = str(n)
                        except OSError as e:
                            n, result = -1, errno.errorcode.get(e.errno, str(e.errno))
                        log.write("%d %d %s\n" % (start, time.time_ns(), result))
                        if n < 0:
                            return 0
                        if n == 0:
                            break
                        off += n
                finally:
                    os.close(fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
