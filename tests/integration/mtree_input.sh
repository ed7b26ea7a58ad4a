#!/bin/bash
# `erofs mkfs --mtree`: an image built from an mtree manifest must mount in the Linux kernel and
# show exactly the tree the manifest describes, with contents from the files it names and
# everything else from the manifest.
#
#  1. The awkward tree (small profile) described by bsdtar (--format=mtree, full paths; and
#     --format=mtree-classic, the hierarchical form with /set and ".."), keywords type, mode, uid,
#     gid, time, size, link, device -> `erofs mkfs --mtree --mtree-root TREE --verify` -> loop
#     mount -> treecmp with the tree. What mtree cannot carry, and so what is relaxed: xattrs
#     (--no-xattrs) and ACLs (the tree is copied and its ACLs removed first: with a mask, the
#     mode's group bits on disk are the mask, while libarchive describes the owning group's
#     permissions), hard links (each entry is its own inode: --no-hardlinks). Both forms give
#     byte-identical images. The build runs from an unrelated current directory.
#  2. A manifest whose owners, modes and times differ from the staging files' (uid=12345,
#     mode=0600, time=1234567890.000000042, uname=root without uid, a contents= path outside the
#     entry's own, the default content root = the manifest's directory): the mounted image shows
#     the manifest's values, never the staging files'.
#  3. Errors: a missing content file, a size= that does not match, a line that does not parse,
#     a ".." name, --mtree with --tar -> non-zero exit, one line naming the entry or line, no image
#     and no temporary file left.
#
# Needs root, loop devices, a kernel with erofs and bsdtar (libarchive-tools); skips (77) otherwise.
# shellcheck disable=SC2317,SC2016  # (functions called through check; bash -c scripts in single quotes)
# shellcheck source-path=SCRIPTDIR source=lib.bash
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

require_erofs_bin
require_cmd python3 bsdtar stat cmp setfacl
require_root
require_erofs_kernel
workdir
require_loop
scratch "$WORKDIR/s"
W=$WORKDIR/s

# no_leftovers DIR: DIR holds nothing but manifests (no image, no temporary file)
no_leftovers() {
    local extra
    extra=$(find "$1" -mindepth 1 ! -name '*.mtree' -print)
    [[ -z "$extra" ]] || { echo "left behind: $extra"; return 1; }
}

keywords='!all,type,mode,uid,gid,time,size,link,device'

# --- 1. the tree a manifest describes ----------------------------------------------------------
check "mktree small" mktree "$W/src-acl" small >/dev/null
cp -a "$W/src-acl" "$W/src"
check "remove the ACLs of the copy" setfacl -R -b "$W/src"
check "bsdtar --format=mtree" bsdtar -cf "$W/full.mtree" --format=mtree --options="$keywords" -C "$W/src" .
check "bsdtar --format=mtree-classic" \
    bsdtar -cf "$W/classic.mtree" --format=mtree-classic --options="$keywords,use-set" -C "$W/src" .
check_output "the classic manifest is hierarchical" 0 '^\.\.$' cat "$W/classic.mtree"
mkdir -p "$W/elsewhere"
for form in full classic; do
    # From an unrelated directory: nothing may be looked up relative to the current directory.
    check "mkfs --mtree ($form form) --verify" \
        bash -c 'cd "$1" && "$2" mkfs -q --verify --mtree --mtree-root "$3" "$4" "$5"' _ \
        "$W/elsewhere" "$EROFS" "$W/src" "$W/$form.img" "$W/$form.mtree"
    mount_cmp "$form form" "$W/$form.img" "$W/src" --no-xattrs --no-hardlinks
done
check "the full-path and classic forms give the same image" cmp "$W/full.img" "$W/classic.img"

