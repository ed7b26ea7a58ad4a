#!/usr/bin/env python3
"""Read random ranges of files on mounted images from many threads and check every byte.

Usage: fuse_stress.py SOURCE MOUNT [MOUNT...] [--threads N] [--seconds S] [--max-len BYTES]
                      [--min-size BYTES] [--seed N]

SOURCE is the directory the images were built from; each MOUNT is an image of it, mounted. The
regular files of SOURCE of at least --min-size bytes (default 1 MiB) are read into memory; then
--threads threads (default 8), for --seconds seconds (default 10), each pick a mount and a file
at random and read one random range of it (offset anywhere in the file, a few past its end too;
length 1 to --max-len bytes, default 1 MiB) with pread(), comparing the bytes with the source.
Half of the threads open the files with O_DIRECT (every read goes to the filesystem, none is
served from the page cache); the others read through the page cache and drop it now and then
(posix_fadvise DONTNEED), so the filesystem keeps being asked. A read that fails, a short read
before the end of the file, or a byte that differs is an error.

Prints "fuse_stress: R reads, B bytes verified, F files on M mounts, T threads, S s, E errors"
(and up to 20 lines describing errors before it). Exit status: 0 if every read was right,
1 on any error, 2 on a usage error (no files, a mount without the file, ...).
"""

import argparse
import os
import random
import sys
import threading
import time

MiB = 1024 * 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source")
    ap.add_argument("mounts", nargs="+")
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--max-len", type=int, default=MiB)
    ap.add_argument("--min-size", type=int, default=MiB)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    files = []                                  # (relative path, bytes)
    for d, dirs, names in os.walk(args.source):
        dirs.sort()
        for n in sorted(names):
            p = os.path.join(d, n)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            if os.path.getsize(p) < args.min_size:
                continue
            with open(p, "rb") as f:
                files.append((os.path.relpath(p, args.source), f.read()))
    if not files:
        print("fuse_stress: no regular file of %d bytes or more in %s" % (args.min_size, args.source),
              file=sys.stderr)
        return 2
    for m in args.mounts:
        for rel, data in files:
            p = os.path.join(m, rel)
            try:
                size = os.stat(p).st_size
            except OSError as e:
                print("fuse_stress: %s: %s" % (p, e), file=sys.stderr)
                return 2
            if size != len(data):
                print("fuse_stress: %s: size %d, source has %d" % (p, size, len(data)), file=sys.stderr)
                return 2

    lock = threading.Lock()
    totals = {"reads": 0, "bytes": 0, "errors": 0}
    messages = []
    deadline = time.monotonic() + args.seconds

    def error(msg):
        with lock:
            totals["errors"] += 1
            if len(messages) < 20:
                messages.append(msg)

    def worker(index):
        rng = random.Random(args.seed * 1000 + index)
        direct = index % 2 == 0 and hasattr(os, "O_DIRECT")
        flags = os.O_RDONLY | (os.O_DIRECT if direct else 0)
        fds = {}
        reads = nbytes = 0
        try:
            for m in args.mounts:
                for rel, _ in files:
                    p = os.path.join(m, rel)
                    fds[(m, rel)] = os.open(p, flags)
        except OSError as e:
            error("thread %d: open: %s" % (index, e))
            for fd in fds.values():
                os.close(fd)
            return
        try:
            while time.monotonic() < deadline:
                m = rng.choice(args.mounts)
                rel, data = rng.choice(files)
                fd = fds[(m, rel)]
                size = len(data)
                if rng.random() < 0.02:
                    off = size + rng.randrange(0, 4096)          # at or past the end
                elif rng.random() < 0.05:
                    off = max(0, size - rng.randrange(1, 65536))  # ending at or past the end
                else:
                    off = rng.randrange(0, size)
                length = rng.randrange(1, args.max_len + 1)
                where = "%s/%s [%d, +%d)%s" % (m, rel, off, length, " O_DIRECT" if direct else "")
                try:
                    got = os.pread(fd, length, off)
                except OSError as e:
                    error("%s: %s" % (where, e))
                    continue
                want = data[off:off + length]
                if got != want:
                    if len(got) != len(want):
                        what = "%d bytes read, expected %d" % (len(got), len(want))
                    else:
                        first = next(i for i in range(len(got)) if got[i] != want[i])
                        what = "first wrong byte at file offset %d" % (off + first)
                    error("%s: %s" % (where, what))
                    continue
                reads += 1
                nbytes += len(got)
                if not direct and rng.random() < 0.2:
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            for fd in fds.values():
                os.close(fd)
            with lock:
                totals["reads"] += reads
                totals["bytes"] += nbytes

    start = time.monotonic()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(args.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    for msg in messages:
        print("fuse_stress: ERROR: %s" % msg)
    if totals["errors"] > len(messages):
        print("fuse_stress: ... %d more errors" % (totals["errors"] - len(messages)))
    print("fuse_stress: %d reads, %d bytes verified, %d files on %d mounts, %d threads, %.1f s, %d errors"
          % (totals["reads"], totals["bytes"], len(files), len(args.mounts), args.threads, elapsed,
             totals["errors"]))
    if totals["errors"] or totals["reads"] == 0:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
