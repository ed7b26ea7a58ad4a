#!/bin/bash
# `erofs mkfs --tar`: images built from tar streams must mount in the Linux kernel and give back
# the tree the archive was made from.
#
#  1. The awkward tree (small profile) archived by GNU tar (--format=posix with xattrs, ACLs and
#     sparse files; --format=gnu) and by bsdtar (--format=pax with xattrs and ACLs), each plain,
#     gzip, xz and zstd -> `erofs mkfs --tar --verify` from the file -> loop mount -> treecmp.
#     What each format cannot carry, and so what is relaxed:
#       all formats    sockets are not archived          (treecmp --skip-types sock)
#       GNU posix      pre-1970 mtimes with a fraction: GNU tar writes them as the PAX standard
#                      says ("-999999999.012345679"), libarchive 3.6 reads the fraction with the
#                      wrong sign; the archive is made from a copy of the tree in which those
#                      few entries have whole-second mtimes. Everything else exact.
#       GNU format     no nanoseconds, no xattrs or ACLs (treecmp --mtime-seconds --no-xattrs)
#       bsdtar pax     exact (bsdtar writes and reads negative times the same way)
#  2. Standard input: `--tar IMAGE < archive`, `--tar IMAGE -` from a pipe: byte-identical to
#     the image built from the file.
#  3. Compressed images (-z lz4hc with all-fragments, -z lzma with ztailpacking) and
#     --chunksize from a tar: --verify, exact treecmp, fsck clean; a 1 GiB sparse file in a tar
#     with --chunksize gives a small image (holes stay holes).
#  4. Names: "./a//b/", "a/./c", implicit parents (mode 0755, owner 0, the newest entry's mtime),
#     a later entry replacing an earlier one (last wins), a directory entry for an existing
#     directory updating its metadata.
#  5. Errors: truncated archive, corrupted header checksum, "../x", "/abs", a file replacing a
#     non-empty directory, a hard link to a missing entry -> non-zero exit, one line naming the
#     entry, no image and no temporary file left.
#  6. --aufs (.wh.NAME -> char 0/0, .wh..wh..opq -> trusted.overlay.opaque=y) and --ovlfs-strip.
#  7. libarchive is loaded by a tar source only (ld.so's LD_DEBUG=files names what it opens):
#     `erofs fsck` and `erofs ls` of an image never open it, `erofs mkfs --tar` does.
#
# Needs root, loop devices and a kernel with erofs; skips (77) otherwise. The bsdtar
# (libarchive-tools) parts print a SKIPPED line, counted as skipped, when it is missing.
# shellcheck disable=SC2317  # (functions below are called indirectly, through check)
# shellcheck source-path=SCRIPTDIR source=lib.bash
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

require_erofs_bin
require_cmd python3 tar gzip xz zstd getfattr stat cmp
require_root
require_erofs_kernel
workdir
require_loop
scratch "$WORKDIR/s"
W=$WORKDIR/s

# compressed_forms TAR: TAR.gz, TAR.xz, TAR.zst beside it
compressed_forms() {
    gzip -c "$1" >"$1.gz" && xz -T1 -c "$1" >"$1.xz" && zstd -q -c "$1" >"$1.zst"
}

# no_leftovers DIR: DIR holds nothing but the archives (no image, no temporary file)
no_leftovers() {
    local extra
    extra=$(find "$1" -mindepth 1 ! -name '*.tar' -print)
    [[ -z "$extra" ]] || { echo "left behind: $extra"; return 1; }
}

check "mktree small" mktree "$W/src" small >/dev/null

# The GNU posix copy: pre-1970 mtimes with a fraction become whole seconds (see above).
cp -a "$W/src" "$W/src-gnu"
check "src-gnu: pre-1970 fractional mtimes made whole" python3 - "$W/src-gnu" <<'PY'
import os, sys
n = 0
for d, dirs, files in os.walk(sys.argv[1]):
    for p in [d] + [os.path.join(d, x) for x in dirs + files]:
        st = os.lstat(p)
        if st.st_mtime_ns < 0 and st.st_mtime_ns % 10**9:
            s = st.st_mtime_ns // 10**9 * 10**9
            os.utime(p, ns=(s, s), follow_symlinks=False)
            n += 1
print("%d entries changed" % n)
sys.exit(0 if 0 < n < 10 else 1)
PY

mkdir -p "$W/ar"
check "GNU tar --format=posix" tar -C "$W/src-gnu" --format=posix --xattrs --xattrs-include='*' --acls -S \
    -cf "$W/ar/gnupax.tar" .
