#!/bin/bash
# dm-verity trees written by `erofs mkfs --verity`, with veritysetup (cryptsetup-bin) as the oracle.
#
#  1. veritysetup verify accepts our trees, appended (at the hash offset mkfs reports) and in a
#     separate file (--verity-file), for data and hash block sizes from 512 to 4096 and both
#     algorithms, on trees of 1 data block (the smallest images), of some hundreds and of many
#     thousands (four levels). A tree of 0 data blocks does not exist: veritysetup refuses one
#     (checked here) and an EROFS image always has a block, so mkfs never asks for one.
#  2. veritysetup format, given our salt, UUID and data block count, writes the same bytes as we
#     do (superblock and tree, appended and in a separate file) and the same root hash file.
#  3. erofs dump and erofs fsck --json show the fields mkfs --json reported (dump shows a damaged
#     superblock as such, and the rest of the image).
#  4. One flipped byte in a file's data, in the tree and in the superblock: veritysetup verify and
#     erofs fsck both fail (exit 1); fsck names the damaged file. A wrong --root-hash fails too.
#  5. Reproducible: two builds give identical image, .verity and .roothash files; --workers 1
#     and 4 too.
#  6. Every compression layout combines with --verity: veritysetup verify accepts the image, and
#     (root, loop devices, erofs in the kernel) it mounts as it is and equals the source.
#  7. veritysetup open (root and dm-verity in the kernel): the verity device mounts and equals the
#     source.
#  8. Errors: a refused algorithm, a bad salt, a side file in a missing directory: one line on
#     stderr, exit 1, nothing left under IMAGE.
# Sections that need root, loop devices, the kernel's erofs or dm-verity print SKIPPED lines.
# shellcheck disable=SC2317  # (functions below are called indirectly, through check)
# shellcheck source-path=SCRIPTDIR source=lib.bash
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

require_erofs_bin
require_cmd python3 cmp truncate
VERITYSETUP=$(command -v veritysetup || command -v /usr/sbin/veritysetup || command -v /sbin/veritysetup) ||
    skip "needs veritysetup (cryptsetup-bin)"
workdir
scratch "$WORKDIR/s"
W=$WORKDIR/s

mktree "$W/small" small >/dev/null || fail "mktree small"
mktree "$W/big" compressible >/dev/null || fail "mktree compressible"
mkdir -p "$W/empty"

# build NAME MKFS-OPTIONS... SOURCE: mkfs --json into $W/NAME.json, image $W/NAME.img; sets
# ROOT SALT OFFSET ALG DBS HBS BLOCKS from the summary's "verity" object.
build() {
    local name=$1
    shift
    "$EROFS" mkfs --json --no-progress "${@:1:$#-1}" "$W/$name.img" "${@: -1}" >"$W/$name.json" || return 1
    read -r ROOT SALT OFFSET ALG DBS HBS BLOCKS < <(python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))["verity"]
print(v["root_hash"], v["salt"] or "-", v["hash_offset"], v["hash_algorithm"], v["data_block_size"],
      v["hash_block_size"], v["data_blocks"])' "$W/$name.json")
}

# format_separate NAME UUID / format_appended NAME UUID: veritysetup format, given the parameters
# of the last build and UUID, writes the same hash file and root hash file as mkfs did / appends
# the same bytes to the image cut at the hash offset.
vs_format() {
    "$VERITYSETUP" format "$@" --hash="$ALG" --data-block-size="$DBS" --hash-block-size="$HBS" \
        --data-blocks="$BLOCKS" --salt="$SALT" >/dev/null
}
format_separate() {
    vs_format "$W/$1.img" "$W/$1.verity.theirs" --uuid="$2" --root-hash-file="$W/$1.roothash.theirs" &&
        cmp "$W/$1.verity" "$W/$1.verity.theirs" && cmp "$W/$1.roothash" "$W/$1.roothash.theirs"
}
format_appended() {
    cp "$W/$1.img" "$W/$1.img.theirs" && truncate -s "$OFFSET" "$W/$1.img.theirs" &&
        vs_format "$W/$1.img.theirs" "$W/$1.img.theirs" --hash-offset="$OFFSET" --uuid="$2" &&
        cmp "$W/$1.img" "$W/$1.img.theirs"
}
uuid_of() { "$VERITYSETUP" dump "$@" | awk '/^UUID:/ { print $2 }'; }

