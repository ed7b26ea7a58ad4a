"""The size matrix of `bench/mkfs-compare --matrix`: erofs-kit against mkfs.erofs 1.9.3 (the current
reference, from ../shared/peers where present) and mksquashfs, cell by cell.

Every algorithm (lz4hc, lzma, deflate, zstd at the levels below) x every layout option below, on
each data set: image bytes, build wall and CPU time, peak RSS. mksquashfs builds the same data
with the same algorithm (xz for lzma, gzip for deflate) and block size (-b = -C); the
tail-packing cells compare with the smaller of mkfs.erofs 1.9.3 and mksquashfs.

Resumable: rows already in DIR/matrix.csv are kept and their cells not built again, so a long run
can be done in sittings (--algorithms, --datasets and --layouts pick parts).
"""
import csv
import os
import re
import statistics

# (name, erofs -z spec, mksquashfs options): the same algorithm and level everywhere; mksquashfs's
# xz and lz4 -Xhc take no level (its defaults are xz's preset 6 and LZ4HC's level 9).
ALGORITHMS = [
    ("lz4hc", "lz4hc,9", ["-comp", "lz4", "-Xhc"]),
    ("lzma", "lzma,6", ["-comp", "xz"]),
    ("deflate", "deflate,9", ["-comp", "gzip", "-Xcompression-level", "9"]),
    ("zstd", "zstd,15", ["-comp", "zstd", "-Xcompression-level", "15"]),
]
# (cell name, -C, -E options; empty: none). The tail-packing ones are compared with squashfs too.
LAYOUTS = [
    ("-C4096", 4096, ""),
    ("-C65536", 65536, ""),
    ("-C65536 ztailpacking", 65536, "ztailpacking"),
    ("-C65536 fragments", 65536, "fragments"),
    ("-C65536 ztailpacking,fragments,dedupe", 65536, "ztailpacking,fragments,dedupe"),
    ("-C131072 ztailpacking,fragments,dedupe", 131072, "ztailpacking,fragments,dedupe"),
    ("-C1048576 all-fragments", 1048576, "all-fragments"),
]
TAIL_PACKING = {"ztailpacking,fragments,dedupe"}
KEYS = ["dataset", "algorithm", "layout", "builder", "block", "run", "size_bytes", "wall_s", "cpu_s", "rss_kib"]


def peer_mkfs(root):
    p = os.path.join(os.path.dirname(root), "shared", "peers", "erofs-utils-1.9.3", "bin", "mkfs.erofs")
    return p if os.access(p, os.X_OK) else None


