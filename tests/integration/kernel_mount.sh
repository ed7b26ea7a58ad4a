#!/bin/bash
# Images built by `erofs mkfs` must mount in the Linux kernel and give back the source tree.
#
#  1. The awkward tree (full profile: odd names, the 10,000-entry directory, every file type,
#     hard links, xattrs/ACLs, odd mtimes/modes/owners, sparse files) -> `erofs mkfs --verify`
#     -> loop mount -> treecmp with no relaxing option at all: content, type, mode, uid/gid,
#     size, mtime in ns, xattrs, symlink targets, device numbers and hard-link groups must be
#     identical. `erofs fsck` must call the image clean.
#  2. The same with the small profile (the awkward tree without the 10,000-entry directory) for
#     -b 512, -b 1024, -b 2048 and -E force-inode-extended (also: no compact inode in the image).
#  3. Lossy options, each compared with exactly the treecmp option it needs, plus a direct check
#     of what it must have done:
#       -T 1700000000   every mtime on the mount is 1700000000.000000000 (treecmp --no-mtime)
#       --all-root      every uid and gid on the mount is 0            (treecmp --no-owner)
#     -T also with -E force-inode-extended: no compact inode although compact ones would fit
#     (without it, the -T image does use compact inodes).
#  4. --chunksize=4096 and --chunksize=65536: the small tree compares exactly; a tree with a
#     1 GiB sparse file (a few bytes of data at the start, the middle and the end) gives an image
#     far smaller than the apparent size (holes are not stored) whose mounted file still reads
#     back identical.
#  5. -L and -U are what blkid and `erofs dump --json` report; -U clear gives the nil UUID.
# For every image built: `erofs dump --json` sizes add up (data_bytes + metadata_bytes <=
# image_bytes, metadata_bytes > 0).
#
# Needs root, loop devices and a kernel with erofs; skips (77) otherwise.
# shellcheck disable=SC2317  # (functions below are called indirectly, through check)
# shellcheck source-path=SCRIPTDIR source=lib.bash
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

require_erofs_bin
require_cmd python3 find stat
require_root
require_erofs_kernel
workdir
require_loop
scratch "$WORKDIR/s"
W=$WORKDIR/s

# all_mtimes_are DIR SECONDS: every entry below DIR (and DIR) has mtime SECONDS.000000000 (lstat)
all_mtimes_are() {
    python3 - "$1" "$2" <<'PY'
import os, sys
root, want = sys.argv[1], int(sys.argv[2]) * 10**9
bad = 0
for d, dirs, files in os.walk(root):
    for p in [d] + [os.path.join(d, n) for n in dirs + files]:
        ns = os.lstat(p).st_mtime_ns
        if ns != want:
            bad += 1
            if bad <= 5:
                print("%r: mtime %d ns" % (p, ns))
sys.exit(1 if bad else 0)
PY
}

# json_field IMAGE KEY: one field of `erofs dump --json IMAGE`
json_field() {
    "$EROFS" dump --json "$1" | python3 -c '
import json, sys
v = json.load(sys.stdin)[sys.argv[1]]
print(v if not isinstance(v, (list, dict)) else json.dumps(v))' "$2"
}

# field_is IMAGE KEY VALUE
field_is() {
    local v
    v=$(json_field "$1" "$2") || return 1
    [[ "$v" == "$3" ]] || { echo "dump --json: $2 is '$v', expected '$3'"; return 1; }
}

# dump_sizes_add_up IMAGE: in `erofs dump --json`, data_bytes + metadata_bytes <= image_bytes and
# metadata_bytes > 0 (every image has a superblock and inodes)
dump_sizes_add_up() {
    "$EROFS" dump --json "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
data, meta, size = d["data_bytes"], d["metadata_bytes"], d["image_bytes"]
print("data_bytes %d + metadata_bytes %d, image_bytes %d" % (data, meta, size))
sys.exit(0 if data + meta <= size and meta > 0 else 1)'
}