# matrix_case NAME SOURCE -b BS --verity=...: sections 1 and 2 for one build, appended and separate.
matrix_case() {
    local name=$1 src=$2 why=
    shift 2
    build "$name" --verity-file="$W/$name.verity" --root-hash-file="$W/$name.roothash" "$@" "$src" ||
        { fail "$name: mkfs"; return; }
    local separate_root=$ROOT
    check "$name: veritysetup verify, separate file ($BLOCKS data blocks)" \
        "$VERITYSETUP" verify "$W/$name.img" "$W/$name.verity" "$ROOT"
    local uuid
    uuid=$(uuid_of "$W/$name.verity")
    check "$name: veritysetup format writes our .verity and .roothash" format_separate "$name" "$uuid"

    build "$name-app" "$@" "$src" || { fail "$name: mkfs (appended)"; return; }
    [[ $ROOT == "$separate_root" ]] || why="appended root $ROOT, separate $separate_root"
    check "$name: appended and separate trees have one root" verdict "$why"
    check "$name: veritysetup verify, appended at $OFFSET" \
        "$VERITYSETUP" verify "$W/$name-app.img" "$W/$name-app.img" "$ROOT" --hash-offset="$OFFSET"
    check "$name: veritysetup format appends our bytes" format_appended "$name-app" "$uuid"
    check_output "$name: erofs fsck --root-hash" 0 "dm-verity tree clean: root hash $ROOT, as given" \
        "$EROFS" fsck --root-hash="$ROOT" "$W/$name-app.img"
    check_output "$name: erofs fsck --verity-file" 0 "dm-verity tree clean: root hash $ROOT, as given" \
        "$EROFS" fsck --verity-file="$W/$name.verity" --root-hash="$ROOT" "$W/$name.img"
    rm -f "$W/$name"*
}
verdict() { [[ -z $1 ]] || { printf '%s\n' "$1"; return 1; }; }

