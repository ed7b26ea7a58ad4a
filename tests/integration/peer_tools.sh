#!/bin/bash
# Interoperability with Debian's erofs-utils 1.5 (mkfs.erofs, fsck.erofs), in both directions.
#
#  1. fsck.erofs accepts our images (exit 0, no error message): default options (full awkward
#     tree), and -T, --all-root, -E force-inode-extended, -E force-inode-compact, -L/-U and
#     --chunksize=4096/65536 (small tree: the awkward tree without its 10,000-entry directory, to
#     keep the run time down). 4096-byte blocks only: erofs-utils 1.5 supports no other block
#     size.
#  2. `fsck.erofs --extract=DIR` of our default image gives back the files: with
#     `treecmp --contents-only` (names, types, sizes, contents, symlink targets) there is no
#     difference at all; with `treecmp --no-xattrs --no-hardlinks` (so modes, owners, mtimes and
#     devices compared too) the only differences are setuid/setgid bits of regular files. What 1.5
#     cannot give back, and why those options are needed:
#       - xattrs (ACLs included): fsck.erofs 1.5 extracts no xattrs at all     -> --no-xattrs
#       - hard links: every link is extracted as a separate file (nlink 1)     -> --no-hardlinks
#       - setuid/setgid: it calls chmod() before lchown(), and lchown() of a regular file
#         clears S_ISUID/S_ISGID (seen with strace: chmod("f", 0104755); lchown("f", 0, 0)),
#         so these bits are lost                               -> checked line by line below
#     Only the default layout is extracted with fsck.erofs: 1.5 mis-extracts holes of chunk-based
#     files (a sparse file comes back cut short after its last chunk of data).
#  3. Our reader reads images made by mkfs.erofs 1.5, uncompressed: default (full awkward tree),
#     -T0, -Eforce-inode-extended, --chunksize=8192 and --chunksize=4096 (small tree), from
#     copies of the trees without their 255-byte names (mkfs.erofs 1.5 fails on them):
#     `erofs fsck` calls each clean and `erofs extract` gives back the tree exactly (treecmp
#     without options; for -T0 with --no-mtime plus a check that every mtime is 0). An lz4hc image
#     is read too, under the same checks.
#
# Needs root (the tree has owners, devices and trusted.* xattrs; extraction restores owners only
# as root) and mkfs.erofs/fsck.erofs; skips (77) otherwise.
# shellcheck disable=SC2317  # (functions below are called indirectly, through check)
# shellcheck source-path=SCRIPTDIR source=lib.bash
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

require_erofs_bin
require_root
require_cmd python3 mkfs.erofs fsck.erofs
workdir
scratch "$WORKDIR/s"
W=$WORKDIR/s

check "mktree awkward" mktree "$W/src" awkward >/dev/null
check "mktree small" mktree "$W/small" small >/dev/null

# fsck_erofs_clean IMAGE: fsck.erofs exits 0 and prints no error or warning (1.5 prints
# "<E> erofs: ..." / "<W> erofs: ..." lines for problems)
fsck_erofs_clean() {
    local out rc
    out=$(fsck.erofs "$1" 2>&1)
    rc=$?
    printf '%s\n' "$out" | head -n 20
    [[ $rc == 0 ]] || return 1
    ! grep -Eq '<E>|<W>|[Ee]rror|corrupt' <<<"$out"
}

# --- 1. fsck.erofs 1.5 checks our images ------------------------------------------------------------
variants=(
    "default|"
    "fixed-time|-T 1700000000"
    "all-root|--all-root"
    "extended|-E force-inode-extended"
    "compact|-E force-inode-compact"
    "label-uuid|-L peer-label -U 01234567-89ab-cdef-0123-456789abcdef"
    "chunk4096|--chunksize=4096"
    "chunk65536|--chunksize=65536"
)
for v in "${variants[@]}"; do
    name=${v%%|*}
    read -r -a opts <<<"${v#*|}"
    tree=$W/small
    [[ $name == default ]] && tree=$W/src
    if check "erofs mkfs ${opts[*]}: $name" "$EROFS" mkfs -q "${opts[@]}" "$W/$name.img" "$tree"; then
        check "fsck.erofs 1.5 accepts our image: $name" fsck_erofs_clean "$W/$name.img"
    fi
    [[ $name == default ]] || rm -f "$W/$name.img"
done

# --- 2. fsck.erofs 1.5 --extract of our default image --------------------------------------------------
# First, that treecmp --contents-only ignores exactly what it should: a copy with other modes,
# owners, mtimes, xattrs, device numbers and a broken hard link compares equal; another byte, a
# missing file, another symlink target or another type does not.
mkdir -p "$W/co-a/d" && printf 'abc' >"$W/co-a/d/f" && ln "$W/co-a/d/f" "$W/co-a/h" &&
    ln -s f "$W/co-a/d/l" && mknod "$W/co-a/c" c 1 3 && printf 'x' >"$W/co-a/x"
cp -a "$W/co-a" "$W/co-b"
rm "$W/co-b/h" && cp "$W/co-b/d/f" "$W/co-b/h"
chmod 4700 "$W/co-b/d/f" && chown 12:34 "$W/co-b/x" && touch -d @1 "$W/co-b/d"
setfattr -n user.extra -v 1 "$W/co-b/x" 2>/dev/null
rm "$W/co-b/c" && mknod "$W/co-b/c" c 1 5
check_output "treecmp --contents-only ignores metadata" 0 ' 0 differences$' \
    treecmp "$W/co-a" "$W/co-b" --contents-only