def load(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return [dict(r) for r in csv.DictReader(f)]


def run_matrix(a, timed, warm):
    """Builds every missing cell; appends rows to a.results/matrix.csv. Returns all rows."""
    path = os.path.join(a.results, "matrix.csv")
    rows = load(path)
    done = {(r["dataset"], r["algorithm"], r["layout"], r["builder"], r["run"]) for r in rows}
    ref = peer_mkfs(a.root)
    if not ref:
        print("SKIPPED: mkfs.erofs 1.9.3 (../shared/peers/erofs-utils-1.9.3) is absent: no reference column")
    new = not os.path.exists(path)
    f = open(path, "a", newline="")
    w = csv.DictWriter(f, KEYS, lineterminator="\n")
    if new:
        w.writeheader()
    img = os.path.join(a.work, "img")
    tf = os.path.join(a.work, "time.out")
    algs = [x for x in ALGORITHMS if x[0] in a.algorithms.split(",")]
    try:
        for ds in a.datasets.split(","):
            src = os.path.join(a.cache, ds)
            warm(src)
            for name, spec, sq_opts in algs:
                builds = []
                for layout, c, ext in LAYOUTS:
                    if not re.fullmatch(a.layouts, layout):
                        continue
                    e = [f"-E{ext}"] if ext else []
                    builds.append((layout, "erofs-kit", c, [a.erofs, "mkfs", "-q", f"-z{spec}", f"-C{c}"] + e + [img, src]))
                    if ref:
                        builds.append((layout, "mkfs.erofs 1.9.3", c,
                                       [ref, "-d0", "--quiet", f"-z{spec}", f"-C{c}"] + e + [img, src]))
                for c in sorted({c for _, c, _ in LAYOUTS}):
                    if not re.fullmatch(a.layouts, f"-b {c}"):
                        continue
                    builds.append((f"-b {c}", "mksquashfs", c, ["mksquashfs", src, img, "-noappend", "-no-progress",
                                                                "-quiet", "-b", str(c)] + sq_opts))
                for run in range(1, a.runs + 1):
                    # Every other run in the reverse order: on a VM whose speed drifts over minutes,
                    # a builder always run first (or last) would carry the drift in every run.
                    # Alternating cancels it from medians of an even number of runs.
                    for layout, builder, c, cmd in (builds if run % 2 else builds[::-1]):
                        if (ds, name, layout, builder, str(run)) in done:
                            continue
                        if os.path.exists(img):
                            os.unlink(img)
                        wall, cpu, rss, _ = timed(cmd, tf)
                        row = dict(dataset=ds, algorithm=name, layout=layout, builder=builder, block=c, run=run,
                                   size_bytes=os.path.getsize(img), wall_s=wall, cpu_s=cpu, rss_kib=rss)
                        w.writerow(row)
                        f.flush()
                        rows.append({k: str(v) for k, v in row.items()})
                        print(f"{ds} {name} {layout} {builder} run {run}: {row['size_bytes']} bytes, {wall:.2f} s, "
                              f"{rss // 1024} MiB", flush=True)
    finally:
        f.close()
        if os.path.exists(img):
            os.unlink(img)
    return rows


TARGETS = ("Size at most 1.00x mkfs.erofs 1.9.3 in every cell, and with -Eztailpacking,fragments,dedupe at "
           "most 1.00x the smaller of 1.9.3 and mksquashfs; build wall at most 1.0x 1.9.3's; peak RSS under "
           "256 MiB.")


def cell_misses(cell, ext, ek, ref, sq, ew, rw, rss):
    """The targets one cell misses (None: that builder has no figure), a line each."""
    missed = []
    if ref and ek > ref:
        missed.append(f"{cell}: {ek / ref:.4f}x mkfs.erofs 1.9.3's size")
    if ext in TAIL_PACKING and ref and sq and ek > min(ref, sq):
        missed.append(f"{cell}: {ek / min(ref, sq):.4f}x the smaller of 1.9.3 and mksquashfs")
    if rw and ew > rw:
        missed.append(f"{cell}: build wall {ew / rw:.2f}x mkfs.erofs 1.9.3's")
    if rss >= 256:
        missed.append(f"{cell}: peak RSS {rss:.0f} MiB")
    return missed


def report(rows, commit_text, machine):
    """The matrix as Markdown lines: one table per data set, a ratio in every cell, targets checked."""

    def med(ds, alg, layout, builder, key):
        v = [float(r[key]) for r in rows if (r["dataset"], r["algorithm"], r["layout"], r["builder"]) ==
             (ds, alg, layout, builder)]
        return statistics.median(v) if v else None

    L = ["# erofs-kit against mkfs.erofs 1.9.3 and mksquashfs: image size, build time, memory", "", machine, "",
         f"Measured erofs-kit: commit {commit_text}.", "",
         "Each cell: erofs-kit's image bytes, then the ratio to mkfs.erofs 1.9.3 (`ref`) and to "
         "mksquashfs at the same algorithm and block size (`sq`), then build wall seconds "
         "(erofs-kit / 1.9.3) and erofs-kit's peak RSS. Levels: lz4hc 9, lzma 6 (mksquashfs: xz), "
         "deflate 9 (gzip 9), zstd 15. Produced by `bench/mkfs-compare --matrix`.", ""]
    missed = []
    for ds in sorted({r["dataset"] for r in rows}):
        L += [f"## {ds}", "", "| algorithm | layout | erofs-kit bytes | vs ref | vs sq | wall s (ek / ref) | RSS MiB |",
              "|---|---|--:|--:|--:|--:|--:|"]
        for name, _, _ in ALGORITHMS:
            for layout, c, ext in LAYOUTS:
                ek = med(ds, name, layout, "erofs-kit", "size_bytes")
                if ek is None:
                    continue
                ref = med(ds, name, layout, "mkfs.erofs 1.9.3", "size_bytes")
                sq = med(ds, name, f"-b {c}", "mksquashfs", "size_bytes")
                ew, rw = med(ds, name, layout, "erofs-kit", "wall_s"), med(ds, name, layout, "mkfs.erofs 1.9.3", "wall_s")
                rss = med(ds, name, layout, "erofs-kit", "rss_kib") / 1024
                vs_ref = f"{ek / ref:.4f}" if ref else "-"
                vs_sq = f"{ek / sq:.4f}" if sq else "-"
                walls = f"{ew:.1f} / {rw:.1f}" if rw else f"{ew:.1f}"
                L.append(f"| {name} | {layout} | {ek:,.0f} | {vs_ref} | {vs_sq} | {walls} | {rss:.0f} |")
                missed += cell_misses(f"{ds} {name} {layout}", ext, ek, ref, sq, ew, rw, rss)
        L.append("")
    L += ["## Targets", "", TARGETS, ""]
    L += [f"- missed: {m}" for m in missed] or ["- every cell above met every target"]
    return L
