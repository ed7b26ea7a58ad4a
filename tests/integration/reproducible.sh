#!/bin/bash
# Reproducible builds: the image depends only on the tree's content and the options.
#
#  1. Two builds of the awkward tree (full profile) give identical bytes; so do two builds with
#     -b 512 and two with --chunksize=65536, and the UUID (derived from the content by default)
#     is the same.
#  2. SOURCE_DATE_EPOCH: two builds give identical bytes, different from the build without it;
#     the image time is SOURCE_DATE_EPOCH and the result equals -T with the same value.
#  3. -U random: two builds get different UUIDs (and so different bytes); -U with a fixed UUID
#     twice: identical bytes.
#  4. A `cp -a` copy of the tree in another directory (other inode numbers, other directory
#     order on disk, other ctimes/atimes) gives the same image bytes. So does the tree after
#     only its atimes and ctimes changed (reading every file; chmod to another mode and back).
# No root needed (the tree has fewer owners and no devices without it).
# shellcheck disable=SC2317  # (functions below are called indirectly, through check)
# shellcheck source-path=SCRIPTDIR source=lib.bash
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

require_erofs_bin
require_cmd python3 cmp cp
workdir
scratch "$WORKDIR/s"
W=$WORKDIR/s

# same A B: A and B have identical bytes (cmp shows the first difference)
same() { cmp "$1" "$2"; }
# differ A B: both exist and their bytes differ (cmp exits 1; 2 is an error, a missing file)
differ() {
    cmp -s "$1" "$2"
    case $? in
    0) echo "$1 and $2 are identical"; return 1 ;;
    1) return 0 ;;
    *) cmp "$1" "$2"; return 1 ;;
    esac
}
# differ_in_block0_only A B: A and B differ, but only in their first 4096 bytes
differ_in_block0_only() {
    differ "$1" "$2" || return 1
    cmp -l "$1" "$2" | awk '$1 > 4096 { print; bad = 1 } END { exit bad }'
    [[ ${PIPESTATUS[1]} == 0 ]]
}

# uuid_of IMAGE
uuid_of() {
    "$EROFS" dump --json "$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["uuid"])'
}

mkfs() { "$EROFS" mkfs -q "$@"; }

check "mktree awkward" mktree "$W/src" awkward >/dev/null

# --- 1. same tree, same options ---------------------------------------------------------------------
check "build 1" mkfs "$W/a1.img" "$W/src"
check "build 2" mkfs "$W/a2.img" "$W/src"
check "two builds are identical" same "$W/a1.img" "$W/a2.img"
check_output "the derived UUID is the same" 0 "^$(uuid_of "$W/a1.img")\$" uuid_of "$W/a2.img"
check "two builds with -b 512 are identical" \
    bash -c "'$EROFS' mkfs -q -b 512 '$W/b1.img' '$W/src' && '$EROFS' mkfs -q -b 512 '$W/b2.img' '$W/src' && cmp '$W/b1.img' '$W/b2.img'"
check "two builds with --chunksize=65536 are identical" \
    bash -c "'$EROFS' mkfs -q --chunksize=65536 '$W/c1.img' '$W/src' && '$EROFS' mkfs -q --chunksize=65536 '$W/c2.img' '$W/src' && cmp '$W/c1.img' '$W/c2.img'"
rm -f "$W"/b?.img "$W"/c?.img

# --- 2. SOURCE_DATE_EPOCH ---------------------------------------------------------------------------
check "SOURCE_DATE_EPOCH build 1" env SOURCE_DATE_EPOCH=1600000000 "$EROFS" mkfs -q "$W/s1.img" "$W/src"
check "SOURCE_DATE_EPOCH build 2" env SOURCE_DATE_EPOCH=1600000000 "$EROFS" mkfs -q "$W/s2.img" "$W/src"
check "SOURCE_DATE_EPOCH: two builds are identical" same "$W/s1.img" "$W/s2.img"
check "SOURCE_DATE_EPOCH changes the image" differ "$W/s1.img" "$W/a1.img"
check_output "SOURCE_DATE_EPOCH: the image time" 0 '"epoch": 1600000000[,}]' "$EROFS" dump --json "$W/s1.img"
check "-T with the same time" mkfs -T 1600000000 "$W/t1.img" "$W/src"
check "SOURCE_DATE_EPOCH gives the same image as -T" same "$W/s1.img" "$W/t1.img"
rm -f "$W"/s?.img "$W/t1.img"

# --- 3. UUIDs -----------------------------------------------------------------------------------------
check "-U random build 1" mkfs -U random "$W/r1.img" "$W/src"
check "-U random build 2" mkfs -U random "$W/r2.img" "$W/src"
u1=$(uuid_of "$W/r1.img")
u2=$(uuid_of "$W/r2.img")
echo "note: random UUIDs $u1 $u2"
if [[ -n "$u1" && "$u1" != "$u2" && "$u1" =~ ^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$ ]]; then
    pass "-U random: two different version-4 UUIDs"
else
    fail "-U random: UUIDs '$u1' and '$u2' (want two different version-4 UUIDs)"
fi
check "-U random: the images differ" differ "$W/r1.img" "$W/r2.img"
check "-U random: the images differ only in the superblock block" differ_in_block0_only "$W/r1.img" "$W/r2.img"
check "-U fixed build 1" mkfs -U 12345678-1234-5678-9abc-def012345678 "$W/f1.img" "$W/src"
check "-U fixed build 2" mkfs -U 12345678-1234-5678-9abc-def012345678 "$W/f2.img" "$W/src"
check "-U fixed: identical" same "$W/f1.img" "$W/f2.img"
rm -f "$W"/r?.img "$W"/f?.img

# --- 4. a copy of the tree, and the tree with other atimes/ctimes --------------------------------------
check "cp -a of the tree" cp -a "$W/src" "$W/copy"
check_output "the copy equals the tree" 0 ' 0 differences$' treecmp "$W/src" "$W/copy"
check "build of the copy" mkfs "$W/copy.img" "$W/copy"
check "the copy gives the same image bytes" same "$W/a1.img" "$W/copy.img"
rm -rf "$W/copy" "$W/copy.img"

# read every file (atime), chmod a few to something else and back (ctime); mtimes untouched
find "$W/src" -type f -readable -exec cat {} + >/dev/null 2>&1
for f in "$W/src/links/single" "$W/src/types/regular" "$W/src/modes/setuid"; do
    m=$(stat -c %a "$f")
    chmod 0600 "$f" && chmod "$m" "$f"
done
sleep 1
check "build after atime/ctime changes" mkfs "$W/a3.img" "$W/src"
check "atimes and ctimes do not matter" same "$W/a1.img" "$W/a3.img"

finish
