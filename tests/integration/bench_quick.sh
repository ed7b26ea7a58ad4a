#!/bin/bash
# The benchmark harness (bench/run, see bench/README.md) as a smoke test:
#
#  1. `bench/run --quick` (16 MiB cut of linux-source-6.1, or of a tar of /usr/include when the
#     package is missing, and the small tree inside it; 1 run per figure) into a results directory
#     under the work directory; it must exit 0 (no failed build, mount, fio run or content check).
#  2. summary.csv holds every expected row: for each data set (file, tree) and image configuration
#     the build figures (size, wall, CPU, peak RSS), the kernel-mount workloads (file: seq, rand,
#     rand9m; tree: ls -lR, tar, read all in random and in size order), the extraction tools for
#     the image's file system, and the FUSE rows when `erofs mount --help` works. Every row is
#     `ok` with positive numbers, min <= median <= max, n = 1, cold cache; the one exception
#     allowed is fsck.erofs --extract (erofs-utils 1.5) calling an erofs-kit image `unsupported`
#     (it has no lzma/deflate/zstd and no fragments).
#  3. raw.csv has one positive value per run behind every `ok` figure.
#  4. report.md exists with the machine, the tool versions (the measured commit among them), the
#     published-style tables and the single-run warning; the PNG charts exist when python3-matplotlib is installed.
#  5. Nothing is left behind: no mount or loop device below the work directory, no run.* dir, no
#     process working on a file there (fio's job processes leave their parent's process group).
#  6. Ctrl-C: SIGINT in the middle of a run -> exit 130, mounts, loop devices and processes gone,
#     an INCOMPLETE report.
#  7. --resume: the stopped run goes on (no longer INCOMPLETE, two sittings named, one row set
#     per image); resuming a finished run keeps every image and changes no row; another erofs
#     binary is refused.
#  8. The report and meta.json record the measured commit (40 hex digits and whether the tree was
#     clean); a full run refuses a binary that is not exactly a commit, writing nothing.
#  9. bench/matrix-status on two made-up matrix sets: each cell from the newest set that holds
#     it, its set and commit named, the targets checked on those figures only.
#
# Needs root, loop devices, a kernel with erofs/squashfs, and the peer tools (bench/setup
# installs them); skips (77) otherwise.
# shellcheck source-path=SCRIPTDIR source=lib.bash
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

require_erofs_bin
require_root
require_cmd python3 mkfs.erofs fsck.erofs mksquashfs unsquashfs mkfs.ext4 dumpe2fs fio xz tar \
    xargs diff cmp findmnt
[[ -x /usr/bin/time ]] || skip "needs /usr/bin/time (package time; run bench/setup)"
require_erofs_kernel
grep -qw squashfs /proc/filesystems || modprobe squashfs 2>/dev/null || true
grep -qw squashfs /proc/filesystems || skip "kernel has no squashfs"
workdir
require_loop
W=$WORKDIR
RUN="$EROFS_SOURCE_DIR/bench/run"

fuse=0
if "$EROFS" mount --help >/dev/null 2>&1; then
    fuse=1
    require_cmd squashfuse fusermount3
fi

# --- 1. the quick run -------------------------------------------------------------------------
start=$(date +%s)
"$RUN" --quick --results "$W/results" --work "$W/work" --erofs "$EROFS" --wait-binary 60 \
    >"$W/run.log" 2>&1
rc=$?
echo "bench/run --quick: exit $rc after $(($(date +%s) - start)) s; last lines:"
tail -n 8 "$W/run.log" | sed 's/^/    /'
if [[ $rc == 0 ]]; then
    pass "bench/run --quick exits 0"
else
    fail "bench/run --quick exits 0 (exit $rc)"
    grep -E 'WARNING|Traceback|Error' "$W/run.log" | head -n 30 | sed 's/^/    /'
fi

cat >"$W/validate.py" <<'PY'
import csv, json, os, re, sys

what, res, fuse = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
bad = []

IMAGES = ["ek-lz4hc-4k", "ek-lz4hc-16k", "ek-lz4hc-32k", "ek-lz4hc-64k", "ek-lzma-64k",
          "ek-deflate-64k", "ek-zstd-64k", "ue-lz4hc-4k", "ue-lz4hc-16k", "ue-lz4hc-32k",
          "ue-lz4hc-64k", "sq-lz4hc-8k", "sq-lz4hc-16k", "sq-lz4hc-32k", "sq-lz4hc-128k",
          "sq-gzip-128k", "sq-xz-128k", "sq-zstd-128k", "ext4-4k"]