check "GNU tar --format=gnu" tar -C "$W/src" --format=gnu -S -cf "$W/ar/gnu.tar" .
formats=(gnupax gnu)
if have_cmd bsdtar; then
    # bsdtar names the socket and the three names that are not UTF-8 on stderr, and still
    # archives those names (as raw bytes); its exit status is 1 because of them.
    bsdtar -C "$W/src" --format=pax --xattrs --acls -cf "$W/ar/bsd.tar" . 2>"$W/bsdtar.err"
    check "bsdtar --format=pax wrote an archive" test -s "$W/ar/bsd.tar"
    formats+=(bsd)
else
    skip_section "bsdtar archives: bsdtar (libarchive-tools) is not installed"
fi

# --- 1. every format, plain and compressed --------------------------------------------------------
for f in "${formats[@]}"; do
    case $f in
    gnupax) src=$W/src-gnu cmpopts=(--skip-types sock) ;;
    gnu) src=$W/src cmpopts=(--skip-types sock --mtime-seconds --no-xattrs) ;;
    bsd) src=$W/src cmpopts=(--skip-types sock) ;;
    esac
    check "compress $f.tar" compressed_forms "$W/ar/$f.tar"
    for ext in "" .gz .xz .zst; do
        img=$W/$f$ext.img
        if check "mkfs --tar --verify: $f.tar$ext" "$EROFS" mkfs -q --tar --verify "$img" "$W/ar/$f.tar$ext"; then
            mount_cmp "$f.tar$ext" "$img" "$src" "${cmpopts[@]}"
        fi
        [[ -z "$ext" ]] || check "$f.tar$ext gives the same image as $f.tar" cmp "$W/$f.img" "$img"
        [[ -z "$ext" ]] || rm -f "$img"
    done
done
# The checks above must mean something: GNU format really loses the nanoseconds.
if [[ -f "$W/gnu.img" ]] && mount_image "$W/gnu.img" "$W/mnt"; then
    check_output "GNU format: nanoseconds are lost (the relaxation is needed)" 1 ' mtime: ' \
        treecmp "$W/src" "$W/mnt" --skip-types sock --no-xattrs --limit 1
    umount_image "$W/mnt"
fi

# --- 2. standard input ----------------------------------------------------------------------------
check "mkfs --tar IMAGE < archive.zst" bash -c "'$EROFS' mkfs -q --tar '$W/stdin1.img' < '$W/ar/gnupax.tar.zst'"
check "stdin image equals the file image" cmp "$W/gnupax.img" "$W/stdin1.img"
check "cat archive.xz | mkfs --tar IMAGE -" bash -c "cat '$W/ar/gnupax.tar.xz' | '$EROFS' mkfs -q --tar --verify '$W/stdin2.img' -"
check "piped image equals the file image" cmp "$W/gnupax.img" "$W/stdin2.img"
rm -f "$W/stdin1.img" "$W/stdin2.img"

# --- 3. compressed and chunked images from a tar --------------------------------------------------
for opts in "-zlz4hc,9 -E all-fragments" "-zlzma -E ztailpacking" "--chunksize=4096"; do
    # shellcheck disable=SC2086  # opts is a list of options
    if check "mkfs --tar --verify $opts" "$EROFS" mkfs -q --tar --verify $opts "$W/z.img" "$W/ar/gnupax.tar.gz"; then
        mount_cmp "$opts" "$W/z.img" "$W/src-gnu" --skip-types sock
    fi
    rm -f "$W/z.img"
done

GiB=$((1024 * 1024 * 1024))
mkdir -p "$W/sparse"
truncate -s "$GiB" "$W/sparse/huge"
printf 'head' | dd of="$W/sparse/huge" conv=notrunc status=none
printf 'middle' | dd of="$W/sparse/huge" bs=1 seek=$((GiB / 2 + 5)) conv=notrunc status=none
printf 'tail' | dd of="$W/sparse/huge" bs=1 seek=$((GiB - 4)) conv=notrunc status=none
touch -d @1600000000.123456789 "$W/sparse/huge" "$W/sparse"
check "GNU tar -S of a 1 GiB sparse file" tar -C "$W/sparse" --format=posix -S -cf "$W/ar/sparse.tar" .
if check "mkfs --tar --chunksize=65536 (sparse)" "$EROFS" mkfs -q --tar --verify --chunksize=65536 "$W/sparse.img" "$W/ar/sparse.tar"; then
    size=$(stat -c %s "$W/sparse.img")
    if [[ $size -lt $((16 * 1024 * 1024)) ]]; then
        pass "sparse tar: image of $size bytes for a 1 GiB sparse file (holes not stored)"
    else
        fail "sparse tar: image of $size bytes for a 1 GiB sparse file (holes stored?)"
    fi
    mount_cmp "sparse" "$W/sparse.img" "$W/sparse"
