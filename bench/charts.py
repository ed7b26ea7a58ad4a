#!/usr/bin/env python3
"""PNG charts for a bench/run results directory: charts.py RESULTS_DIR

Reads summary.csv and meta.json, writes
  file_size_vs_throughput.png   single file: image size vs seq / rand / rand9m MiB/s (kernel mount)
  tree_size_vs_throughput.png   tree: image size vs ls -lR (entries/s) and tar / read-all (MiB/s)
  build_time.png                build wall and CPU time per image, both data sets
  extract_time.png              extraction time per image and tool
and prints the names it wrote. Exit status 3: matplotlib is not installed (apt python3-matplotlib).
Error bars span min..max when a figure has more than one run.
"""

import csv
import json
import os
import sys

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("charts.py: python3-matplotlib is not installed", file=sys.stderr)
    sys.exit(3)

NAMES = {"erofs-kit": "erofs-kit", "mkfs.erofs": "mkfs.erofs (erofs-utils)", "mksquashfs": "squashfs",
         "mkfs.ext4": "ext4"}
COLORS = {"erofs-kit": "#d62728", "mkfs.erofs": "#1f77b4", "mksquashfs": "#2ca02c", "mkfs.ext4": "#7f7f7f"}
MARKERS = {"erofs-kit": "o", "mkfs.erofs": "s", "mksquashfs": "^", "mkfs.ext4": "D"}


def load(res):
    with open(os.path.join(res, "summary.csv"), newline="") as f:
        rows = [r for r in csv.DictReader(f)]
    with open(os.path.join(res, "meta.json")) as f:
        meta = json.load(f)
    return rows, meta


def get(rows, ds, image, access, metric, reader=None):
    for r in rows:
        if (r["dataset"], r["image"], r["access"], r["metric"]) == (ds, image, access, metric) and \
                (reader is None or r["reader"] == reader) and r["status"] == "ok":
            return float(r["median"]), float(r["min"]), float(r["max"]), int(r["n"])
    return None


def images(rows, ds):
    out = []
    for r in rows:
        if r["dataset"] == ds and (r["image"], r["label"], r["builder"]) not in out and r["access"] == "build":
            out.append((r["image"], r["label"], r["builder"]))
    return out


def short(label, builder):
    s = label
    for p in ("erofs-kit ", "mkfs.erofs ", "squashfs ", "ext4 "):
        if s.startswith(p):
            s = s[len(p):]
    return s.replace(" -E ", " ")


def scatter(rows, meta, ds, panels, fname, title):
    imgs = [i for i in images(rows, ds) if get(rows, ds, i[0], "build", "size_bytes")]
    if not imgs:
        return None
    n = len(panels)
    cols = 3 if n == 3 else 2
    nrows = (n + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(6.2 * cols, 4.8 * nrows), squeeze=False)
    for ax, (metric, ylabel, conv) in zip(axes.flat, panels):
        seen = set()
        for image, label, builder in imgs:
            size = get(rows, ds, image, "build", "size_bytes")[0] / 2**20
            v = get(rows, ds, image, "kernel", metric)
            if not v:
                continue
            med, lo, hi = (conv(x) for x in v[:3])
            lo, hi = min(lo, hi), max(lo, hi)
            ax.errorbar([size], [med], yerr=[[med - lo], [hi - med]] if v[3] > 1 else None,
                        fmt=MARKERS.get(builder, "o"), color=COLORS.get(builder, "k"), capsize=3,
                        label=None if builder in seen else NAMES.get(builder, builder), markersize=7)
            seen.add(builder)
            ax.annotate(short(label, builder), (size, med), textcoords="offset points", xytext=(5, 4),
                        fontsize=7)
        ax.set_xlabel("image size (MiB)")
        ax.set_ylabel(ylabel)
        ax.set_title(ylabel.split(" (")[0])
        ax.grid(True, alpha=0.3)
        if seen:
            ax.legend(fontsize=8)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    note = f"{meta['runs']} run(s) per point" + (", warm cache" if meta.get("warm") else ", caches dropped")
    fig.suptitle(f"{title} — {note}")
    fig.tight_layout()
    fig.savefig(fname, dpi=110)
    plt.close(fig)
    return os.path.basename(fname)


