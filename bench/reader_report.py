"""report.md of bench/reader-compare: the tables, then each target checked against the medians."""

import os
import platform
import statistics
import subprocess
import time

PAIRS = {"ek-4k": "sq-8k", "ek-64k": "sq-128k", "ek-64k-tfd": "sq-128k"}  # squashfs at the paired block size
PEER_EXTRACT = {"extract": "fsck.erofs 1.9.3 --extract=DIR", "fsck": "fsck.erofs 1.9.3 --extract"}
OURS = {"extract": "erofs extract", "fsck": "erofs fsck"}


def values(rows, key, **kw):
    out = []
    for r in rows:
        if r["status"] == "ok" and all(r[k] == v for k, v in kw.items()) and r[key] != "":
            out.append(float(r[key]))
    return out


def median(rows, key, **kw):
    v = values(rows, key, **kw)
    return statistics.median(v) if v else None


def fig(v, digits=2):
    if not v:
        return "-"
    m = statistics.median(v)
    return f"{m:.{digits}f}" if len(v) == 1 else f"{m:.{digits}f} ({min(v):.{digits}f}–{max(v):.{digits}f})"


def status_of(rows, **kw):
    bad = [r for r in rows if all(r[k] == v for k, v in kw.items()) and r["status"] != "ok"]
    return f"{bad[0]['status']}: {bad[0]['note']}" if bad else ""


def read_aware(a, rows):
    """The read-aware layout's targets (issue 17): the tree's tail-packed image read through the kernel
    within 1.2x (tar) and 1.5x (every file in random order) of the plain -C4096 image's time."""
    out = []
    for wl, bound in (("tar", 1.2), ("read_random", 1.5)):
        packed = median(rows, "wall_s", dataset="tree", image="ek-64k-tfd", task=wl, reader="kernel")
        plain = median(rows, "wall_s", dataset="tree", image="ek-4k", task=wl, reader="kernel")
        if packed and plain:
            out.append((f"tree, kernel mount, {wl}: the -C65536 -Eztailpacking,fragments,dedupe image {packed:.2f} s = "
                        f"{packed / plain:.2f}x the plain -C4096 image ({plain:.2f} s), at most {bound}x",
                        packed <= bound * plain))
    sizes = {im: os.path.join(a.images, f"tree-{im}.img") for im in ("ek-4k", "ek-64k-tfd")}
    if out and all(os.path.exists(p) for p in sizes.values()):
        out.append((f"tree image sizes: -C65536 -Eztailpacking,fragments,dedupe {os.path.getsize(sizes['ek-64k-tfd']):,} "
                    f"bytes, plain -C4096 {os.path.getsize(sizes['ek-4k']):,} bytes", None))
    return out


def read_aware_table(a, rows):
    """The tree's images through the kernel mount, side by side: the plain one, the tail-packed one
    and the tail-packed one with a hot list, each workload with its ratio to the plain image."""
    wls = [w for w in ("lsR", "tar", "read_random", "read_hot")
           if any(r["task"] == w and r["reader"] == "kernel" and r["dataset"] == "tree" for r in rows)]
    if not wls or not any(r["image"] == "hot-64k-tfd" for r in rows):
        return []
    L = ["### Read-aware layout: the tree through the kernel mount", "",
         "| image | bytes | " + " | ".join(wls) + " |", "|---|--:|" + "---|" * len(wls)]
    plain = {w: median(rows, "wall_s", dataset="tree", image="ek-4k", task=w, reader="kernel") for w in wls}
    images = [("ek-4k", "-C4096"), ("ek-64k-tfd", "-C65536 -Eztailpacking,fragments,dedupe"),
              ("hot-64k-tfd", f"the same with --hot-list ({a.hot_count:,} files)")]
    for im, what in images:
        path = os.path.join(a.images, f"tree-{im}.img")
        size = f"{os.path.getsize(path):,}" if os.path.exists(path) else "-"
        cells = []
        for w in wls:
            sel = dict(dataset="tree", image=im, task=w, reader="kernel")
            t = median(rows, "wall_s", **sel)
            cells.append(fig(values(rows, "wall_s", **sel)) + " s" + (f" = {t / plain[w]:.2f}x" if t and plain[w] else ""))
        L.append(f"| {what} | {size} | " + " | ".join(cells) + " |")
    return L + ["", f"Cells: wall time, and its ratio to the plain -C4096 image. `read_hot`: `cat` of the {a.hot_count:,} "
                "listed files (picked at random) in the list's order.", ""]