TREE_ONLY = ["ek-lz4hc-64k-tfd", "ue-lz4hc-64k-tfd"]
FUSE = ["ek-lz4hc-4k", "ek-lz4hc-64k", "ek-lzma-64k", "sq-lz4hc-8k", "sq-lz4hc-128k", "sq-xz-128k"]
BUILDER = {"ek": "erofs-kit", "ue": "mkfs.erofs", "sq": "mksquashfs", "ext4": "mkfs.ext4"}
READS = {"file": ["seq_mibs", "rand_mibs", "rand9m_mibs"],
         "tree": ["lsR_s", "tar_s", "read_random_s", "read_size_s"]}


def expected():
    for ds in ("file", "tree"):
        for im in IMAGES + (TREE_ONLY if ds == "tree" else []):
            b = BUILDER[im.split("-")[0]]
            for m in ("size_bytes", "build_wall_s", "build_cpu_s", "build_rss_kib"):
                yield ds, im, "build", b, m
            for m in READS[ds]:
                yield ds, im, "kernel", "kernel", m
            fs = "erofs" if b in ("erofs-kit", "mkfs.erofs") else "squashfs" if b == "mksquashfs" else "ext4"
            for rd in {"erofs": ["erofs extract", "fsck.erofs --extract"], "squashfs": ["unsquashfs"],
                       "ext4": []}[fs]:
                yield ds, im, "extract", rd, "extract_s"
            if fuse and im in FUSE:
                for m in READS[ds]:
                    yield ds, im, "fuse", "erofs mount" if fs == "erofs" else "squashfuse", m


def load(name):
    with open(os.path.join(res, name), newline="") as f:
        return list(csv.DictReader(f))


if what == "rows":
    rows = {(r["dataset"], r["image"], r["access"], r["reader"], r["metric"]): r
            for r in load("summary.csv")}
    n = 0
    for key in expected():
        n += 1
        r = rows.get(key)
        if r is None:
            bad.append(f"missing row {key}")
            continue
        if r["status"] != "ok":
            allowed = key[3] == "fsck.erofs --extract" and key[1].startswith("ek-") and \
                r["status"] == "unsupported"
            if not allowed:
                bad.append(f"{key}: status {r['status']}: {r['note']}")
            continue
        try:
            med, lo, hi, cnt = float(r["median"]), float(r["min"]), float(r["max"]), int(r["n"])
        except ValueError:
            bad.append(f"{key}: not numbers: {r}")
            continue
        if not (0 < lo <= med <= hi):
            bad.append(f"{key}: not positive / min <= median <= max: {lo} {med} {hi}")
        if cnt != 1:
            bad.append(f"{key}: n = {cnt}, quick mode makes 1 run")
        if key[2] in ("kernel", "extract", "fuse") and r["cache"] != "cold":
            bad.append(f"{key}: cache {r['cache']!r}, expected cold (root drops caches)")
    print(f"{n} expected rows checked")
elif what == "raw":
    raw = {}
    for r in load("raw.csv"):
        k = (r["dataset"], r["image"], r["access"], r["reader"], r["metric"])
        try:
            v = float(r["value"])
        except ValueError:
            bad.append(f"raw {k}: value {r['value']!r}")
            continue
        if v <= 0:
            bad.append(f"raw {k}: value {v} <= 0")
        raw.setdefault(k, []).append(v)
    for r in load("summary.csv"):
        k = (r["dataset"], r["image"], r["access"], r["reader"], r["metric"])
        if r["status"] == "ok" and len(raw.get(k, [])) != int(r["n"]):
            bad.append(f"{k}: summary n={r['n']} but raw.csv has {len(raw.get(k, []))} runs")
    print(f"{sum(len(v) for v in raw.values())} raw values checked")
