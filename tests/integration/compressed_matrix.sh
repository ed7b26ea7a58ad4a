#!/bin/bash
# Compressed images in the kernel: every algorithm x pcluster size {4 KiB, 16 KiB, 64 KiB, 1 MiB}
# x {compact, full indexes} x {plain tails, ztailpacking, fragments, all-fragments, dedupe}, built
# from a small tree of text, random, mixed, zero and awkward files, loop-mounted and compared with
# the source (treecmp, no relaxing option), and read back by `erofs fsck`. A larger tree and a
# sparse file over 4 GiB go through a few combinations, and a hot list (--hot-list). The peers:
# Debian's fsck.erofs accepts and extracts our lz4/lz4hc images, our reader reads mkfs.erofs's
# compressed images, and (where ../shared/peers has it) mkfs.erofs 1.9.3's fragments, inline-tail
# and all-fragments images of the awkward tree.
# Needs root, loop devices and a kernel with erofs (lz4, lzma, deflate, zstd); skips otherwise.
# shellcheck source-path=SCRIPTDIR source=lib.bash
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

require_erofs_bin
require_cmd python3
require_root
require_erofs_kernel
workdir
require_loop
scratch "$WORKDIR/s"
W=$WORKDIR/s

# A small tree for the matrix: the compressible profile without its big files, plus a few
# awkward entries (hard link, symlink, xattrs, empty file).
mktree "$W/full" compressible >/dev/null
mkdir -p "$W/src"
(cd "$W/full" && find . -type f -size -300k -exec cp -a --parents {} "$W/src" \;)
mkdir -p "$W/src/misc"
: >"$W/src/misc/empty"
printf 'small file\n' >"$W/src/misc/small"
ln "$W/src/misc/small" "$W/src/misc/small-link"
ln -s ../misc/small "$W/src/misc/symlink"
setfattr -n user.kind -v compressed "$W/src/misc/small"
big_one=$(cd "$W/src" && find . -type f -size +100k | sort | head -n 1)
[[ -n "$big_one" ]] || fail "the compressible profile has no file between 100k and 300k"
head -c 70000 "$W/src/$big_one" >"$W/src/misc/dup-prefix"
touch -d @1700000000 "$W/src/misc" "$W/src"