# --- 1, 2. veritysetup verify and format --------------------------------------------------------------
for alg in sha256 sha512; do
    for sizes in 512,512 1024,4096 4096,512 2048,2048 4096,4096; do
        dbs=${sizes%,*} hbs=${sizes#*,}
        matrix_case "small-$alg-d$dbs-h$hbs" "$W/small" -b 1024 --verity="hash=$alg,data-block=$dbs,hash-block=$hbs"
    done
    # The smallest images: one data block, a tree without levels (the root is the block's hash).
    matrix_case "one-block-$alg-d4096" "$W/empty" -b 512 --verity="hash=$alg"
    matrix_case "one-block-$alg-d2048" "$W/empty" -b 512 --verity="hash=$alg,data-block=2048,hash-block=512"
    [[ $BLOCKS == 1 ]] || fail "one-block-$alg: $BLOCKS data blocks"
done
# Many data blocks: 512-byte blocks and sha512 (8 hashes a block) give four levels and more.
matrix_case "big-sha512-d512-h512" "$W/big" -zlz4hc --verity=hash=sha512,data-block=512,hash-block=512
matrix_case "big-sha256-default" "$W/big" -zlz4hc -C65536 --verity
# 0 data blocks: veritysetup itself refuses them (its --data-blocks=0 means "the whole device",
# and a device of none is refused).
: >"$W/zero.img"
check_rc "veritysetup refuses a device of 0 data blocks" 1 \
    "$VERITYSETUP" format "$W/zero.img" "$W/zero.verity" --salt=- --uuid=00000000-0000-0000-0000-000000000000

# --- 3. dump and fsck show the fields mkfs reported ---------------------------------------------------
build shown --verity=hash=sha512,data-block=1024 --verity-salt=0123abcd "$W/small" || fail "mkfs shown"
# same_fields COMMAND...: COMMAND's JSON has the "verity" object mkfs printed for shown.img.
same_fields() {
    "$@" | python3 -c '
import json, sys
want = json.load(open(sys.argv[1]))["verity"]
del want["seconds"]  # how long the build took to make the tree
got = json.load(sys.stdin)["verity"]
sys.exit(0 if got == want else f"mkfs: {want}\nnow:  {got}")' "$W/shown.json"
}
check "erofs dump --json shows the tree mkfs wrote" same_fields "$EROFS" dump --json "$W/shown.img"
check "erofs fsck --json shows the tree mkfs wrote" same_fields "$EROFS" fsck --json "$W/shown.img"
check_output "erofs dump shows the root hash" 0 "^Verity root hash: +$ROOT\$" "$EROFS" dump "$W/shown.img"
check_output "erofs dump shows the salt" 0 "^Verity salt: +0123abcd\$" "$EROFS" dump "$W/shown.img"
check_output "mkfs prints the root hash" 0 "verity root hash: $ROOT" \
    "$EROFS" mkfs --no-progress --verity=hash=sha512,data-block=1024 --verity-salt=0123abcd "$W/shown2.img" "$W/small"
rm -f "$W"/shown*

# --- 4. flipped bytes -----------------------------------------------------------------------------------
# fails COMMAND...: COMMAND exits with an error (veritysetup's codes vary: 1 or 2), not a crash.
fails() {
    "$@"
    local rc=$?
    [[ $rc != 0 && $rc -lt 128 ]] || { echo "exit $rc"; return 1; }
}
# flip FILE OFFSET: one bit of the byte at OFFSET.
flip() {
    python3 -c '
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2])); b = f.read(1); f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 0x10]))' "$1" "$2"
}
build flipped --verity "$W/small" || fail "mkfs flipped"
victim=/sizes/size-65537
[[ -f "$W/small$victim" ]] || fail "the small profile has no $victim"
# Where the victim's first extent is stored: "erofs stat -e" prints offset, length, kind, physical.
data_at=$("$EROFS" stat -e "$W/flipped.img" "$victim" | awk '$4 == "plain" { print $5 + 100; exit }')
[[ -n $data_at ]] || fail "no plain extent in $victim"
tree_at=$((OFFSET + HBS + 5))  # the top hash block
damage() {
    local what=$1 at=$2 says=$3
    cp "$W/flipped.img" "$W/damaged.img"
    flip "$W/damaged.img" "$at"
    check "$what: veritysetup verify fails" fails \
        "$VERITYSETUP" verify "$W/damaged.img" "$W/damaged.img" "$ROOT" --hash-offset="$OFFSET"
    check_output "$what: erofs fsck --root-hash fails" 1 "$says" "$EROFS" fsck --root-hash="$ROOT" "$W/damaged.img"
    check_output "$what: erofs fsck fails" 1 "$says" "$EROFS" fsck "$W/damaged.img"
}
damage "a byte of $victim" "$data_at" "verity: data block $((data_at / DBS)) .*$victim"
damage "a byte of the tree" "$tree_at" "verity: (data block|hash block) "
damage "the superblock's signature" "$OFFSET" "no \"verity\" signature"
damage "the superblock's algorithm" $((OFFSET + 33)) "hash algorithm"
check_output "a damaged superblock: erofs dump shows the image and the damage" 0 \
    "^Verity superblock: +at byte $OFFSET, damaged: .*algorithm" "$EROFS" dump "$W/damaged.img"
damage "the superblock's data block count" $((OFFSET + 73)) "past the superblock"
damage "the superblock's salt" $((OFFSET + 90)) "verity: (none of the [0-9]+ (data|hash) blocks|hash block 0 of level)"
wrong=$(printf '%064d' 0)
check_output "a wrong root hash: erofs fsck fails" 1 "not the given $wrong" \
    "$EROFS" fsck --root-hash="$wrong" "$W/flipped.img"
check "a wrong root hash: veritysetup verify fails" fails \
    "$VERITYSETUP" verify "$W/flipped.img" "$W/flipped.img" "$wrong" --hash-offset="$OFFSET"
check "an image without a tree" "$EROFS" mkfs -q "$W/plain.img" "$W/small"
check_output "without a tree, --root-hash is a problem" 1 "no dm-verity superblock" \
    "$EROFS" fsck --root-hash="$ROOT" "$W/plain.img"