elif what == "report":
    text = open(os.path.join(res, "report.md")).read()
    for s in ("## Machine", "## Tools", "## Data", "| CPU |", "| kernel |", "| erofs-kit |",
              "| erofs-utils |", "| squashfs-tools |", "| fio |",
              "| file system | size | seq read MiB/s | rand read MiB/s | rand9m read MiB/s |",
              "| file system | size | wall s | CPU s | peak RSS MiB |", "ls -lR s",
              "### Ratios against the peers", "### Extraction", "single run",
              "erofs-kit lz4hc 4k", "mkfs.erofs lz4hc 64k", "squashfs lz4hc 128k", "ext4 4k"):
        if s not in text:
            bad.append(f"report.md lacks {s!r}")
    if "INCOMPLETE" in text:
        bad.append("report.md says INCOMPLETE")
    if not re.search(r"\| erofs-kit \| .*\(commit [0-9a-f]{40} \(", text):
        bad.append("report.md does not record the measured commit (40 hex digits and its state)")
    meta = json.load(open(os.path.join(res, "meta.json")))
    if not re.fullmatch(r"[0-9a-f]{40}", meta.get("erofs_commit") or ""):
        bad.append(f"meta.json: erofs_commit {meta.get('erofs_commit')!r}")
    if not fuse and "`erofs mount` does not exist" not in text and "has no `erofs mount`" not in text:
        bad.append("report.md does not say that the FUSE rows are missing")
    if fuse and "### FUSE" not in text:
        bad.append("report.md has no FUSE table")
elif what == "charts":
    for png in ("file_size_vs_throughput.png", "tree_size_vs_throughput.png", "build_time.png",
                "extract_time.png"):
        p = os.path.join(res, png)
        if not os.path.isfile(p) or os.path.getsize(p) < 1000:
            bad.append(f"missing chart {png}")
        elif open(p, "rb").read(8) != b"\x89PNG\r\n\x1a\n":
            bad.append(f"{png} is not a PNG")
for b in bad[:40]:
    print(b)
if len(bad) > 40:
    print(f"... {len(bad)} problems")
sys.exit(1 if bad else 0)
PY

# --- 2.-4. its output ------------------------------------------------------------------------
if [[ -f "$W/results/summary.csv" && -f "$W/results/raw.csv" ]]; then
    check "summary.csv: every expected row, ok, positive" python3 "$W/validate.py" rows "$W/results" "$fuse"
    check "raw.csv: one positive value per run" python3 "$W/validate.py" raw "$W/results" "$fuse"
else
    fail "summary.csv and raw.csv exist"
fi
if [[ -f "$W/results/report.md" ]]; then
    check "report.md: machine, versions, tables" python3 "$W/validate.py" report "$W/results" "$fuse"
else
    fail "report.md exists"
fi
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
    check "PNG charts" python3 "$W/validate.py" charts "$W/results" "$fuse"
else
    skip_section "PNG charts: python3-matplotlib is not installed (bench/setup installs it)"
fi

# --- 5. nothing left behind -------------------------------------------------------------------
# shellcheck disable=SC2317  # called through check
leftovers() {
    local bad=0 f
    if grep -qF " $W/work" /proc/self/mountinfo; then
        echo "still mounted:"
        grep -F " $W/work" /proc/self/mountinfo
        bad=1
    fi
    for f in /sys/block/loop*/loop/backing_file; do
        [[ -r $f ]] && grep -qF "$W/work" "$f" && { echo "loop device left: $f: $(<"$f")"; bad=1; }
    done
    if pgrep -af -- "$W/work" >/dev/null; then
        echo "processes left:"
        pgrep -af -- "$W/work"
        bad=1
    fi
    if compgen -G "$W/work/run.*" >/dev/null; then
        echo "work directory left: $(echo "$W"/work/run.*)"
        bad=1
    fi
    return "$bad"
}
check "no mounts, loop devices or work directory left" leftovers

# --- 6. Ctrl-C ------------------------------------------------------------------------------
"$RUN" --quick --results "$W/results-int" --work "$W/work" --erofs "$EROFS" --datasets file \
    --only 'ek-lz4hc-4k|ue-lz4hc-4k' >"$W/int.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
    grep -q 'build 1/1' "$W/int.log" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
sleep 0.3                                   # into the mount + fio part
kill -INT "$pid" 2>/dev/null
wait "$pid"
rc=$?
if [[ $rc == 130 ]]; then
    pass "SIGINT: exit 130"
else
    fail "SIGINT: exit 130 (exit $rc)"
    tail -n 20 "$W/int.log" | sed 's/^/    /'
fi
check "SIGINT: no mounts, loop devices or work directory left" leftovers
check_output "SIGINT: the report says INCOMPLETE" 0 INCOMPLETE cat "$W/results-int/report.md"

# --- 7. --resume: the stopped run goes on; measured images are kept ---------------------------
resume() { "$RUN" --quick --resume "$W/results-int" --work "$W/work" --erofs "$1" --datasets file \
    --only 'ek-lz4hc-4k|ue-lz4hc-4k' >"$W/resume.log" 2>&1; }