# roundtrip NAME SRC "TREECMP OPTIONS" MKFS_OPTIONS...
#   erofs mkfs --verify MKFS_OPTIONS $W/NAME.img SRC, mount it on $W/mnt-NAME (left mounted,
#   path in MNT, image in IMG), compare with treecmp (its last line must match $CMP_REGEX, by
#   default ' 0 differences$'). Returns non-zero if the image could not be built or mounted.
roundtrip() {
    local name=$1 src=$2 cmpopts=$3
    shift 3
    IMG=$W/$name.img
    MNT=$W/mnt-$name
    check "mkfs --verify $*: $name" "$EROFS" mkfs -q --verify "$@" "$IMG" "$src" || return 1
    check "mount: $name" mount_image "$IMG" "$MNT" || return 1
    check "dump --json: sizes add up: $name" dump_sizes_add_up "$IMG"
    # shellcheck disable=SC2086  # cmpopts is a list of options
    check_output "treecmp ${cmpopts:-(exact)}: $name" 0 "${CMP_REGEX:- 0 differences\$}" \
        treecmp "$src" "$MNT" $cmpopts
}

# done_with NAME: unmount and delete its image
done_with() {
    umount_image "$W/mnt-$1" || fail "umount $W/mnt-$1"
    rm -f "$W/$1.img"
}

check "mktree awkward" mktree "$W/awkward" awkward >/dev/null
check "mktree small" mktree "$W/small" small >/dev/null

# --- 1. full awkward tree, default options, exact ------------------------------------------------
# (the regex also makes sure that the whole tree, 10,000+ entries, was compared)
if CMP_REGEX='^treecmp: [0-9]{5,} entries compared, 0 differences$' roundtrip default "$W/awkward" ""; then
    check_output "erofs fsck: default image is clean" 0 'clean' "$EROFS" fsck "$IMG"
fi
done_with default

# --- 2. block sizes and extended inodes ------------------------------------------------------------
for bs in 512 1024 2048; do
    if roundtrip "b$bs" "$W/small" "" -b "$bs"; then
        check "dump --json: block_size $bs" field_is "$IMG" block_size "$bs"
    fi
    done_with "b$bs"
done

if roundtrip extended "$W/small" "" -E force-inode-extended; then
    check "force-inode-extended: no compact inode" field_is "$IMG" compact_inodes 0
fi
done_with extended

# --- 3. lossy options ----------------------------------------------------------------------------
# -T: every mtime becomes the given time, so mtimes are left out of the comparison and checked
# directly instead.
if roundtrip fixed-time "$W/small" "--no-mtime" -T 1700000000; then
    check "-T 1700000000: every mtime on the mount is 1700000000" all_mtimes_are "$MNT" 1700000000
    check "-T 1700000000: dump --json epoch" field_is "$IMG" epoch 1700000000
    check "-T 1700000000: compact inodes are used where they fit" \
        bash -c "set -o pipefail; '$EROFS' dump --json '$IMG' | python3 -c 'import json, sys; sys.exit(json.load(sys.stdin)[\"compact_inodes\"] == 0)'"
    check_output "-T 1700000000: the source had other mtimes (the check means something)" 1 \
        ' mtime: ' treecmp "$W/small" "$MNT" --limit 1
fi
done_with fixed-time

# -E force-inode-extended where compact inodes would fit (-T: no per-file mtime to keep)
if roundtrip fixed-time-extended "$W/small" "--no-mtime" -T 1700000000 -E force-inode-extended; then
    check "-T with force-inode-extended: no compact inode" field_is "$IMG" compact_inodes 0
    check "-T with force-inode-extended: every mtime on the mount is 1700000000" all_mtimes_are "$MNT" 1700000000
fi
done_with fixed-time-extended

if roundtrip all-root "$W/small" "--no-owner" --all-root; then
    check "--all-root: every uid and gid on the mount is 0" \
        no_output find "$MNT" \( ! -uid 0 -o ! -gid 0 \) -print -quit
    check "--all-root: the source had other owners (the check means something)" \
        test -n "$(find "$W/small" \( ! -uid 0 -o ! -gid 0 \) -print -quit)"
fi
done_with all-root