# --- 2. metadata from the manifest, not from the staging files ---------------------------------
st=$W/stage
mkdir -p "$st/bin" "$st/blobs"
printf 'binary\n' >"$st/bin/tool"
printf 'configuration\n' >"$st/blobs/conf-v2"
chmod 0755 "$st/bin/tool"
chmod 0644 "$st/blobs/conf-v2"
chown 1:1 "$st/bin/tool" "$st/blobs/conf-v2"
touch -d @1000000000 "$st/bin/tool" "$st/blobs/conf-v2"
cat >"$st/image.mtree" <<'EOF'
#mtree
/set type=file uid=0 gid=0 mode=0644
. type=dir mode=0755 time=1700000000.0
./bin type=dir mode=0711 uid=12345 gid=54321 time=1600000000.0
./bin/tool mode=0600 uid=12345 gid=54321 time=1234567890.000000042 size=7
./etc type=dir time=1600000000.0
./etc/app.conf contents=blobs/conf-v2 mode=0640 uname=root gid=7 time=1500000000.999999999
./etc/link type=link link=app.conf mode=0777 time=1400000000.0
./dev type=dir time=1600000000.0
./dev/null type=char device=native,1,3 mode=0666
./dev/loop9 type=block device=native,7,9 mode=0660 gid=6
EOF
check "mkfs --mtree (default content root: the manifest's directory)" \
    bash -c 'cd / && "$1" mkfs -q --mtree "$2" "$3"' _ "$EROFS" "$W/meta.img" "$st/image.mtree"
# stat_is PATH WANT: PATH in the mounted image has "OCTAL-MODE UID GID MTIME.NANOSECONDS MAJOR:MINOR SIZE"
# (device numbers in hex, as stat prints them)
stat_is() {
    local got
    got=$(stat -c '%a %u %g %.9Y %t:%T %s' "$W/mnt/$1") || return 1
    [[ "$got" == "$2" ]] || { echo "$1: got '$got', want '$2'"; return 1; }
}
if check "mount: manifest metadata" mount_image "$W/meta.img" "$W/mnt"; then
    check "bin: the manifest's mode and owner" stat_is bin "711 12345 54321 1600000000.000000000 0:0 $(stat -c %s "$W/mnt/bin")"
    check "bin/tool: mode 0600, uid 12345, nanosecond time (staging: 0755, 1:1, 2001)" \
        stat_is bin/tool "600 12345 54321 1234567890.000000042 0:0 7"
    check "bin/tool: contents from the staging file" cmp "$W/mnt/bin/tool" "$st/bin/tool"
    check "etc/app.conf: contents= outside the entry's path, uname=root" \
        stat_is etc/app.conf "640 0 7 1500000000.999999999 0:0 14"
    check "etc/app.conf: contents" cmp "$W/mnt/etc/app.conf" "$st/blobs/conf-v2"
    check_output "etc/link -> app.conf" 0 '^app\.conf$' readlink "$W/mnt/etc/link"
    check "dev/null: character device 1,3" stat_is dev/null "666 0 0 0.000000000 1:3 0"
    check "dev/loop9: block device 7,9" stat_is dev/loop9 "660 0 6 0.000000000 7:9 0"
    check_output "only what the manifest lists" 0 '^bin dev etc $' bash -c 'ls "$1" | tr "\n" " "; echo' _ "$W/mnt"
    umount_image "$W/mnt" || fail "umount $W/mnt"
fi
check_output "fsck: manifest metadata" 0 clean "$EROFS" fsck "$W/meta.img"

# --- 3. errors ---------------------------------------------------------------------------------
bad=$W/bad
mkdir -p "$bad"
printf 'abc' >"$W/three-bytes"
printf '#mtree\n./missing type=file\n' >"$bad/missing.mtree"
printf '#mtree\n./f type=file size=4 contents=%s\n' "$W/three-bytes" >"$bad/size.mtree"
printf '#mtree\n./ok type=dir\n/what is this\n' >"$bad/line.mtree"
printf '#mtree\n./a/../../escape type=dir\n' >"$bad/dotdot.mtree"
declare -A bad_regex=(
    [missing]="mtree entry './missing': cannot open its contents .*/missing: No such file"
    [size]="mtree entry './f': size=4 but its contents .* has 3 bytes"
    [line]="line.mtree: line 3: cannot parse it"
    [dotdot]="mtree entry './a/../../escape': '..' in the name"
)
for b in missing size line dotdot; do
    check_error "error: $b" nonzero "${bad_regex[$b]}" "$EROFS" mkfs -q --mtree "$bad/out.img" "$bad/$b.mtree"
    check "error: $b leaves no image and no temporary file" no_leftovers "$bad"
done
check_error "--mtree with --tar" nonzero 'exclude each other' "$EROFS" mkfs -q --tar --mtree "$bad/out.img" "$bad/line.mtree"
check_error "--mtree-root without --mtree" nonzero 'needs --mtree' "$EROFS" mkfs -q --mtree-root / "$bad/out.img" "$W/src"
check "errors leave nothing" no_leftovers "$bad"

finish