check "--resume finishes the stopped run" resume "$EROFS"
check "--resume: the report is no longer INCOMPLETE" bash -c '[[ -f "$1" ]] && ! grep -q INCOMPLETE "$1"' _ "$W/results-int/report.md"
check_output "--resume: the report names the sittings" 0 "the last of 2 sittings" cat "$W/results-int/report.md"
# shellcheck disable=SC2317  # called through check
both_images() { grep -c '^file,ek-lz4hc-4k,.*,size_bytes,' "$1" | grep -qx 1 &&
                grep -c '^file,ue-lz4hc-4k,.*,size_bytes,' "$1" | grep -qx 1; }
check "--resume: one size row per image" both_images "$W/results-int/summary.csv"
cp "$W/results-int/summary.csv" "$W/summary-2.csv"
check "--resume of a finished run measures nothing again" resume "$EROFS"
check "--resume: both images kept" bash -c '[[ $(grep -c "kept from an earlier sitting" "$1") == 2 ]]' _ "$W/resume.log"
check "--resume: the kept rows are the same" cmp "$W/summary-2.csv" "$W/results-int/summary.csv"
cp "$EROFS" "$W/erofs-other" && printf x >>"$W/erofs-other"
resume "$W/erofs-other"
rc=$?
if [[ $rc == 2 ]] && grep -q "erofs_sha differs" "$W/resume.log"; then
    pass "--resume with another erofs binary is refused (exit 2)"
else
    fail "--resume with another erofs binary is refused (exit $rc)"
    tail -n 5 "$W/resume.log" | sed 's/^/    /'
fi

# --- 8. a full run measures only a binary that is exactly a commit ---------------------------
# (a copy outside its build directory has no known commit; refused before anything is written)
mkdir -p "$W/copy" && cp "$EROFS" "$W/copy/erofs"
check_output "full mode refuses a binary that is not exactly a commit (exit 2)" 2 'not exactly a commit' \
    "$RUN" --results "$W/results-refused" --work "$W/work" --erofs "$W/copy/erofs"
check "... and writes no results" test ! -e "$W/results-refused"


# --- 9. bench/matrix-status: each cell from the newest set that holds it, targets checked ------
S="$W/sets"
mkdir -p "$S/2026-01-01-t-mkfs-matrix-1" "$S/2026-01-02-t-mkfs-matrix-2"
cat >"$S/2026-01-01-t-mkfs-matrix-1/matrix.csv" <<'CSV'
dataset,algorithm,layout,builder,block,run,size_bytes,wall_s,cpu_s,rss_kib
file,lzma,-C4096,erofs-kit,4096,1,500,12,20,1024
file,lzma,-C4096,mkfs.erofs 1.9.3,4096,1,600,11,20,1024
file,lzma,-C65536,erofs-kit,65536,1,1000,10,20,1024
file,lzma,-C65536,mkfs.erofs 1.9.3,65536,1,990,11,20,1024
CSV
cat >"$S/2026-01-02-t-mkfs-matrix-2/matrix.csv" <<'CSV'
dataset,algorithm,layout,builder,block,run,size_bytes,wall_s,cpu_s,rss_kib
file,lzma,-C65536,erofs-kit,65536,1,980,10,20,1024
file,lzma,-C65536,mkfs.erofs 1.9.3,65536,1,990,11,20,1024
CSV
echo "Measured erofs-kit: commit 1111111aaaa (clean tree, binary up to date)." >"$S/2026-01-01-t-mkfs-matrix-1/matrix.md"
echo "Measured erofs-kit: commit 2222222bbbb (clean tree, binary up to date)." >"$S/2026-01-02-t-mkfs-matrix-2/matrix.md"
check "matrix-status writes its report" "$EROFS_SOURCE_DIR/bench/matrix-status" --sets "$S" --results "$W/status"
check_output "matrix-status: a cell from the newer set" 0 '\| lzma \| -C65536 \| \[matrix-2\]\([^)]*\) \| 2222222 \| 1 \| 980 \| 0\.9899 \|' \
    cat "$W/status/status.md"
check_output "matrix-status: a cell only the older set holds" 0 '\| lzma \| -C4096 \| \[matrix-1\]\([^)]*\) \| 1111111 \|' \
    cat "$W/status/status.md"
check_output "matrix-status: that cell's miss" 0 'missed: file lzma -C4096: build wall 1\.09x' cat "$W/status/status.md"
check "matrix-status: no miss of a cell a newer set measured again" bash -c '! grep -q "C65536.*size" "$1"' _ "$W/status/status.md"

finish