verdict() { [[ -z $1 ]] || { printf '%s\n' "$1"; return 1; }; }
# compare_batch SRC "NAME|MKFS-OPTIONS"...: builds and mounts an image per entry, compares them all
# with SRC in one treecmp run (starting Python costs more than building a small image), then
# unmounts each, runs `erofs fsck` on it and passes or fails the entry.
compare_batch() {
    local src=$1 i img mp opts mps=() why=()
    shift
    local specs=("$@")
    for i in "${!specs[@]}"; do
        opts=${specs[i]#*|} img=$W/b$i.img mp=$W/mnt$i why[i]=""
        # shellcheck disable=SC2086
        if ! "$EROFS" mkfs -q $opts "$img" "$src"; then
            why[i]="mkfs $opts failed"
        elif ! mount_image "$img" "$mp"; then
            why[i]="mount failed: $(dmesg | tail -n 2)"
        else
            mps+=("$mp")
        fi
    done
    : >"$W/cmp.out"
    ((${#mps[@]})) && treecmp "$src" "${mps[@]}" --label --limit 5 >"$W/cmp.out"
    for i in "${!specs[@]}"; do
        img=$W/b$i.img mp=$W/mnt$i
        if [[ -z ${why[i]} ]]; then
            grep -q "^treecmp: $mp: [0-9]* entries compared, 0 differences\$" "$W/cmp.out" ||
                why[i]="differs from the source:"$'\n'"$(grep -F "$mp: " "$W/cmp.out" | tail -n 6)"
            umount_image "$mp"
            "$EROFS" fsck -q "$img" >"$W/fsck.out" 2>&1 || why[i]+=$'\n'"fsck: $(tail -n 3 "$W/fsck.out")"
        fi
        check "${specs[i]%%|*}" verdict "${why[i]}"
        rm -f "$img"
    done
}

for alg in lz4 lz4hc lzma deflate zstd; do
    for pcluster in 4096 16384 65536 1048576; do
        batch=()
        for index in compact full; do
            for tails in plain ztailpacking fragments all-fragments dedupe; do
                ext=""
                [[ $index == full ]] && ext="legacy-compress"
                [[ $tails != plain ]] && ext="${ext:+$ext,}$tails"
                batch+=("$alg -C$pcluster $index $tails|-z$alg -C$pcluster${ext:+ -E $ext}")
            done
        done
        compare_batch "$W/src" "${batch[@]}"
    done
done

# Dedupe shares a pcluster by partial reference: other/prefix-shared starts like other/prefix-base.
# (The matrix above mounted these images and compared them; here the sharing itself is checked.)
partial_refs() {
    local img=$W/p.img n
    "$EROFS" mkfs -q "$@" "$img" "$W/src" || return 1
    n=$("$EROFS" stat -e "$img" /other/prefix-shared | grep -c ' partial$')
    rm -f "$img"
    [[ $n -ge 1 ]] || { echo "no partial reference in other/prefix-shared"; return 1; }
}
batch=()
for alg in lz4 lz4hc lzma deflate zstd; do
    check "$alg -C16384 dedupe: partial reference" partial_refs "-z$alg" -C16384 -Ededupe
    batch+=("$alg -C65536 dedupe,ztailpacking|-z$alg -C65536 -Ededupe,ztailpacking")
done
compare_batch "$W/src" "${batch[@]}"

# The larger tree (files up to 4 MiB) through a few combinations, and several threads.
compare_batch "$W/full" \
    "larger tree: lz4hc,12 -C65536 ztailpacking,fragments,dedupe|-zlz4hc,12 -C65536 -Eztailpacking,fragments,dedupe --workers 3" \
    "larger tree: lzma -C1048576|-zlzma -C1048576 --workers 2" \
    "larger tree: zstd,19 -C16384 legacy|-zzstd,19 -C16384 -Elegacy-compress"

# A hot list: its files first and outside the packed inode, whatever the tail options; the image
# still mounts identical to the source, and the listed files' data carries no fragment.
(cd "$W/full" && find . -type f -size +1k | sort | sed -n '1p;5p;9p' | sed 's|^\./||') >"$W/hot"
echo "not/in/the/source" >>"$W/hot"
compare_batch "$W/full" \
    "larger tree: hot list, lz4hc -C65536 ztailpacking,fragments|-zlz4hc -C65536 -Eztailpacking,fragments --hot-list=$W/hot" \
    "larger tree: hot list, zstd -C16384 all-fragments|-zzstd -C16384 -Eall-fragments --hot-list=$W/hot"
hot_files_own_their_data() {
    local img=$W/hot.img f
    "$EROFS" mkfs -q -zlz4hc -C65536 -Eall-fragments --hot-list="$W/hot" "$img" "$W/full" 2>"$W/hot.err" || return 1
    grep -q "hot list: not/in/the/source is not a regular file of the source" "$W/hot.err" ||
        { echo "no warning for the missing entry"; return 1; }
    while read -r f; do
        [[ $f == not/* ]] && continue
        "$EROFS" stat -e "$img" "/$f" >"$W/hot.extents" || return 1
        if grep -q fragment "$W/hot.extents"; then echo "$f: data in a fragment"; return 1; fi
    done <"$W/hot"
    rm -f "$img"
}
check "hot list: the listed files' data is their own, the missing entry a warning" hot_files_own_their_data

# A sparse file over 4 GiB (extended inode, 64-bit size): data at both ends, in the middle and
# across the 4 GiB line.
mkdir -p "$W/huge"
truncate -s $(((4 << 30) + (1 << 20))) "$W/huge/sparse"
printf 'head' | dd of="$W/huge/sparse" conv=notrunc status=none
printf 'middle' | dd of="$W/huge/sparse" bs=1 seek=$((3 << 30)) conv=notrunc status=none
printf 'across' | dd of="$W/huge/sparse" bs=1 seek=$(((4 << 30) - 3)) conv=notrunc status=none
printf 'tail' | dd of="$W/huge/sparse" bs=1 seek=$(((4 << 30) + (1 << 20) - 4)) conv=notrunc status=none
compare_batch "$W/huge" "sparse 4 GiB + 1 MiB file: lz4 -C1048576|-zlz4 -C1048576" \
    "sparse 4 GiB + 1 MiB file: zstd -C65536 fragments|-zzstd -C65536 -Efragments"

# Peers: Debian's fsck.erofs (1.5: lz4 and lz4hc, no fragments) checks and extracts our images.
for opts in "-zlz4" "-zlz4hc -C65536" "-zlz4hc -C16384 -Elegacy-compress" "-zlz4hc -C16384 -Eztailpacking"; do
    # shellcheck disable=SC2086
    "$EROFS" mkfs -q $opts "$W/peer.img" "$W/src" || fail "mkfs $opts"
    check "fsck.erofs accepts $opts" fsck.erofs "$W/peer.img"
    rm -rf "$W/peer-x"
    check "fsck.erofs --extract of $opts gives the contents" \
        bash -c 'fsck.erofs --extract="$1" "$2" >/dev/null && python3 "$3/treecmp.py" --contents-only "$4" "$1"' \
        _ "$W/peer-x" "$W/peer.img" "$EROFS_TEST_TOOLS" "$W/src"
done

# Our reader on the current reference's tail layouts: mkfs.erofs 1.9.3 (from ../shared/peers,
# where present) builds the awkward tree with fragments, inline tails and all-fragments; erofs
# extract gives back what the kernel mounts (the kernel is the oracle: 1.9.3 adds an empty
# trusted.overlay.origin to opaque directories, so its images differ from the source there), and
# erofs fsck finds nothing.
ref_mkfs=$EROFS_SOURCE_DIR/../shared/peers/erofs-utils-1.9.3/bin/mkfs.erofs
if [[ -x $ref_mkfs ]]; then
    mktree "$W/awkward" awkward >/dev/null
    for opts in "-zlz4hc -C65536 -Efragments" "-zlz4hc -C16384 -Eztailpacking" "-zlzma -C65536 -Eall-fragments" \
        "-zzstd -C65536 -Eztailpacking,fragments,dedupe"; do
        # shellcheck disable=SC2086
        if "$ref_mkfs" $opts "$W/ref193.img" "$W/awkward" >/dev/null 2>&1 && mount_image "$W/ref193.img" "$W/ref193-m"; then
            rm -rf "$W/ref193-x"
            check "erofs extract of mkfs.erofs 1.9.3 $opts equals the kernel's mount" \
                bash -c '"$1" extract -q "$2" "$3" && python3 "$4/treecmp.py" "$5" "$3"' \
                _ "$EROFS" "$W/ref193.img" "$W/ref193-x" "$EROFS_TEST_TOOLS" "$W/ref193-m"
            umount_image "$W/ref193-m"
            check_rc "erofs fsck of mkfs.erofs 1.9.3 $opts" 0 "$EROFS" fsck -q "$W/ref193.img"
        else
            fail "mkfs.erofs 1.9.3 $opts, or mounting its image, failed"
        fi
    done
else
    skip_section "mkfs.erofs 1.9.3 not found at $ref_mkfs (its tail layouts are read by the compat images only)"
fi

# Our reader on mkfs.erofs's compressed images.
for opts in "-zlz4hc" "-zlz4hc -C65536" "-zlz4hc -C16384 -Eztailpacking" "-zlz4" "-zlz4hc -C65536 -Elegacy-compress"; do
    # shellcheck disable=SC2086
    if mkfs.erofs $opts "$W/ref.img" "$W/src" >/dev/null 2>&1; then
        rm -rf "$W/ref-x"
        check "erofs extract of mkfs.erofs $opts" \
            bash -c '"$1" extract -q "$2" "$3" && python3 "$4/treecmp.py" "$5" "$3"' \
            _ "$EROFS" "$W/ref.img" "$W/ref-x" "$EROFS_TEST_TOOLS" "$W/src"
        check_rc "erofs fsck of mkfs.erofs $opts" 0 "$EROFS" fsck -q "$W/ref.img"
    else
        fail "mkfs.erofs $opts failed"
    fi
done

finish
