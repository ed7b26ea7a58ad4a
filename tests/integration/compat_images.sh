#!/bin/bash
# Our reader on the reference images of tests/data/compat (built by erofs-utils 1.9.3, see its
# README.md and images.txt). For every image:
#   - `erofs dump --json` is valid JSON and names the UUID the images were built with;
#   - `erofs fsck` calls it clean (exit 0);
#   - `erofs extract` gives back compat/tree.tar exactly (treecmp without options: contents,
#     modes, owners, mtimes with ns, xattrs, the symlink, the hard link);
#   - `erofs cat` of every file gives the sha256 listed in compat/tree-sha256.txt.
# Every image, compressed or not, must pass every check.
#
# Needs root: tree.tar and the images hold trusted.* xattrs, which only root can write (tar
# and `erofs extract`). No kernel mount is needed.
# shellcheck disable=SC2317  # (functions below are called indirectly, through check)
# shellcheck source-path=SCRIPTDIR source=lib.bash
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

require_erofs_bin
require_root
require_cmd python3 tar sha256sum
C=$EROFS_COMPAT_DIR
workdir
W=$WORKDIR
UUID=7f3a5e2c-1b4d-4e8f-9a6b-0c1d2e3f4a5b
EPOCH=1700000000

# The reference tree. tar sets every mtime from the archive, but a symlink in tree.tar carries
# the time it was archived while every inode in the images has mtime 1700000000 (-T1700000000):
# give the symlinks that mtime before comparing (touch -h changes the link itself).
mkdir -p "$W/ref"
check "tar -xf tree.tar" tar --xattrs --xattrs-include='*' -xf "$C/tree.tar" -C "$W/ref"
REF=$W/ref/tree
[[ -d "$REF" ]] || { fail "tree.tar has no top-level tree/"; finish; }
check "symlinks in the reference tree get mtime $EPOCH" \
    find "$REF" -type l -exec touch -h -d "@$EPOCH" {} +

# dump_ok IMAGE: dump --json parses and has our UUID and a block size
dump_ok() {
    "$EROFS" dump --json "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["uuid"] == sys.argv[1], "uuid %r" % d["uuid"]
assert d["block_size"] in (512, 1024, 2048, 4096, 8192, 16384, 32768, 65536), d["block_size"]
print("ok: block size %d, uuid %s" % (d["block_size"], d["uuid"]))' "$UUID"
}

# cat_all IMAGE: erofs cat of every file listed in tree-sha256.txt has the listed hash
cat_all() {
    local sum path got bad=0 n=0
    while read -r sum path; do
        path=${path#./}
        n=$((n + 1))
        got=$("$EROFS" cat "$1" "$path" | sha256sum) || got="(erofs cat failed)"
        got=${got%% *}
        if [[ "$got" != "$sum" ]]; then
            echo "$path: sha256 $got, expected $sum"
            "$EROFS" cat "$1" "$path" 2>&1 >/dev/null | head -n 3
            bad=$((bad + 1))
        fi
    done <"$C/tree-sha256.txt"
    echo "$n files, $bad wrong"
    [[ $bad == 0 && $n -gt 0 ]]
}

nimages=0
for img in "$C"/images/*.img; do
    [[ -f "$img" ]] || continue
    nimages=$((nimages + 1))
    name=$(basename "$img" .img)
    echo "--- $name: mkfs.erofs $(grep -m1 "^$name\.img:" "$C/images.txt" | cut -d' ' -f3-)"
    check "$name: dump --json" dump_ok "$img"
    check_output "$name: erofs fsck is clean" 0 clean "$EROFS" fsck "$img"
    if check "$name: erofs extract" "$EROFS" extract -q "$img" "$W/x-$name"; then
        check_output "$name: extracted tree equals tree.tar" 0 ' 0 differences$' \
            treecmp "$REF" "$W/x-$name"
    fi
    rm -rf "$W/x-$name"
    check "$name: erofs cat of every file matches tree-sha256.txt" cat_all "$img"
done
if [[ $nimages -ge 3 ]]; then
    pass "$nimages compat images found"
else
    fail "only $nimages compat images found"
fi

finish
