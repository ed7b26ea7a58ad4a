#!/bin/bash
# `erofs mount` (FUSE) serves images exactly as they were built, concurrently, read-only, and
# survives damage and unmounting under load.
#
#  1. Round trips: images of the awkward test tree (small profile) by `erofs mkfs` uncompressed,
#     with -b 512, with each algorithm (lz4, lz4hc, lzma, deflate, zstd; -C 65536), lz4hc -C 4096,
#     -E ztailpacking, fragments, all-fragments, dedupe, legacy-compress; the full profile once
#     (lz4 with ztailpacking); images of mkfs.erofs 1.5 (Debian; plain and -zlz4hc, from a copy
#     without the 255-byte names); every image of tests/data/compat/images (against
#     compat/tree.tar, symlink mtimes set to 1700000000 as in compat_images.sh). Each is mounted
#     with `erofs mount` (daemonized) and compared with its source by treecmp with no relaxing
#     option (content, type, mode, owner, size, mtime in ns, xattrs, symlink targets, devices,
#     hard-link groups); the files of each hard-link group have one st_ino on the mount, the nid
#     `erofs stat` shows, and their nlink; `erofs umount` unmounts and the daemon exits.
#  2. Concurrency: tests/tools/fuse_stress.py, 8 threads reading random ranges (up to 1 MiB) of
#     the files of 1 MiB and more of the compressible profile for 10 s from two images at once
#     (lzma -C 65536 with a 1 MiB decoded-pcluster cache, lz4hc -C 65536 with -o poll=0: its
#     loop sleeps after every request; lz4hc -C 4096 with -o max_read=128K, whose small extents
#     go to the page cache on the first read that ends inside them), every byte checked against
#     the source.
#  3. Read-only: write/append/truncate/create/mkdir/mkfifo/symlink/link/unlink/rmdir/rename/chmod/
#     chown/utimes/setxattr/removexattr on the mount fail with EROFS ("Read-only file system"),
#     and the tree is unchanged afterwards.
#  4. A damaged image (bytes flipped in the middle of the only compressed file's data): cat of
#     that file fails with "Input/output error" (again on a second try), every other file still
#     reads back right, and the daemon (`erofs mount -f`, stderr captured) logs only lines
#     "erofs mount: read: nid N: extent at ...: ..." naming that file's nid, nothing else. (The
#     decoder's words vary: a request that starts inside the extent decodes only its head, and
#     which pages the kernel asks for again after the first error depends on timing.)
#  4b. An image truncated to half its size under the mount (an lz4hc -C 65536 image of one 3 MiB
#     file, whose random reads decode heads from a mapping of the image): O_DIRECT reads of every
#     third page read back right before the cut; after it, each fails with EIO or reads back
#     right; the daemon lives on, logs nothing (an I/O error is the reader's EIO), and exits 0 on
#     umount.
#  5. Unmount under load: six readers loop over the mount with O_DIRECT reads (each a request to
#     the daemon), logging the time of every read call; `erofs umount` either unmounts or fails
#     with one line (busy) leaving the mount working; `fusermount3 -u -z` then detaches it. The
#     logs show reads in flight during each unmount call; the `erofs mount -f` process exits
#     (status 0) within 5 s and no reader hangs (timeout).
#  6. statfs (stat -f) reports the image's block size and block count (4096 and 512 byte
#     blocks); `erofs mount` of a garbage file, an empty file or a missing file, and bad -o
#     options (cache_size=abc, readahead=xyz, poll=abc, overflowing or negative sizes, rw, an
#     unknown FUSE option), and on a missing mount point, fail with exactly one line on stderr, a non-zero
#     status, and no mount; so does `erofs umount` of a directory that is not mounted.
#  6a. Signals: SIGTERM and SIGHUP to `erofs mount -f` right after a request (the loop still polls
#     the device) and when idle (asleep in ppoll): exit status 0 within 5 s, nothing logged, no mount.
#
# Needs /dev/fuse and fusermount3 (skips, 77, otherwise). Root is needed for the parts of the
# trees that only root can make (devices, owners, trusted.* xattrs; mktree leaves them out
# otherwise) and for the compat images (trusted.* xattrs; a SKIPPED line when not root).
# shellcheck disable=SC2317  # (functions below are called indirectly, through check)
# shellcheck source-path=SCRIPTDIR source=lib.bash
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

require_erofs_bin
require_fuse
require_cmd python3 find stat timeout cmp ps mountpoint findmnt
workdir
scratch "$WORKDIR/s" 3g
W=$WORKDIR/s
EROFS=$(cd "$(dirname "$EROFS")" && pwd)/$(basename "$EROFS")
START=$SECONDS

# --- helpers ---------------------------------------------------------------------------------------

section() { echo "--- $* (at $((SECONDS - START)) s)"; }

# daemon_pids IMAGE MOUNTPOINT: pids of `erofs mount ... IMAGE MOUNTPOINT` processes
daemon_pids() {
    local pid args
    while read -r pid args; do
        [[ "$args" == "$EROFS mount "* && "$args" == *" $1 $2" ]] && echo "$pid"
    done < <(ps -eo pid=,args=)
}