# --- 4. chunk-based files and holes --------------------------------------------------------------
GiB=$((1024 * 1024 * 1024))
mkdir -p "$W/sparse/dir"
truncate -s "$GiB" "$W/sparse/huge"
printf 'head' | dd of="$W/sparse/huge" conv=notrunc status=none
printf 'middle' | dd of="$W/sparse/huge" bs=1 seek=$((GiB / 2 + 5)) conv=notrunc status=none
printf 'tail' | dd of="$W/sparse/huge" bs=1 seek=$((GiB - 4)) conv=notrunc status=none
echo "not sparse" >"$W/sparse/dir/small"
truncate -s 100000 "$W/sparse/dir/all-hole"
touch -d @1600000000.123456789 "$W/sparse/huge" "$W/sparse/dir/small" "$W/sparse/dir/all-hole" "$W/sparse/dir"

for cs in 4096 65536; do
    if roundtrip "chunk$cs-small" "$W/small" "" --chunksize="$cs"; then
        check "--chunksize=$cs: files are chunk-based" \
            bash -c "set -o pipefail; '$EROFS' dump --json '$IMG' | grep '\"chunk-based\"' >/dev/null"
    fi
    done_with "chunk$cs-small"

    if roundtrip "chunk$cs-sparse" "$W/sparse" "" --chunksize="$cs"; then
        size=$(stat -c %s "$IMG")
        # 1 GiB apparent; stored data is a few chunks plus the chunk index (4 or 8 bytes per
        # chunk: 2 MiB at most for 4 KiB chunks). 16 MiB leaves room and still proves that the
        # holes are not stored.
        if [[ $size -lt $((16 * 1024 * 1024)) ]]; then
            pass "--chunksize=$cs: image of $size bytes for a 1 GiB sparse file (holes not stored)"
        else
            fail "--chunksize=$cs: image of $size bytes for a 1 GiB sparse file (holes stored?)"
        fi
        used=$(du -k "$IMG" | cut -f1)
        if [[ $used -lt $((16 * 1024)) ]]; then
            pass "--chunksize=$cs: du says $used KiB"
        else
            fail "--chunksize=$cs: du says $used KiB"
        fi
        check_output "--chunksize=$cs: huge file has its apparent size on the mount" 0 "^$GiB\$" \
            stat -c %s "$MNT/huge"
        check_output "--chunksize=$cs: the data in the middle of the hole" 0 '^middle$' \
            bash -c "dd if='$MNT/huge' bs=1 skip=$((GiB / 2 + 5)) count=6 status=none; echo"
    fi
    done_with "chunk$cs-sparse"
done

# --- 5. label and UUID -----------------------------------------------------------------------------
uuid=0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0
if check "mkfs -L -U" "$EROFS" mkfs -q -L "vol-label_15byt" -U "$uuid" "$W/label.img" "$W/small"; then
    check "dump --json: label" field_is "$W/label.img" label "vol-label_15byt"
    check "dump --json: uuid" field_is "$W/label.img" uuid "$uuid"
    if have_cmd blkid; then
        check_output "blkid: TYPE" 0 '^erofs$' blkid -p -s TYPE -o value "$W/label.img"
        check_output "blkid: LABEL" 0 '^vol-label_15byt$' blkid -p -s LABEL -o value "$W/label.img"
        check_output "blkid: UUID" 0 "^$uuid\$" blkid -p -s UUID -o value "$W/label.img"
    else
        skip_section "blkid of the labelled image: no blkid"
    fi
    check "mount: labelled image" mount_image "$W/label.img" "$W/mnt-label" &&
        check_output "treecmp: labelled image" 0 ' 0 differences$' treecmp "$W/small" "$W/mnt-label"
    umount_image "$W/mnt-label"
fi
if check "mkfs -U clear" "$EROFS" mkfs -q -U clear "$W/nil.img" "$W/small"; then
    check "-U clear: dump --json uuid is nil" field_is "$W/nil.img" uuid 00000000-0000-0000-0000-000000000000
    if have_cmd blkid; then
        check "-U clear: blkid reports no UUID" no_output blkid -p -s UUID -o value "$W/nil.img"
    else
        skip_section "blkid of the -U clear image: no blkid"
    fi
fi
rm -f "$W/label.img" "$W/nil.img"

finish