fi
rm -f "$W/sparse.img" "$W/sparse/huge"

# --- 4. names, implicit directories, replacement --------------------------------------------------
check "craft names.tar" python3 - "$W/ar/names.tar" <<'PY'
import io, sys, tarfile
def add(t, name, kind=tarfile.REGTYPE, data=b"", mode=0o644, mtime=1600000000, uid=0, **kw):
    i = tarfile.TarInfo(name); i.type = kind; i.mode = mode; i.mtime = mtime; i.uid = uid; i.gid = uid
    for k, v in kw.items(): setattr(i, k, v)
    i.size = len(data) if kind == tarfile.REGTYPE else 0
    t.addfile(i, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    add(t, "./a//b/", tarfile.DIRTYPE, mode=0o750, uid=7)
    add(t, "a/./b/c", data=b"first")
    add(t, "a/b/c", data=b"second, wins")           # last one wins
    add(t, "x/y/z", data=b"implicit parents", mtime=1700000000)
    add(t, "a/b", tarfile.DIRTYPE, mode=0o700, uid=9)   # updates a/b, keeps a/b/c
    add(t, "a/link", tarfile.LNKTYPE, linkname="./a/b/c")
    add(t, "a/sym", tarfile.SYMTYPE, linkname="b/c")
PY
if check "mkfs --tar names.tar" "$EROFS" mkfs -q --tar --verify "$W/names.img" "$W/ar/names.tar" &&
    check "mount names.img" mount_image "$W/names.img" "$W/mnt"; then
    M=$W/mnt
    check_output "a/b/c: the last entry wins" 0 '^second, wins$' cat "$M/a/b/c"
    check_output "a/b: the later directory entry's mode and owner" 0 '^700 9 9$' stat -c '%a %u %g' "$M/a/b"
    check_output "a/link: hard link to a/b/c" 0 '^2 2$' bash -c "stat -c %h '$M/a/b/c' '$M/a/link' | paste -sd' '"
    check_output "a/sym: symlink" 0 '^b/c$' readlink "$M/a/sym"
    check_output "implicit x and x/y: 0755, owner 0, the newest mtime" 0 '^755 0 0 1700000000 755 0 0 1700000000$' \
        bash -c "stat -c '%a %u %g %Y' '$M/x' '$M/x/y' | paste -sd' '"
    check_output "implicit root: 0755 owner 0" 0 '^755 0 0$' stat -c '%a %u %g' "$M"
    check_output "names: exactly the expected entries" 0 '^a a/b a/b/c a/link a/sym x x/y x/y/z $' \
        bash -c "cd '$M' && find . -mindepth 1 | sed 's|^\./||' | LC_ALL=C sort | tr '\n' ' '"
    umount_image "$M"
fi
rm -f "$W/names.img"

# --- 5. malformed archives ------------------------------------------------------------------------
mkdir -p "$W/bad"
check "craft bad archives" python3 - "$W/bad" "$W/ar/gnupax.tar" <<'PY'
import io, sys, tarfile
out, good = sys.argv[1], sys.argv[2]
def tar(path, entries):
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as t:
        for name, kind, data, link in entries:
            i = tarfile.TarInfo(name); i.type = kind; i.mtime = 1600000000; i.linkname = link
            i.size = len(data) if kind == tarfile.REGTYPE else 0
            t.addfile(i, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
R, D, L = tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.LNKTYPE
tar(out + "/dotdot.tar", [("ok", R, b"x", ""), ("../evil", R, b"x", "")])
tar(out + "/absolute.tar", [("ok", R, b"x", ""), ("/etc/evil", R, b"x", "")])
tar(out + "/dir-replaced.tar", [("d/child", R, b"x", ""), ("d", R, b"file over dir", "")])
tar(out + "/dangling-link.tar", [("ok", R, b"x", ""), ("hl", L, b"", "missing")])
data = open(good, "rb").read()
open(out + "/truncated.tar", "wb").write(data[:len(data) // 2 + 100])
tar(out + "/checksum.tar", [("first", R, b"first data", ""), ("second", R, b"second data", "")])
blob = bytearray(open(out + "/checksum.tar", "rb").read())
pos = 1024                                  # "first": one header block, one data block
assert blob[pos:pos + 6] == b"second"
blob[pos + 148:pos + 156] = b"0000000\0"
open(out + "/checksum.tar", "wb").write(bytes(blob))
PY
declare -A bad_regex=(
    [dotdot]="'\\.\\./evil'.*'\\.\\.'"
    [absolute]="'/etc/evil'.*absolute"
    [dir-replaced]="'d'.*replaces a directory"
    [dangling-link]="'hl'.*hard link to 'missing'"
    [truncated]="entry '[^']+'.*([Tt]runcated|[Uu]nexpected|EOF)"
    [checksum]="after entry 'first'.*[Dd]amaged"
)
for b in dotdot absolute dir-replaced dangling-link truncated checksum; do
    check_error "malformed: $b.tar" nonzero "${bad_regex[$b]}" "$EROFS" mkfs -q --tar "$W/bad/out.img" "$W/bad/$b.tar"
    check "malformed: $b.tar leaves no image and no temporary file" no_leftovers "$W/bad"
    check_error "malformed: $b.tar from stdin" nonzero "${bad_regex[$b]}" \
        bash -c "'$EROFS' mkfs -q --tar '$W/bad/out.img' < '$W/bad/$b.tar'"
    check "malformed: $b.tar from stdin leaves nothing" no_leftovers "$W/bad"
done

# --- 6. --aufs and --ovlfs-strip ------------------------------------------------------------------
check "craft aufs.tar" python3 - "$W/ar/aufs.tar" <<'PY'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    def add(name, kind=tarfile.REGTYPE, data=b"", pax=None):
        i = tarfile.TarInfo(name); i.type = kind; i.mtime = 1600000000; i.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
        i.size = len(data) if kind == tarfile.REGTYPE else 0
        if pax: i.pax_headers = pax
        t.addfile(i, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
    add("d", tarfile.DIRTYPE)
    add("d/.wh.gone")
    add("o", tarfile.DIRTYPE)
    add("o/.wh..wh..opq")
    add("o/kept", data=b"kept")
    add(".wh..wh.plnk", tarfile.DIRTYPE)
    add(".wh..wh.plnk/junk", data=b"aufs bookkeeping")
    add("x", data=b"xattrs", pax={"SCHILY.xattr.trusted.overlay.origin": "o", "SCHILY.xattr.user.keep": "k"})
PY
if check "mkfs --tar --aufs --ovlfs-strip" "$EROFS" mkfs -q --tar --aufs --ovlfs-strip --verify "$W/aufs.img" "$W/ar/aufs.tar" &&
    check "mount aufs.img" mount_image "$W/aufs.img" "$W/mnt"; then
    M=$W/mnt
    check_output "--aufs: d/gone is a whiteout (char 0:0)" 0 '^character special file 0 0$' stat -c '%F %t %T' "$M/d/gone"
    check_output "--aufs: o is opaque" 0 '^y$' getfattr --only-values -n trusted.overlay.opaque "$M/o"
    check_output "--aufs: no .wh. names, no aufs bookkeeping" 0 '^\. \./d \./d/gone \./o \./o/kept \./x $' \
        bash -c "cd '$M' && find . | LC_ALL=C sort | tr '\n' ' '"
    check_output "--ovlfs-strip: trusted.overlay.origin dropped, user.keep kept" 0 '^user\.keep$' \
        bash -c "getfattr --absolute-names -m - -d '$M/x' | grep -o '^[a-z.]*'"
    umount_image "$M"
fi
if check "mkfs --tar without --aufs" "$EROFS" mkfs -q --tar "$W/plain.img" "$W/ar/aufs.tar" &&
    check "mount plain.img" mount_image "$W/plain.img" "$W/mnt"; then
    check "without --aufs: .wh. entries stay regular files" test -f "$W/mnt/d/.wh.gone"
    check_output "without --ovlfs-strip: trusted.overlay.origin kept" 0 '^o$' \
        getfattr --only-values -n trusted.overlay.origin "$W/mnt/x"
    umount_image "$W/mnt"
fi
check_error "--aufs without --tar" nonzero 'need --tar' "$EROFS" mkfs -q --aufs "$W/x.img" "$W/src"

# libarchive_opened yes|no CMD...: CMD succeeds, and the dynamic loader opens libarchive for it
# (yes) or not (no)
libarchive_opened() {
    local want=$1 log got=no
    shift
    log=$(LD_DEBUG=files "$@" 2>&1 >/dev/null) || { echo "$log" | tail -3; return 1; }
    grep -q 'file=libarchive\.so' <<<"$log" && got=yes
    [[ $got == "$want" ]] || { echo "libarchive opened: $got, expected $want"; return 1; }
}
check "mkfs --tar opens libarchive" libarchive_opened yes "$EROFS" mkfs -q --tar "$W/lib.img" "$W/ar/aufs.tar"
check "fsck does not open libarchive" libarchive_opened no "$EROFS" fsck -q "$W/lib.img"
check "ls does not open libarchive" libarchive_opened no "$EROFS" ls "$W/lib.img" /

finish
