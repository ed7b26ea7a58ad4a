#!/bin/bash
# Parallel extraction and fsck: what they produce does not depend on the number of workers.
#
#  1. Images of the awkward test tree (plus a 21 MiB file with a hole, written in pieces by
#     several workers): uncompressed, lz4hc -C 65536, lz4hc -C 16384 with -E ztailpacking,fragments,
#     dedupe, and -E all-fragments. Each is extracted with --workers 1, 2 and 8; every result equals
#     the source by treecmp with no relaxing option (content, type, mode, owner, mtime in ns,
#     xattrs, symlink targets, devices, hard-link groups).
#  2. A damaged pcluster: of two equal files, one has bytes flipped in the middle of its second
#     pcluster. `erofs extract` (1, 2 and 8 workers) exits 1 with exactly one line on stderr, which
#     names that file; the file is not in the destination, and everything else equals the source.
#  3. `erofs fsck` with --workers 1 and 8 prints the same report and exits alike for every image of
#     the hostile-image corpus (erofs-nasty-images), the damaged image, and an image of forty files
#     with a damaged pcluster each (forty problems, which the workers find out of order).
#  4. `erofs extract --json` and `erofs fsck --json` summaries parse and count the tree.
#
# Root is needed for the parts of the tree that only root can make (devices, owners, trusted.*
# xattrs; mktree leaves them out otherwise).
# shellcheck disable=SC2317  # (functions below are called indirectly, through check)
# shellcheck source-path=SCRIPTDIR source=lib.bash
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

require_erofs_bin
require_cmd python3 cmp
workdir
W=$WORKDIR

# --- 1. the same tree for every worker count ------------------------------------------------------
mktree "$W/src" awkward >/dev/null || { fail "mktree"; finish; }
# A file of several extraction pieces (8 MiB each): 12 MiB of text, a 9 MiB hole, a tail.
python3 - "$W/src/big.bin" <<'PY' || fail "big file"
import sys
with open(sys.argv[1], "wb") as f:
    f.write(b"".join(b"line %d of a file in pieces\n" % i for i in range(440000))[:12 << 20])
    f.seek(21 << 20)
    f.write(b"the end\n" * 4096)
PY

declare -A OPTS=(
    [plain]=""
    [lz4hc-64k]="-zlz4hc -C65536"
    [tfd-16k]="-zlz4hc -C16384 -Eztailpacking,fragments,dedupe"
    [all-fragments]="-zlz4hc -C65536 -Eall-fragments"
)
for name in plain lz4hc-64k tfd-16k all-fragments; do
    img=$W/$name.img
    # shellcheck disable=SC2086  # the options are words
    check "mkfs $name" "$EROFS" mkfs -q ${OPTS[$name]} "$img" "$W/src" || continue
    for workers in 1 2 8; do
        out=$W/x-$name-$workers
        if check "$name: extract --workers $workers" "$EROFS" extract -q --workers "$workers" "$img" "$out"; then
            check_output "$name, $workers workers: the tree equals the source" 0 ' 0 differences$' \
                treecmp "$W/src" "$out" --limit 20
        fi
        rm -rf "$out"
    done
done

# --- 2. a damaged pcluster ------------------------------------------------------------------------
mkdir -p "$W/dmg-src/d"
python3 -c 'import sys; sys.stdout.buffer.write(b"".join(b"%08d some text to compress\n" % i for i in range(20000)))' \
    >"$W/dmg-src/d/victim"