def write(a, rows, load_start, load_end):
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    mem = int(next(l.split()[1] for l in open("/proc/meminfo") if l.startswith("MemTotal"))) // 1024
    ver = lambda p: subprocess.run(["dpkg-query", "-W", "-f=${Version}", p], capture_output=True, text=True).stdout
    runs = max((int(r["run"]) for r in rows), default=0)
    L = [f"# erofs-kit readers against erofs-utils 1.9.3, squashfuse and the kernel ({time.strftime('%Y-%m-%d')})", "",
         f"Machine: {cpu}, {os.cpu_count()} cores, {mem} MiB, kernel {platform.release()}. "
         f"squashfuse {ver('squashfuse')}, fuse3 {ver('fuse3')}, liblz4 {ver('liblz4-1')}; erofs-utils 1.9.3 from "
         f"{a.peers}. Load average at start {load_start[0]:.2f}, at end {load_end[0]:.2f}.", "",
         f"Measured erofs-kit: commit {a.commit['text']}.", "",
         f"Median of {runs} runs with (min–max); caches dropped before every run, then {a.settle:g} s of rest "
         f"(freed memory goes back to the host of this VM a moment later), then {a.touch_mib} MiB mapped in and "
         "freed, so that the pages the run takes are present in the host (else every reader's runs came in two "
         "speeds). Images built by the measured "
         "erofs with lz4hc level 9, squashfs with `mksquashfs -comp lz4 -Xhc` at the paired block size. "
         f"Extractions written below {a.extract_to}. CPU is user + system time of every thread; for FUSE "
         "the daemon's (`daemon CPU`) and the reading commands' (`client CPU`) apart, the kernel's own "
         "work on a kernel mount is not counted. Produced by `bench/reader-compare`.", ""]
    datasets = [d for d in ("tree", "file") if any(r["dataset"] == d for r in rows)]
    targets = []
    for ds in datasets:
        L += [f"## {ds}", "", "### Extract and fsck (all data)", "",
              "| image | tool | wall s | CPU s | peak RSS MiB | note |", "|---|---|---|---|---|---|"]
        ek_images = sorted({r["image"] for r in rows if r["dataset"] == ds and r["image"].startswith("ek")})
        for im in ek_images:
            for task in ("extract", "fsck"):
                for tool in (OURS[task], PEER_EXTRACT[task]):
                    sel = dict(dataset=ds, image=im, task=task, reader=tool)
                    if not any(all(r[k] == v for k, v in sel.items()) for r in rows):
                        continue
                    L.append(f"| {im} | {tool} | {fig(values(rows, 'wall_s', **sel))} | {fig(values(rows, 'cpu_s', **sel))} | "
                             f"{fig([v / 1024 for v in values(rows, 'rss_kib', **sel)], 0)} | {status_of(rows, **sel)} |")
                ours = median(rows, "wall_s", dataset=ds, image=im, task=task, reader=OURS[task])
                peer = median(rows, "wall_s", dataset=ds, image=im, task=task, reader=PEER_EXTRACT[task])
                rss = max(values(rows, "rss_kib", dataset=ds, image=im, task=task, reader=OURS[task]), default=None)
                if ours and peer:
                    targets.append((f"{ds} {im}: {OURS[task]} {ours:.2f} s = {ours / peer:.2f}x {PEER_EXTRACT[task]} "
                                    f"({peer:.2f} s), at most 0.6x", ours <= 0.6 * peer))
                elif ours:
                    targets.append((f"{ds} {im}: {OURS[task]} {ours:.2f} s; {PEER_EXTRACT[task]} has no figure "
                                    f"({status_of(rows, dataset=ds, image=im, task=task, reader=PEER_EXTRACT[task]) or 'not run'})",
                                    None))
                if rss:
                    targets.append((f"{ds} {im}: {OURS[task]} peak RSS {rss / 1024:.0f} MiB, at most 64 MiB", rss <= 64 * 1024))
        L += [""]
        for im in ek_images:
            sq = PAIRS.get(im)
            readers = ["erofs mount", "erofsfuse 1.9.3", "kernel"]
            L += [f"### FUSE: {im} (squashfuse on {sq})", "",
                  "| workload | erofs mount | erofsfuse 1.9.3 | squashfuse | kernel | ÷ faster FUSE peer | ÷ kernel |",
                  "|---|---|---|---|---|---|---|"]
            for wl in sorted({r["task"] for r in rows
                              if r["dataset"] == ds and r["task"] not in ("extract", "fsck", "read_hot")},
                             key=lambda w: ["seq", "rand", "rand9m", "lsR", "tar", "read_random"].index(w)):
                cells, t = [], {}
                for rd, img in [(x, im) for x in readers[:2]] + [("squashfuse", sq), ("kernel", im)]:
                    sel = dict(dataset=ds, image=img, task=wl, reader=rd)
                    t[rd] = median(rows, "wall_s", **sel)
                    cell = fig(values(rows, "wall_s", **sel)) + " s"
                    if ds == "file":
                        cell += f", {fig(values(rows, 'mibs', **sel), 0)} MiB/s"
                    if rd != "kernel":
                        cell += f"; CPU {fig(values(rows, 'daemon_cpu_s', **sel))} + {fig(values(rows, 'cpu_s', **sel))}"
                    else:
                        cell += f"; CPU {fig(values(rows, 'cpu_s', **sel))}"
                    note = status_of(rows, **sel)
                    cells.append(note if note and t[rd] is None else cell)
                peers = [t[p] for p in ("erofsfuse 1.9.3", "squashfuse") if t.get(p)]
                best = min(peers) if peers else None
                ours = t.get("erofs mount")
                rp = f"{ours / best:.2f}x" if ours and best else "-"
                rk = f"{ours / t['kernel']:.2f}x" if ours and t.get("kernel") else "-"
                L.append(f"| {wl} | " + " | ".join(cells) + f" | {rp} | {rk} |")
                if ours and best:
                    targets.append((f"{ds} {im} FUSE {wl}: erofs mount {ours:.2f} s = {ours / best:.2f}x the faster of "
                                    f"erofsfuse 1.9.3 and squashfuse ({best:.2f} s), at most 1.0x; "
                                    f"{rk} the kernel mount", ours <= best))
            L += ["", "Cells: wall time; for the file, fio's MiB/s; CPU daemon + client seconds.", ""]
    targets += read_aware(a, rows)
    L += read_aware_table(a, rows)
    L += ["## Targets", ""]
    for text, ok in targets:
        L.append(f"- {'n/a' if ok is None else 'met' if ok else '**missed**'}: {text}")
    with open(os.path.join(a.results, "report.md"), "w") as f:
        f.write("\n".join(L) + "\n")
    print(f"report: {os.path.join(a.results, 'report.md')}")