check_error "fsck: a root hash that is not hex" 1 "root hash" "$EROFS" fsck --root-hash=xyz "$W/plain.img"
rm -f "$W"/flipped* "$W/damaged.img" "$W/plain.img"

# --- 5. reproducible ----------------------------------------------------------------------------------
n=0
for workers in 1 4 4; do
    n=$((n + 1))
    check "build $n (--workers $workers)" "$EROFS" mkfs -q -zlz4hc -C65536 -Efragments --workers "$workers" --verity \
        --verity-file="$W/r$n.verity" --root-hash-file="$W/r$n.roothash" "$W/r$n.img" "$W/big"
done
for n in 2 3; do
    for f in img verity roothash; do
        check "build $n and build 1 give the same .$f" cmp "$W/r1.$f" "$W/r$n.$f"
    done
done
rm -f "$W"/r?.*

# --- 6. every compression layout, in the kernel --------------------------------------------------------
layouts=("uncompressed|" "-b 512|-b 512" "chunked|--chunksize=65536" "lz4 -C4096|-zlz4" "lz4hc -C65536|-zlz4hc -C65536"
    "lz4hc legacy|-zlz4hc -C16384 -Elegacy-compress" "lzma ztailpacking|-zlzma -C65536 -Eztailpacking"
    "deflate fragments|-zdeflate -C16384 -Efragments" "zstd all-fragments|-zzstd -C65536 -Eall-fragments"
    "lz4hc dedupe|-zlz4hc -C16384 -Ededupe,ztailpacking")
kernel=1
have_root && have_erofs_kernel && have_loop || kernel=0
[[ $kernel == 1 ]] || skip_section "mounting the --verity images needs root, loop devices and erofs in the kernel"
for layout in "${layouts[@]}"; do
    name=${layout%%|*} opts=${layout#*|}
    # shellcheck disable=SC2086
    build layout --verity $opts "$W/big" || { fail "$name: mkfs --verity"; continue; }
    check "$name: veritysetup verify" "$VERITYSETUP" verify "$W/layout.img" "$W/layout.img" "$ROOT" --hash-offset="$OFFSET"
    [[ $kernel == 1 ]] && mount_cmp "$name --verity" "$W/layout.img" "$W/big"
done
rm -f "$W"/layout.*

# --- 7. veritysetup open ------------------------------------------------------------------------------
build opened --verity -zlz4hc "$W/big" || fail "mkfs opened"
name=erofs-kit-test-$$
if [[ $kernel == 0 ]]; then
    skip_section "veritysetup open: needs root, loop devices and erofs in the kernel"
elif ! out=$("$VERITYSETUP" open "$W/opened.img" "$name" "$W/opened.img" "$ROOT" --hash-offset="$OFFSET" 2>&1); then
    skip_section "veritysetup open: no dm-verity here ($out)"
else
    if check "the verity device mounts" mount_image "/dev/mapper/$name" "$WORKDIR/vmnt"; then
        check_output "the verity device equals the source" 0 ' 0 differences$' treecmp "$W/big" "$WORKDIR/vmnt" --limit 20
        umount_image "$WORKDIR/vmnt" || fail "umount the verity device"
    fi
    check "veritysetup close" "$VERITYSETUP" close "$name"
fi

# --- 8. errors ----------------------------------------------------------------------------------------
check_error "a refused algorithm" 1 "md5" "$EROFS" mkfs --verity=hash=md5 "$W/e.img" "$W/small"
check_error "a data block size dm-verity refuses" 1 "8192" "$EROFS" mkfs --verity=data-block=8192 "$W/e.img" "$W/small"
check_error "a salt that is not hex" 1 "salt" "$EROFS" mkfs --verity-salt=xyz "$W/e.img" "$W/small"
check_error "--verity-file in a missing directory" 1 "missing" \
    "$EROFS" mkfs --verity-file="$W/missing/x.verity" "$W/e.img" "$W/small"
check_error "--root-hash-file in a missing directory" 1 "missing" \
    "$EROFS" mkfs --root-hash-file="$W/missing/x.roothash" "$W/e.img" "$W/small"
leftovers=$(find "$W" -maxdepth 1 -name 'e.img*')
check "failed builds leave nothing under IMAGE" verdict "${leftovers:+left behind: $leftovers}"

finish