cp "$W/dmg-src/d/victim" "$W/dmg-src/d/intact"
echo small >"$W/dmg-src/small"
# damage IMAGE OUT: OUT is IMAGE with 64 bytes flipped in the middle of /d/victim's second pcluster
damage() {
    local line
    line=$("$EROFS" stat -e "$1" /d/victim | awk '$4 == "compressed" { n++; if (n == 2) { print $5, $6; exit } }')
    [[ -n "$line" ]] || { echo "no second compressed extent"; return 1; }
    python3 - "$1" "$2" $line <<'PY'
import sys
src, dst, pa, plen = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
d = bytearray(open(src, "rb").read())
for i in range(pa + plen // 2, pa + plen // 2 + 64):
    d[i] ^= 0x5A
open(dst, "wb").write(d)
PY
}
if check "mkfs of the tree to damage" "$EROFS" mkfs -q -zlz4hc -C16384 "$W/dmg.img" "$W/dmg-src" &&
    check "flip bytes in /d/victim's second pcluster" damage "$W/dmg.img" "$W/damaged.img"; then
    for workers in 1 2 8; do
        out=$W/x-dmg-$workers
        check_error "damaged, $workers workers: exit 1, one line naming the file" 1 '/d/victim: ' \
            "$EROFS" extract -q --workers "$workers" "$W/damaged.img" "$out"
        check "damaged, $workers workers: the damaged file is left out" test ! -e "$out/d/victim"
        rm -f "$W/dmg-src.cmp" && cp -a "$W/dmg-src" "$W/dmg-src.cmp" && rm "$W/dmg-src.cmp/d/victim" &&
            touch -r "$W/dmg-src/d" "$W/dmg-src.cmp/d"
        check_output "damaged, $workers workers: the rest equals the source" 0 ' 0 differences$' \
            treecmp "$W/dmg-src.cmp" "$out" --limit 20 --ignore-root-mtime
        rm -rf "$out" "$W/dmg-src.cmp"
    done
fi

# --- 3. fsck reports alike for any number of workers -----------------------------------------------
# same_fsck IMAGE: fsck --workers 1 and --workers 8 print the same and exit alike
same_fsck() {
    local a b ra rb
    a=$("$EROFS" fsck --workers 1 "$1" 2>&1)
    ra=$?
    b=$("$EROFS" fsck --workers 8 "$1" 2>&1)
    rb=$?
    [[ $ra == "$rb" && "$a" == "$b" ]] && return 0
    echo "exit $ra vs $rb"
    diff <(echo "$a") <(echo "$b") | head -n 10
    return 1
}
if [[ -n "${EROFS_NASTY:-}" && -x "$EROFS_NASTY" ]]; then
    if check "erofs-nasty-images writes the corpus" "$EROFS_NASTY" "$W/corpus"; then
        n=0 bad=0
        for img in "$W"/corpus/*.img; do
            n=$((n + 1))
            same_fsck "$img" >"$W/same.txt" || { bad=$((bad + 1)); fail "fsck 1 vs 8 workers: $(basename "$img")"; sed 's/^/    /' "$W/same.txt"; }
        done
        [[ $n -ge 50 && $bad == 0 ]] && pass "fsck with 1 and 8 workers: the same report for $n hostile images"
    fi
else
    skip_section "fsck of the hostile-image corpus: EROFS_NASTY (erofs-nasty-images) is not set"
fi
[[ -f "$W/damaged.img" ]] && check "fsck of the damaged image: the same report with 1 and 8 workers" same_fsck "$W/damaged.img"
# Forty damaged files, each handed to a worker on its own (1.5 MiB): the odd ones damaged in their
# first pcluster, the even ones in their last, so that the workers find the problems out of the
# order of the walk, in which they must be reported.
mkdir -p "$W/many"
for i in $(seq 10 49); do
    python3 -c 'import sys; sys.stdout.buffer.write(b"".join(b"%s %08d\n" % (sys.argv[1].encode(), i) for i in range(131072)))' "$i" >"$W/many/f$i"
done
# flip_files IMAGE OUT: OUT is IMAGE with bytes flipped in the first pcluster of /f11, /f13, ... and
# the last of /f10, /f12, ...
flip_files() {
    local i at=()
    for i in $(seq 10 49); do
        at+=("$("$EROFS" stat -e "$1" "/f$i" | awk -v last=$((i % 2 == 0)) '
            $4 == "compressed" { pa = $5; plen = $6; if (!last && !n++) print pa, plen }
            END { if (last) print pa, plen }')")
    done
    python3 - "$1" "$2" "${at[@]}" <<'PY'
import sys
src, dst = sys.argv[1], sys.argv[2]
d = bytearray(open(src, "rb").read())
for spot in sys.argv[3:]:
    pa, plen = map(int, spot.split())
    for k in range(pa + plen // 2, pa + plen // 2 + 64):
        d[k] ^= 0x5A
open(dst, "wb").write(d)
PY
}
if check "mkfs of forty files" "$EROFS" mkfs -q -zlz4hc -C16384 "$W/many.img" "$W/many" &&
    check "flip bytes in a pcluster of every file" flip_files "$W/many.img" "$W/many-damaged.img"; then
    check_output "fsck of forty damaged files: a problem each" 1 '40 problems' "$EROFS" fsck "$W/many-damaged.img"
    check "fsck of forty damaged files: the same report with 1 and 8 workers" same_fsck "$W/many-damaged.img"
fi

# --- 4. JSON summaries --------------------------------------------------------------------------
json_counts() {
    "$EROFS" extract --json "$W/plain.img" "$W/x-json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["files"] > 100 and d["errors"] == 0 and d["workers"] >= 1 and d["bytes"] > 21 << 20, d
print(d)' || return 1
    "$EROFS" fsck --json "$W/plain.img" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["clean"] and d["files"] > 100, d
print(d)'
}
[[ -f "$W/plain.img" ]] && check "extract --json and fsck --json" json_counts

finish