# running PID: the process exists and is not a zombie (a daemon that exited stays a zombie until
# init reaps it, which in some containers takes a second or two)
running() {
    local st
    st=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    st=${st##*) }
    [[ "${st%% *}" != Z ]]
}

# wait_gone SECONDS PID...: succeeds once none of the PIDs is running any more
wait_gone() {
    local t=$1 i p alive
    shift
    for ((i = 0; i < t * 10; i++)); do
        alive=0
        for p in "$@"; do
            running "$p" && alive=1
        done
        [[ $alive == 0 ]] && return 0
        sleep 0.1
    done
    return 1
}

# wait_mounted MOUNTPOINT: up to 10 s for a mount to appear
wait_mounted() {
    local i
    for ((i = 0; i < 100; i++)); do
        mountpoint -q "$1" && return 0
        sleep 0.1
    done
    echo "$1 did not get mounted within 10 s"
    return 1
}

# fmount IMAGE MOUNTPOINT [OPTIONS...]: erofs mount (daemonized); mounted when it returns
fmount() {
    mkdir -p "$2" || return 1
    "$EROFS" mount "${@:3}" "$1" "$2" || return 1
    mountpoint -q "$2" || { echo "erofs mount returned 0 but $2 is not a mount point"; return 1; }
    [[ $(findmnt -n -o FSTYPE "$2" 2>/dev/null) == fuse* ]] ||
        { echo "$2: not a FUSE mount: $(findmnt -n -o FSTYPE "$2" 2>&1)"; return 1; }
}

# fumount IMAGE MOUNTPOINT: erofs umount; the mount is gone and its daemon exits within 5 s
fumount() {
    local pids
    pids=$(daemon_pids "$1" "$2")
    [[ -n "$pids" ]] || { echo "no erofs mount process found for $1 $2"; }
    "$EROFS" umount "$2" || return 1
    ! mountpoint -q "$2" || { echo "$2 is still a mount point"; return 1; }
    # shellcheck disable=SC2086
    wait_gone 5 $pids || { echo "erofs mount daemon ($pids) still running 5 s after umount"; return 1; }
    [[ -n "$pids" ]]
}

# hardlinks_share_ino SRC MNT IMAGE MIN_GROUPS: every hard-link group of regular files in SRC has
# one st_ino on MNT, equal to the nid `erofs stat IMAGE PATH` shows, distinct from the other
# groups', and the group's nlink; at least MIN_GROUPS groups.
hardlinks_share_ino() {
    python3 - "$@" "$EROFS" <<'PY'
import os, re, stat, subprocess, sys
src, mnt, image, min_groups, erofs = sys.argv[1:6]
src, mnt = os.fsencode(src), os.fsencode(mnt)
groups = {}
for d, dirs, files in os.walk(src):
    for n in files:
        p = os.path.join(d, n)
        st = os.lstat(p)
        if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
            groups.setdefault((st.st_dev, st.st_ino), []).append(os.path.relpath(p, src))
bad, seen = 0, {}
for paths in groups.values():
    paths.sort()
    sts = [os.lstat(os.path.join(mnt, p)) for p in paths]
    inos = {s.st_ino for s in sts}
    nlinks = {s.st_nlink for s in sts}
    out = subprocess.run([os.fsencode(erofs), b"stat", os.fsencode(image), paths[0]],
                         capture_output=True).stdout.decode("utf-8", "replace")
    m = re.search(r"nid\):\s*(\d+)", out)
    nid = int(m.group(1)) if m else None
    why = []
    if len(inos) != 1:
        why.append("st_ino %s" % sorted(inos))
    want_nlink = os.lstat(os.path.join(src, paths[0])).st_nlink
    if nlinks != {want_nlink}:
        why.append("st_nlink %s, source has %d" % (sorted(nlinks), want_nlink))
    if len(inos) == 1 and nid is not None and inos != {nid}:
        why.append("st_ino %d, erofs stat nid %d" % (sts[0].st_ino, nid))
    if nid is None:
        why.append("erofs stat shows no nid: %r" % out[:200])
    for i in inos:
        if i in seen and seen[i] != paths[0]:
            why.append("st_ino %d also used by %r" % (i, seen[i]))
        seen[i] = paths[0]
    if why:
        bad += 1
        print("%r: %s" % ([p.decode("utf-8", "replace") for p in paths], "; ".join(why)))
print("%d hard-link groups, %d wrong" % (len(groups), bad))
sys.exit(1 if bad or len(groups) < int(min_groups) else 0)
PY
}

# roundtrip NAME SRC IMAGE MIN_GROUPS [CMP_REGEX]: mount IMAGE on $W/mnt-NAME, treecmp (exact),
# hard links, unmount; fails if any of these does. Leaves the image.
roundtrip() {
    local name=$1 src=$2 img=$3 groups=$4 regex=${5:-'^treecmp: [0-9]{3,} entries compared, 0 differences$'}
    local mnt=$W/mnt-$name rc=0
    check "erofs mount: $name" fmount "$img" "$mnt" || return 1
    [[ -n "${BEFORE_CMP:-}" ]] && $BEFORE_CMP "$mnt" "$img"
    check_output "treecmp (exact): $name" 0 "$regex" treecmp "$src" "$mnt" || rc=1
    check "hard links share the nid as st_ino: $name" hardlinks_share_ino "$src" "$mnt" "$img" "$groups" || rc=1
    check "erofs umount, daemon exits: $name" fumount "$img" "$mnt" || rc=1
    return "$rc"
}

# build_and_roundtrip NAME SRC MKFS_OPTIONS...: erofs mkfs into $W/NAME.img, then roundtrip;
# the image is removed afterwards
build_and_roundtrip() {
    local name=$1 src=$2
    shift 2
    check "erofs mkfs $*: $name" "$EROFS" mkfs -q "$@" "$W/$name.img" "$src" || return 1
    roundtrip "$name" "$src" "$W/$name.img" 1
    rm -f "$W/$name.img"
}

# --- source trees; the slow lzma images are built in the background meanwhile ---------------------
section "source trees"
check "mktree small" mktree "$W/small" small >/dev/null
check "mktree awkward" mktree "$W/awkward" awkward >/dev/null
check "mktree compressible" mktree "$W/comp" compressible >/dev/null

"$EROFS" mkfs -q -z lzma -C 65536 "$W/lzma.img" "$W/small" >"$W/lzma.log" 2>&1 &
LZMA_SMALL=$!
"$EROFS" mkfs -q -z lzma -C 65536 "$W/comp-lzma.img" "$W/comp" >"$W/comp-lzma.log" 2>&1 &
LZMA_COMP=$!

# wait_build PID LOG: the background mkfs succeeded
wait_build() {
    local rc=0
    wait "$1" || rc=$?
    cat "$2"
    return "$rc"
}

# --- 3. read-only (on the plain image, before its treecmp, which then shows nothing changed) -------
read_only() {
    python3 - "$1" <<'PY'
import errno, os, stat, sys
m = sys.argv[1]
f = os.path.join(m, "ro-probe-file")
d = os.path.join(m, "ro-probe-dir")
reg = dirp = None
for dp, dirs, files in os.walk(m):
    for n in files:
        p = os.path.join(dp, n)
        if reg is None and stat.S_ISREG(os.lstat(p).st_mode) and os.lstat(p).st_size > 0 \
                and os.lstat(p).st_nlink == 1:
            reg = p
    for n in dirs:
        p = os.path.join(dp, n)
        if dirp is None and not os.path.islink(p) and os.listdir(p):
            dirp = p
    if reg and dirp:
        break
ops = [
    ("open O_WRONLY", lambda: os.open(reg, os.O_WRONLY)),
    ("open O_RDWR", lambda: os.open(reg, os.O_RDWR)),
    ("open O_WRONLY|O_APPEND", lambda: os.open(reg, os.O_WRONLY | os.O_APPEND)),
    ("open O_TRUNC", lambda: os.open(reg, os.O_WRONLY | os.O_TRUNC)),
    ("truncate", lambda: os.truncate(reg, 0)),
    ("create", lambda: os.open(f, os.O_WRONLY | os.O_CREAT, 0o644)),
    ("mkdir", lambda: os.mkdir(d)),
    ("mkfifo", lambda: os.mkfifo(f)),
    ("symlink", lambda: os.symlink("x", f)),
    ("link", lambda: os.link(reg, f)),
    ("unlink", lambda: os.unlink(reg)),
    ("rmdir", lambda: os.rmdir(dirp)),
    ("rename", lambda: os.rename(reg, f)),
    ("chmod", lambda: os.chmod(reg, 0o600)),
    ("chown", lambda: os.chown(reg, 1, 1)),
    ("utime", lambda: os.utime(reg, (0, 0))),
    ("setxattr user.x", lambda: os.setxattr(reg, "user.x", b"y")),
    ("setxattr on the root", lambda: os.setxattr(m, "user.x", b"y")),
    ("removexattr", lambda: os.removexattr(reg, "user.nonexistent")),
]
bad = 0
for name, op in ops:
    try:
        r = op()
        if isinstance(r, int):
            os.close(r)
        print("%s: succeeded" % name)
        bad += 1
    except OSError as e:
        if e.errno != errno.EROFS:
            print("%s: %s, expected EROFS" % (name, e))
            bad += 1
if os.access(reg, os.W_OK):
    print("access(W_OK) succeeds")
    bad += 1
print("%d operations, %d did not fail with EROFS (file %r, directory %r)" % (len(ops) + 1, bad, reg, dirp))
sys.exit(1 if bad else 0)
PY
}

read_only_shell() {
    local mnt=$1
    check_output "read-only: shell redirection says Read-only file system" 1 'Read-only file system' \
        bash -c "echo x >>'$mnt/ro-new-file'"
    check_output "read-only: touch says Read-only file system" 1 'Read-only file system' \
        touch "$mnt/ro-new-file"
    check "read-only: every write-like operation fails with EROFS" read_only "$mnt"
    if have_cmd setfattr; then
        check_output "read-only: setfattr says Read-only file system" 1 'Read-only file system' \
            setfattr -n user.test -v 1 "$mnt"
    else
        skip_section "read-only: setfattr on the mount: no setfattr"
    fi
    check_output "read-only: rm -rf says Read-only file system" 1 'Read-only file system' \
        rm -rf "$mnt/sizes"
    check_output "read-only: chmod says Read-only file system" 1 'Read-only file system' \
        chmod -R 0 "$mnt/sizes"
}

# --- 1. our images of the small tree ---------------------------------------------------------------
section "1. images of the small tree (read-only and statfs on the way)"
# 6a. statfs: the image's block size and block count, nothing free, read-only
statfs_is() {
    local mnt=$1 img=$2 want got
    want=$("$EROFS" dump --json "$img" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["block_size"], d["block_size"], d["blocks"])') || return 1
    got=$(stat -f -c '%S %s %b' "$mnt") || return 1
    echo "stat -f: $got, dump --json: $want (block size, fundamental block size, blocks)"
    [[ "$got" == "$want" ]] || return 1
    python3 -c '
import os, sys
s = os.statvfs(sys.argv[1])
print("statvfs: f_bsize %d f_frsize %d f_blocks %d f_bfree %d f_bavail %d f_flag %#x" % (
    s.f_bsize, s.f_frsize, s.f_blocks, s.f_bfree, s.f_bavail, s.f_flag))
sys.exit(0 if s.f_bfree == 0 and s.f_bavail == 0 and s.f_flag & os.ST_RDONLY else 1)' "$mnt"
}

# before the treecmp of the plain image: the read-only checks and statfs
plain_extras() {
    read_only_shell "$1"
    check "statfs: block size 4096 and the image's block count, nothing free, read-only" statfs_is "$1" "$2"
}
b512_extras() {
    check "statfs: block size 512 and the image's block count, nothing free, read-only" statfs_is "$1" "$2"
}
BEFORE_CMP=plain_extras build_and_roundtrip plain "$W/small"
BEFORE_CMP=b512_extras build_and_roundtrip b512 "$W/small" -b 512

for alg in lz4 lz4hc deflate zstd; do
    build_and_roundtrip "$alg" "$W/small" -z "$alg" -C 65536
done
build_and_roundtrip lz4hc-4k "$W/small" -z lz4hc -C 4096
build_and_roundtrip ztailpacking "$W/small" -z lz4 -C 16384 -E ztailpacking
build_and_roundtrip fragments "$W/small" -z lz4hc -C 65536 -E fragments
build_and_roundtrip all-fragments "$W/small" -z zstd -C 65536 -E all-fragments
build_and_roundtrip dedupe "$W/small" -z lz4 -C 16384 -E dedupe
build_and_roundtrip legacy-compress "$W/small" -z lz4hc -C 65536 -E legacy-compress
build_and_roundtrip b512-lz4 "$W/small" -b 512 -z lz4 -C 4096 -E ztailpacking
if check "erofs mkfs -z lzma -C 65536 (in the background): lzma" wait_build "$LZMA_SMALL" "$W/lzma.log"; then
    roundtrip lzma "$W/small" "$W/lzma.img" 1
fi
rm -f "$W/lzma.img"

# the full profile once (the 10,000-entry directory): the regex makes sure all of it was compared
section "1. the full awkward tree"
build_and_roundtrip_full() {
    check "erofs mkfs -z lz4 -E ztailpacking: full awkward tree" \
        "$EROFS" mkfs -q -z lz4 -C 65536 -E ztailpacking "$W/full.img" "$W/awkward" || return 1
    roundtrip full "$W/awkward" "$W/full.img" 1 '^treecmp: [0-9]{5,} entries compared, 0 differences$'
    rm -f "$W/full.img"
}
build_and_roundtrip_full

# --- 1b. images of mkfs.erofs 1.5 (written to the disk: mkfs.erofs 1.5 may fail on a tmpfs) -------
section "1b. images of mkfs.erofs 1.5"
if have_cmd mkfs.erofs; then
    check "copy of the small tree without 255-byte names" copy_without_255_names "$W/small" "$W/small-1.5" >/dev/null
    for v in "peer-plain|" "peer-lz4hc|-zlz4hc"; do
        name=${v%%|*}
        read -r -a opts <<<"${v#*|}"
        if check "mkfs.erofs 1.5 ${opts[*]}: $name" mkfs.erofs --quiet "${opts[@]}" "$WORKDIR/$name.img" "$W/small-1.5"; then
            roundtrip "$name" "$W/small-1.5" "$WORKDIR/$name.img" 1
        fi
        rm -f "$WORKDIR/$name.img"
    done
    rm -rf "$W/small-1.5"
else
    skip_section "images of mkfs.erofs 1.5 (1b.): no mkfs.erofs"
fi

# --- 1c. the compat images of erofs-utils 1.9.3 -----------------------------------------------------
section "1c. compat images"
C=$EROFS_COMPAT_DIR
if ! have_root; then
    skip_section "compat images (1c.): not root (their trusted.* xattrs)"
else
    mkdir -p "$W/ref"
    check "tar -xf compat/tree.tar" tar --xattrs --xattrs-include='*' -xf "$C/tree.tar" -C "$W/ref"
    check "symlinks in the reference tree get mtime 1700000000" \
        find "$W/ref/tree" -type l -exec touch -h -d @1700000000 {} +
    n=0 served=0
    for img in "$C"/images/*.img; do
        [[ -f "$img" ]] || continue
        n=$((n + 1))
        roundtrip "compat-$(basename "$img" .img)" "$W/ref/tree" "$img" 1 \
            '^treecmp: [0-9]+ entries compared, 0 differences$' && served=$((served + 1))
    done
    if [[ $n -ge 3 && $served == "$n" ]]; then pass "all $n compat images served exactly"
    else fail "$served of $n compat images served exactly (at least 3 expected)"; fi
fi

# --- 2. concurrency -----------------------------------------------------------------------------------
section "2. concurrency"
if check "erofs mkfs -z lz4hc -C 65536: compressible" \
    "$EROFS" mkfs -q -z lz4hc -C 65536 "$W/comp-lz4hc.img" "$W/comp" &&
    check "erofs mkfs -z lzma -C 65536 (in the background): compressible" \
        wait_build "$LZMA_COMP" "$W/comp-lzma.log" &&
    check "erofs mount -o cache_size=1M,readahead=2M: compressible lzma" \
        fmount "$W/comp-lzma.img" "$W/mnt-comp-lzma" -o cache_size=1M,readahead=2M,readahead_threads=2 &&
    check "erofs mount -o poll=0 (sleeps after every request): compressible lz4hc" \
        fmount "$W/comp-lz4hc.img" "$W/mnt-comp-lz4hc" -o poll=0 &&
    check "erofs mkfs -z lz4hc -C 4096: compressible" \
        "$EROFS" mkfs -q -z lz4hc -C 4096 "$W/comp-lz4hc-4k.img" "$W/comp" &&
    check "erofs mount -o max_read=128K: compressible lz4hc -C 4096 (small extents stored on their first read)" \
        fmount "$W/comp-lz4hc-4k.img" "$W/mnt-comp-lz4hc-4k" -o max_read=128K &&
    check_output "the kernel mount of compressible lz4hc -C 4096 has max_read=131072" 0 'max_read=131072' \
        grep -F " $W/mnt-comp-lz4hc-4k " /proc/self/mounts; then
    VERBOSE=1 check_output "fuse_stress: 8 threads, 10 s, random ranges of three compressed images" 0 \
        '^fuse_stress: [1-9][0-9]* reads, [1-9][0-9]* bytes verified, [0-9]+ files on 3 mounts, 8 threads, .*, 0 errors$' \
        timeout 60 python3 "$EROFS_TEST_TOOLS/fuse_stress.py" "$W/comp" "$W/mnt-comp-lzma" "$W/mnt-comp-lz4hc" \
        "$W/mnt-comp-lz4hc-4k" --threads 8 --seconds 10 --max-len $((1024 * 1024))
    for a in lzma lz4hc lz4hc-4k; do
        check_output "treecmp (exact) after the stress: compressible $a" 0 ' 0 differences$' \
            treecmp "$W/comp" "$W/mnt-comp-$a"
        check "erofs umount: compressible $a" fumount "$W/comp-$a.img" "$W/mnt-comp-$a"
    done
fi
rm -f "$W/comp-lzma.img" "$W/comp-lz4hc-4k.img"

# --- 5. unmount under load ----------------------------------------------------------------------------
# readers: tests/tools/read_loop.py, reading every file of the mount with O_DIRECT (each read a
# request to the daemon) until the mount is gone, logging each read call with its start and end
# time; under timeout, as none may hang
section "5. unmount under load"

# in_flight FROM TO LOG...: how many LOGs (readers) have a read call that started before TO and
# ended after FROM (times as $EPOCHREALTIME)
in_flight() {
    local from=${1/./}000 to=${2/./}000
    shift 2
    awk -v from="$from" -v to="$to" '$1 + 0 > 0 && $1 + 0 < to && $2 + 0 > from { n++; nextfile } END { print n + 0 }' "$@"
}

# logged_past T LOG...: waits (up to 5 s) until every LOG has a read that started after T: a read
# is logged only when it ends, so the reads in flight at T are in the logs by then
logged_past() {
    local t=${1/./}000 i log n
    shift
    for ((i = 0; i < 50; i++)); do
        n=0
        for log in "$@"; do
            awk -v t="$t" '$1 + 0 > t { found = 1; exit } END { exit !found }' "$log" && n=$((n + 1))
        done
        [[ $n == "$#" ]] && return 0
        sleep 0.1
    done
}

# reads_flowing LOG...: every LOG has at least 20 reads (up to 10 s)
reads_flowing() {
    local i log n
    for ((i = 0; i < 100; i++)); do
        n=0
        for log in "$@"; do
            [[ -f "$log" && $(wc -l <"$log") -ge 20 ]] && n=$((n + 1))
        done
        [[ $n == "$#" ]] && return 0
        sleep 0.1
    done
    echo "$n of $# readers made 20 reads within 10 s"
    return 1
}

unmount_under_load() {
    local img=$1 mnt=$W/mnt-load log=$W/load.log mpid i rpids=() logs=() rc hung=0 out t0 t1 n
    mkdir -p "$mnt"
    "$EROFS" mount -f "$img" "$mnt" 2>"$log" &
    mpid=$!
    check "erofs mount -f (background): under load" wait_mounted "$mnt" || { kill "$mpid"; wait "$mpid"; return 1; }
    for i in 1 2 3 4 5 6; do
        logs+=("$W/reads-$i.log")
        timeout 30 python3 "$EROFS_TEST_TOOLS/read_loop.py" "$mnt" "$W/reads-$i.log" &
        rpids+=($!)
    done
    check "6 readers are reading (O_DIRECT, each read a request to the daemon)" reads_flowing "${logs[@]}"
    # erofs umount under load: either it unmounts, or it says (in one line) that the mount is busy
    # and leaves it working
    t0=$EPOCHREALTIME
    error_contract nonzero 'busy' "$EROFS" umount "$mnt"
    rc=$?
    t1=$EPOCHREALTIME
    logged_past "$t1" "${logs[@]}"
    n=$(in_flight "$t0" "$t1" "${logs[@]}")
    if [[ $n -ge 1 ]]; then pass "reads were in flight during erofs umount ($n of 6 readers)"
    else fail "no read was in flight during erofs umount (the load had stopped)"; fi
    if [[ $rc == 0 ]]; then
        if mountpoint -q "$mnt" && cmp -s "$W/comp/text/text-3145745" "$mnt/text/text-3145745"; then
            pass "erofs umount under load: one line ($ERROR_STDERR), the mount still works"
        else
            fail "erofs umount under load failed ($ERROR_STDERR) but the mount does not work any more"
        fi
    elif [[ $ERROR_WHY == "exit 0, expected an error" ]]; then
        if mountpoint -q "$mnt"; then fail "erofs umount under load: exit 0 but still mounted"
        else pass "erofs umount under load: unmounted"; fi
    else
        fail "erofs umount under load ($ERROR_WHY)"
        show_error_contract "$EROFS" umount "$mnt"
    fi
    local lazy=""
    if mountpoint -q "$mnt"; then
        lazy=$EPOCHREALTIME
        check "fusermount3 -u -z under load" fusermount3 -u -z "$mnt"
        t1=$EPOCHREALTIME
    fi
    if wait_gone 5 "$mpid"; then
        rc=0
        wait "$mpid" || rc=$?
        if [[ $rc == 0 ]]; then pass "erofs mount -f exited within 5 s of the unmount, status 0"
        else fail "erofs mount -f exited with status $rc after the unmount"; fi
    else
        fail "erofs mount -f still running 5 s after the unmount"
        kill "$mpid" 2>/dev/null
        wait "$mpid"
    fi
    for i in "${rpids[@]}"; do
        if ! wait_gone 10 "$i"; then
            hung=$((hung + 1))
        fi
        rc=0
        wait "$i" || rc=$?
        [[ $rc == 124 || $rc == 137 ]] && hung=$((hung + 1))
    done
    if [[ $hung == 0 ]]; then pass "all ${#rpids[@]} readers ended after the unmount (none hung)"
    else fail "$hung of ${#rpids[@]} readers hung (killed by timeout)"; fi
    # Counted once the readers have ended: a read is logged only when it ends, and on a loaded
    # machine those in flight during the detach (a few ms) had not ended when it returned.
    if [[ -n "$lazy" ]]; then
        n=$(in_flight "$lazy" "$t1" "${logs[@]}")
        if [[ $n -ge 1 ]]; then pass "reads were in flight during fusermount3 -u -z ($n of 6 readers)"
        else fail "no read was in flight during fusermount3 -u -z (the load had stopped)"; fi
    fi
    echo "note: $(cat "${logs[@]}" | wc -l) reads logged by the readers"
    # A reply to a request the kernel dropped while the mount went away fails with ENOENT, which
    # libfuse reports on its splice path only (its writev path treats ENOENT as an interrupted
    # request and says nothing): noted, not counted. Anything else on stderr fails.
    local dropped='^fuse: splice from pipe: No such file or directory$'
    grep -q "$dropped" "$log" &&
        echo "note: libfuse: $(grep -c "$dropped" "$log") replies to requests dropped during the unmount (ENOENT)"
    out=$(grep -v "$dropped" "$log")
    if [[ -z "$out" ]]; then pass "erofs mount -f: nothing on stderr"
    else fail "erofs mount -f: stderr: $(head -n 5 <<<"$out")"; fi
    ! mountpoint -q "$mnt" || fail "$mnt is still mounted"
}
if [[ -f "$W/comp-lz4hc.img" ]]; then
    unmount_under_load "$W/comp-lz4hc.img"
fi
rm -f "$W/comp-lz4hc.img"

# --- 4. a damaged image ---------------------------------------------------------------------------------
# big.txt (3 MiB of text) is the only compressed file; the other files are small enough to be
# stored inline in the metadata, so the data area holds nothing but big.txt's pclusters.
section "4. a damaged image"
damaged() {
    local t=$W/bad img=$W/bad.img mnt=$W/mnt-bad log=$W/bad.log mpid nid layout start end f
    mkdir -p "$t/d"
    cp "$W/comp/text/text-3145745" "$t/big.txt"
    for f in 1 2 3; do head -c $((f * 300)) "$W/comp/text/text-65536" >"$t/ok-$f.txt"; done
    echo hello >"$t/d/x"
    check "erofs mkfs -z zstd -C 65536: one compressed file" "$EROFS" mkfs -q -z zstd -C 65536 "$img" "$t" || return 1
    layout=$("$EROFS" dump --json "$img" | python3 -c '
import json, sys
d = json.load(sys.stdin)
comp = sum(n for k, n in d["by_layout"].items() if k.startswith("compressed"))
plain = sum(n for k, n in d["by_layout"].items() if k in ("flat-plain", "chunk-based"))
print(comp, plain, d["block_size"], d["meta_blkaddr"])')
    read -r ncomp nplain bs meta <<<"$layout"
    if [[ $ncomp != 1 || $nplain != 0 || $meta -lt 16 ]]; then
        fail "damaged image: expected one compressed file and data blocks before the metadata ($layout)"
        return 1
    fi
    nid=$("$EROFS" stat "$img" big.txt | sed -n 's/.*nid): *\([0-9]*\).*/\1/p')
    # 64 flipped bytes in 4 KiB in the middle of the data area (blocks 1 .. meta_blkaddr)
    start=$((bs + (meta * bs - bs) / 2 - 2048))
    end=$((start + 4096))
    check "corrupt.py: 64 bytes flipped in [$start, $end)" \
        python3 "$EROFS_TEST_TOOLS/corrupt.py" "$img" "$W/bad-out" --seeds 1 --flips 64 --start "$start" --end "$end" \
        || return 1
    mkdir -p "$mnt"
    "$EROFS" mount -f "$W/bad-out/flip-1.img" "$mnt" 2>"$log" &
    mpid=$!
    check "erofs mount -f (background): damaged image" wait_mounted "$mnt" || { kill "$mpid"; wait "$mpid"; return 1; }
    check_output "damaged image: cat big.txt fails with Input/output error" 1 'big.txt: Input/output error' \
        timeout 20 cat "$mnt/big.txt"
    check_output "damaged image: cat big.txt fails again (O_DIRECT, no page cache)" 1 'Input/output error' \
        timeout 20 dd if="$mnt/big.txt" of=/dev/null bs=1M iflag=direct status=none
    # page by page, O_DIRECT: most requests start inside an extent, so the damaged one is also met
    # by decodes of its head only (which succeed for the pages before the damage); every page
    # either fails with EIO or reads back right
    check_output "damaged image: page-by-page reads fail with EIO or read back right" 0 \
        '^pages: [0-9]+ right, [1-9][0-9]* failed \(EIO\), 0 wrong$' \
        timeout 60 python3 -c '
import mmap, os, sys
src = open(sys.argv[1], "rb").read()
fd = os.open(sys.argv[2], os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
bad, wrong, right = [], [], 0
for page in range((len(src) + 4095) // 4096):
    try:
        n = os.preadv(fd, [buf], page * 4096)
    except OSError as e:
        if e.errno != 5: raise
        bad.append(page)
        continue
    if buf[:n] == src[page * 4096:page * 4096 + 4096]: right += 1
    else: wrong.append(page)
print(f"pages: {right} right, {len(bad)} failed (EIO), {len(wrong)} wrong{wrong[:5] or str()}")' "$t/big.txt" "$mnt/big.txt"
    check_output "damaged image: stat big.txt still works" 0 '^3145745$' stat -c %s "$mnt/big.txt"
    for f in ok-1.txt ok-2.txt ok-3.txt d/x; do
        check "damaged image: $f still reads back right" cmp "$t/$f" "$mnt/$f"
    done
    check_output "damaged image: treecmp sees only big.txt differ" 1 \
        '^treecmp: [0-9]+ entries compared, 1 differences$' treecmp "$t" "$mnt"
    check "damaged image: the daemon is still running" running "$mpid"
    check "damaged image: erofs umount" "$EROFS" umount "$mnt"
    if wait_gone 5 "$mpid"; then
        pass "damaged image: erofs mount -f exited after the umount"
        wait "$mpid"
    else
        fail "damaged image: erofs mount -f still running 5 s after the umount"
        kill "$mpid"
        wait "$mpid"
    fi
    # the log: only one-line messages about big.txt's nid and its damaged extent
    local lines other
    lines=$(wc -l <"$log")
    other=$(grep -Evc "^erofs mount: read: nid $nid: extent at [0-9]+ \([0-9]+ bytes from byte [0-9]+\): .+" "$log")
    echo "daemon log: $lines lines, $(sort -u "$log" | wc -l) distinct:"
    sort -u "$log" | head -n 5 | sed 's/^/    /'
    if [[ $lines -ge 1 && $other == 0 ]]; then
        pass "damaged image: the daemon logs only lines about nid $nid (big.txt; $lines, one per failed read request)"
    else
        fail "damaged image: daemon log: expected only lines 'erofs mount: read: nid $nid: extent at ...' ($lines lines, $other others)"
    fi
    crash_text "$log" && fail "damaged image: crash text in the daemon log"
    rm -rf "$t" "$img" "$W/bad-out"
}
damaged

# --- 4b. an image truncated under the mount -----------------------------------------------------------
# The daemon decodes a random reader's heads from a mapping of the image (OpenOptions::mapped_reads),
# where a truncated image raises SIGBUS: the pages whose pclusters went fail with EIO, the others
# read back right, and the daemon lives on.
section "4b. an image truncated under the mount"
truncated() {
    local t=$W/cut img=$W/cut.img mnt=$W/mnt-cut log=$W/cut.log mpid
    mkdir -p "$t"
    cp "$W/comp/text/text-3145745" "$t/big.txt"
    check "erofs mkfs -z lz4hc -C 65536: a 3 MiB file" "$EROFS" mkfs -q -z lz4hc -C 65536 "$img" "$t" || return 1
    mkdir -p "$mnt"
    "$EROFS" mount -f "$img" "$mnt" 2>"$log" &
    mpid=$!
    check "erofs mount -f (background): image to truncate" wait_mounted "$mnt" || { kill "$mpid"; wait "$mpid"; return 1; }
    # page by page, O_DIRECT (each read a request that decodes a head), before and after the cut
    local pages='
import mmap, os, sys
src = open(sys.argv[1], "rb").read()
fd = os.open(sys.argv[2], os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
bad, wrong, right = 0, [], 0
for page in range(1, (len(src) + 4095) // 4096, 3):
    try:
        n = os.preadv(fd, [buf], page * 4096)
    except OSError as e:
        if e.errno != 5: raise
        bad += 1
        continue
    if buf[:n] == src[page * 4096:page * 4096 + 4096]: right += 1
    else: wrong.append(page)
print(f"pages: {right} right, {bad} failed (EIO), {len(wrong)} wrong{wrong[:5] or str()}")'
    check_output "truncated image: every third page reads back right before the cut" 0 \
        '^pages: [1-9][0-9]* right, 0 failed \(EIO\), 0 wrong$' timeout 60 python3 -c "$pages" "$t/big.txt" "$mnt/big.txt"
    check "truncate the image to half its size under the mount" truncate -s $(($(stat -c %s "$img") / 2)) "$img"
    check_output "truncated image: pages fail with EIO or read back right" 0 \
        '^pages: [1-9][0-9]* right, [1-9][0-9]* failed \(EIO\), 0 wrong$' timeout 60 python3 -c "$pages" "$t/big.txt" "$mnt/big.txt"
    check "truncated image: the daemon is still running" running "$mpid"
    check "truncated image: erofs umount" "$EROFS" umount "$mnt"
    if wait_gone 5 "$mpid"; then
        check "truncated image: erofs mount -f exited 0 after the umount" wait "$mpid"
    else
        fail "truncated image: erofs mount -f still running 5 s after the umount"
        kill "$mpid"
        wait "$mpid"
    fi
    # I/O errors go to the reader as EIO, unlogged (a damaged image's decode errors are logged)
    if [[ ! -s $log ]]; then
        pass "truncated image: the daemon logged nothing"
    else
        fail "truncated image: the daemon logged:"
        head -n 5 "$log" | sed 's/^/    /'
    fi
    crash_text "$log" && fail "truncated image: crash text in the daemon log"
    rm -rf "$t" "$img"
}
truncated

# --- 6a. signals ----------------------------------------------------------------------------------------
# The session ends on SIGTERM and SIGHUP (libfuse's handlers) whether the loop is asleep or still
# polling the device after a request: the mount is gone and `erofs mount -f` exits 0 within 5 s.
section "6a. signals"
# signal_ends SIGNAL DELAY: mount -f, list the root, wait DELAY seconds, send SIGNAL
signal_ends() {
    local mnt=$W/mnt-sig mpid
    mkdir -p "$mnt"
    "$EROFS" mount -f "$W/ok-sig.img" "$mnt" 2>"$W/sig.log" &
    mpid=$!
    wait_mounted "$mnt" || { kill "$mpid"; wait "$mpid"; return 1; }
    ls "$mnt" >/dev/null || return 1
    sleep "$2"
    kill -s "$1" "$mpid"
    wait_gone 5 "$mpid" || { echo "erofs mount -f still running 5 s after SIG$1"; kill -9 "$mpid"; return 1; }
    wait "$mpid" || { echo "erofs mount -f exited with status $? after SIG$1"; return 1; }
    ! mountpoint -q "$mnt" || { echo "$mnt still mounted after SIG$1"; fusermount3 -u -z "$mnt"; return 1; }
    [[ ! -s "$W/sig.log" ]] || { echo "daemon said:"; cat "$W/sig.log"; return 1; }
}
mkdir -p "$W/d-sig"
echo x >"$W/d-sig/x"
check "erofs mkfs: a small image for the signals" "$EROFS" mkfs -q "$W/ok-sig.img" "$W/d-sig"
for sig in TERM HUP; do
    check "SIG$sig right after a request ends the session" signal_ends "$sig" 0
    check "SIG$sig to an idle daemon ends the session" signal_ends "$sig" 1
done

# --- 6b. errors -----------------------------------------------------------------------------------------
section "6. errors"
head -c 100000 /dev/urandom >"$W/garbage.img"
: >"$W/empty.img"
mkdir -p "$W/mnt-err"
# mount_error NAME REGEX ARGS...: erofs mount ARGS fails with one line and mounts nothing
mount_error() {
    local name=$1 regex=$2
    shift 2
    check_error "erofs mount: $name: one-line error" nonzero "$regex" "$EROFS" mount "$@"
    if mountpoint -q "$W/mnt-err"; then
        fail "erofs mount: $name: mounted anyway"
        "$EROFS" umount "$W/mnt-err" || fusermount3 -u -z "$W/mnt-err"
    fi
}
mount_error "garbage file" 'garbage\.img' "$W/garbage.img" "$W/mnt-err"
mount_error "garbage file (-f)" 'garbage\.img' -f "$W/garbage.img" "$W/mnt-err"
mount_error "empty file" 'empty\.img' "$W/empty.img" "$W/mnt-err"
mount_error "missing file" 'missing\.img' "$W/missing.img" "$W/mnt-err"
# a real image for the option errors: only the option is wrong
mkdir -p "$W/d-ok"
echo x >"$W/d-ok/x"
check "erofs mkfs: a small image for the option errors" "$EROFS" mkfs -q "$W/ok.img" "$W/d-ok"
mount_error "-o cache_size=abc" 'cache_size' -o cache_size=abc "$W/ok.img" "$W/mnt-err"
mount_error "-o cache_size=1Q" 'cache_size' -o cache_size=1Q "$W/ok.img" "$W/mnt-err"
mount_error "-o readahead=xyz" 'readahead' -o readahead=xyz "$W/ok.img" "$W/mnt-err"
mount_error "-o readahead_threads=abc" 'readahead_threads' -o readahead_threads=abc "$W/ok.img" "$W/mnt-err"
mount_error "-o poll=abc" 'poll' -o poll=abc "$W/ok.img" "$W/mnt-err"
mount_error "-o poll=2000000 (over a second)" 'poll' -o poll=2000000 "$W/ok.img" "$W/mnt-err"
mount_error "-o cache_size=99999999999G (does not fit in 64 bits)" 'cache_size' -o cache_size=99999999999G "$W/ok.img" "$W/mnt-err"
mount_error "-o cache_size=-1 (negative)" 'cache_size' -o cache_size=-1 "$W/ok.img" "$W/mnt-err"
mount_error "-o rw" 'read-only' -o rw "$W/ok.img" "$W/mnt-err"
mount_error "-o no_such_fuse_option" 'no_such_fuse_option' -o no_such_fuse_option "$W/ok.img" "$W/mnt-err"
mount_error "missing mount point" 'no-such-dir' "$W/ok.img" "$W/no-such-dir"
check_error "erofs umount of a directory that is not mounted: one-line error" nonzero 'mnt-err' \
    "$EROFS" umount "$W/mnt-err"

echo "run time: $((SECONDS - START)) s"
finish