printf 'abd' >"$W/co-b/h"
rm "$W/co-b/x" && mkdir "$W/co-b/x"
ln -sfn g "$W/co-b/d/l"
echo extra >"$W/co-b/d/extra"
check_output "treecmp --contents-only sees content, type, target and name differences" 1 ' 4 differences$' \
    treecmp "$W/co-a" "$W/co-b" --contents-only
rm -rf "$W/co-a" "$W/co-b"

# only_lost_suid_bits: reads treecmp output on stdin; every difference line must be a mode
# difference of a regular file in which B is A without S_ISUID/S_ISGID.
only_lost_suid_bits() {
    python3 -c '
import os, re, stat, sys
src, bad, n = sys.argv[1], 0, 0
for line in sys.stdin:
    line = line.rstrip("\n")
    if line.startswith("treecmp: "):
        print(line)
        continue
    n += 1
    m = re.match(r"^(.*): mode: A=([0-7]{4}) B=([0-7]{4})$", line)
    ok = False
    if m:
        a, b = int(m.group(2), 8), int(m.group(3), 8)
        path = os.path.join(src, m.group(1))
        ok = (a & 0o6000) != 0 and b == a & ~0o6000 and stat.S_ISREG(os.lstat(path).st_mode)
    if not ok:
        bad += 1
        print("unexpected difference: " + line)
print("%d differences, %d of them not a lost setuid/setgid bit" % (n, bad))
sys.exit(1 if bad else 0)' "$1"
}

# (treecmp exits 1 on differences, which are expected here; 2 is an error, and its last line must
# show the whole tree was compared)
peer_metadata_cmp() {
    treecmp "$W/src" "$W/peer-x" --no-xattrs --no-hardlinks >"$W/peer-cmp.txt"
    local rc=$?
    [[ $rc == 0 || $rc == 1 ]] || { echo "treecmp: exit $rc"; cat "$W/peer-cmp.txt"; return 1; }
    grep -Eq '^treecmp: [0-9]{5,} entries compared, [0-9]+ differences$' "$W/peer-cmp.txt" ||
        { echo "treecmp did not compare the whole tree:"; tail -n 3 "$W/peer-cmp.txt"; return 1; }
    only_lost_suid_bits "$W/src" <"$W/peer-cmp.txt"
}

if [[ -f "$W/default.img" ]]; then
    if check "fsck.erofs --extract of our default image" \
        bash -c "fsck.erofs --extract='$W/peer-x' '$W/default.img' >/dev/null"; then
        check_output "fsck.erofs extraction: treecmp --contents-only" 0 \
            '^treecmp: [0-9]{5,} entries compared, 0 differences$' \
            treecmp "$W/src" "$W/peer-x" --contents-only
        check "fsck.erofs extraction: modes, owners, mtimes, devices equal but for lost setuid/setgid bits" \
            peer_metadata_cmp
    fi
    rm -rf "$W/peer-x" "$W/default.img"
fi

# --- 3. our reader on images made by mkfs.erofs 1.5 ----------------------------------------------------
n255=$(copy_without_255_names "$W/src" "$W/src-1.5") || fail "copy without 255-byte names"
echo "note: mkfs.erofs 1.5 cannot take 255-byte names; its images are built without the $n255 of them"
rm -rf "$W/src"
copy_without_255_names "$W/small" "$W/small-1.5" >/dev/null || fail "copy without 255-byte names (small)"
rm -rf "$W/small"

# all_mtimes_zero DIR
all_mtimes_zero() {
    python3 - "$1" <<'PY'
import os, sys
bad = 0
for d, dirs, files in os.walk(sys.argv[1]):
    for p in [d] + [os.path.join(d, n) for n in dirs + files]:
        if os.lstat(p).st_mtime_ns != 0:
            bad += 1
            if bad <= 5:
                print("%r: mtime %d ns" % (p, os.lstat(p).st_mtime_ns))
sys.exit(1 if bad else 0)
PY
}

peer_variants=(
    "plain|"
    "T0|-T0"
    "extended|-Eforce-inode-extended"
    "chunk8192|--chunksize=8192"
    "chunk4096|--chunksize=4096"
    "lz4hc|-zlz4hc"
)
for v in "${peer_variants[@]}"; do
    name=${v%%|*}
    read -r -a opts <<<"${v#*|}"
    # The image goes to the disk, not to the tmpfs: mkfs.erofs 1.5 copies chunk data with
    # copy_file_range() and gives up ("Could not format the device: [Error 5]") when that fails
    # with EXDEV, as it does when the image is on a tmpfs.
    img=$WORKDIR/peer-$name.img
    tree=$W/small-1.5
    [[ $name == plain ]] && tree=$W/src-1.5
    if ! check "mkfs.erofs 1.5 ${opts[*]}: $name" mkfs.erofs --quiet "${opts[@]}" "$img" "$tree"; then
        rm -f "$img"
        continue
    fi
    check_output "erofs fsck: mkfs.erofs $name image is clean" 0 clean "$EROFS" fsck "$img"
    if check "erofs extract: mkfs.erofs $name image" "$EROFS" extract -q "$img" "$W/x-$name"; then
        if [[ $name == T0 ]]; then
            check_output "treecmp --no-mtime: mkfs.erofs $name image" 0 '^treecmp: [0-9]{3,} entries compared, 0 differences$' \
                treecmp "$tree" "$W/x-$name" --no-mtime
            check "every mtime is 0: mkfs.erofs $name image" all_mtimes_zero "$W/x-$name"
        else
            check_output "treecmp (exact): mkfs.erofs $name image" 0 '^treecmp: [0-9]{3,} entries compared, 0 differences$' \
                treecmp "$tree" "$W/x-$name"
        fi
    fi
    rm -rf "$W/x-$name" "$img"
done

finish