def bars(rows, meta, groups, fname, title, xlabel):
    """groups: list of (panel title, ds, [(access, reader, metric, legend)])."""
    panels = []
    for ptitle, ds, series in groups:
        imgs = [i for i in images(rows, ds)]
        data = []
        for image, label, builder in imgs:
            vals = [get(rows, ds, image, acc, met, rd) for acc, rd, met, _ in series]
            if any(vals):
                data.append((label, builder, vals))
        if data:
            panels.append((ptitle, series, data))
    if not panels:
        return None
    height = sum(max(2.0, 0.32 * len(d) * max(1, len(s)) / 1.6 + 1.2) for _, s, d in panels)
    fig, axes = plt.subplots(len(panels), 1, figsize=(10, height), squeeze=False)
    for ax, (ptitle, series, data) in zip(axes[:, 0], panels):
        k = len(series)
        h = 0.8 / k
        ys = range(len(data))
        for j, (_, _, _, legend) in enumerate(series):
            med, err_lo, err_hi, colors = [], [], [], []
            for label, builder, vals in data:
                v = vals[j]
                med.append(v[0] if v else 0)
                err_lo.append(v[0] - v[1] if v and v[3] > 1 else 0)
                err_hi.append(v[2] - v[0] if v and v[3] > 1 else 0)
                colors.append(COLORS.get(builder, "k"))
            ax.barh([y + (j - (k - 1) / 2) * h for y in ys], med, height=h, xerr=[err_lo, err_hi],
                    color=colors, alpha=1.0 - 0.45 * j, edgecolor="black", linewidth=0.4,
                    label=legend, capsize=2)
        ax.set_yticks(list(ys))
        ax.set_yticklabels([d[0] for d in data], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel(xlabel)
        ax.set_title(ptitle)
        ax.grid(True, axis="x", alpha=0.3)
        if k > 1:
            ax.legend(fontsize=8)
    fig.suptitle(f"{title} — {meta['runs']} run(s) per bar")
    fig.tight_layout()
    fig.savefig(fname, dpi=110)
    plt.close(fig)
    return os.path.basename(fname)


def main():
    res = sys.argv[1]
    rows, meta = load(res)
    out = []
    mib = lambda x: x  # noqa: E731
    out.append(scatter(rows, meta, "file", [
        ("seq_mibs", "seq read (MiB/s)", mib), ("rand_mibs", "rand read (MiB/s)", mib),
        ("rand9m_mibs", "rand9m read (MiB/s)", mib)],
        os.path.join(res, "file_size_vs_throughput.png"), "Single file: size vs read throughput"))
    tree = meta.get("data", {}).get("tree")
    if tree:
        b, e = tree["bytes"], tree["entries"]
        out.append(scatter(rows, meta, "tree", [
            ("lsR_s", "ls -lR (entries/s)", lambda t: e / t),
            ("tar_s", "tar cf - . | cat (MiB/s)", lambda t: b / 2**20 / t),
            ("read_random_s", "read all, random order (MiB/s)", lambda t: b / 2**20 / t),
            ("read_size_s", "read all, size order (MiB/s)", lambda t: b / 2**20 / t)],
            os.path.join(res, "tree_size_vs_throughput.png"), "Tree: size vs throughput"))
    out.append(bars(rows, meta, [
        ("single file", "file", [("build", None, "build_wall_s", "wall"), ("build", None, "build_cpu_s", "CPU")]),
        ("tree", "tree", [("build", None, "build_wall_s", "wall"), ("build", None, "build_cpu_s", "CPU")])],
        os.path.join(res, "build_time.png"), "Build time (solid: wall, light: CPU)", "seconds"))
    ex = [("extract", "erofs extract", "extract_s", "erofs extract"),
          ("extract", "fsck.erofs --extract", "extract_s", "fsck.erofs --extract"),
          ("extract", "unsquashfs", "extract_s", "unsquashfs")]
    out.append(bars(rows, meta, [("single file", "file", ex), ("tree", "tree", ex)],
                    os.path.join(res, "extract_time.png"),
                    "Extraction time (bars: erofs extract, fsck.erofs --extract, unsquashfs)", "seconds"))
    for o in out:
        if o:
            print(o)


if __name__ == "__main__":
    main()
