#!/bin/bash
# Errors: every failure is one clear line, a non-zero exit status and no half-written image; no
# input, however damaged, crashes a command.
#
#  1. Bad mkfs options (-b 3000, unknown -E, bad -U, a 16-byte label, a chunk size that is not a
#     power of two or is below the block size, an unknown option, a non-numeric -T, a missing
#     SOURCE): non-zero exit, exactly one line on stderr naming the problem, no IMAGE and no
#     IMAGE.tmp.* left. Usage errors of the reading commands (unknown option, missing argument):
#     the same one-line contract.
#  2. Bad mkfs inputs, same contract: missing source directory, source is a file, output
#     directory missing, and (run as nobody via setpriv, so that mode 000 means something) an
#     unreadable file and an unreadable directory in the tree: the message names the path.
#     With --ignore-unreadable: exit 2, a warning naming the path, and an image that lists (and
#     mounts, where loop devices work) without the unreadable file.
#  3. A full disk: building a 10 MiB tree into a 2 MiB tmpfs fails with one line mentioning
#     "No space left" and leaves the tmpfs empty.
#  4. SIGINT and SIGTERM during the build of a ~300 MB tree leave neither IMAGE nor IMAGE.tmp.*.
#     The signal is sent as soon as the temporary image exists (rather than after a fixed 0.3 s:
#     300 MB from the page cache can be built in less than that, and then there is nothing to
#     interrupt); an attempt where the build still finishes first is repeated.
#  5. Damaged images given to every reading command (fsck, ls, stat, cat, extract, dump):
#       - a small image cut at 0, 512, 1024, 1100, 2048 bytes and at every 4 KiB boundary;
#       - garbage files: random bytes, zeros, random bytes behind a valid superblock magic, an
#         empty file, a directory, a missing file;
#     fsck: exit 1 and exactly one problem line besides its summary; the other commands: non-zero
#     exit and exactly one line on stderr; never a crash (exit < 128, no crash text).
#  6. Seeded byte flips: 200 images with one byte flipped in the blocks after the file data
#     (inodes, directories, shared xattrs), 20 with ten bytes flipped there, and 40 with one byte
#     of the superblock flipped and its checksum recomputed (tests/tools/corrupt.py), each given
#     to `erofs fsck` and `erofs extract`: never a crash, never a hang (5 s limit) and never
#     endless output (files are limited to 16 MiB; the image is ~110 KiB); fsck exits 0 or 1.
#  7. Two crafted images whose one file has its i_size raised so that its data lies outside the
#     image (a FLAT_INLINE file, and a FLAT_PLAIN file with the NULL block address, which Linux
#     reads as block 0xFFFFFFFF -> EIO): fsck (also --metadata-only) exits 1, cat fails with one
#     line, extract fails, nothing streams zeros.
# shellcheck disable=SC2317  # (functions below are called indirectly, through check)
# shellcheck source-path=SCRIPTDIR source=lib.bash
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

require_erofs_bin
require_cmd python3 timeout awk head
workdir
W=$WORKDIR

# nothing_left DIR: DIR is empty (no image, no temporary file)
nothing_left() {
    local left
    left=$(ls -A "$1" 2>&1)
    [[ -z "$left" ]] || { echo "left in $1: $left"; return 1; }
}

# mkfs_error NAME REGEX MKFS_ARGS...: the error contract for `erofs mkfs MKFS_ARGS...`, then
# nothing may be left in $W/out (where the image would have gone)
mkfs_error() {
    local name=$1 regex=$2
    shift 2
    check_error "$name" nonzero "$regex" "$EROFS" mkfs "$@"
    check "$name: no image or temporary file left" nothing_left "$W/out"
    rm -rf "${W:?}/out"/* "$W/out"/.[!.]* 2>/dev/null
}

mkdir -p "$W/out" "$W/src/sub"
echo "content" >"$W/src/sub/file"
echo "top" >"$W/src/top"
IMG=$W/out/x.img

# --- 1. bad options -------------------------------------------------------------------------------
mkfs_error "-b 3000" '3000' -b 3000 "$IMG" "$W/src"
mkfs_error "-E unknown" 'no-such-ext' -E no-such-ext "$IMG" "$W/src"
mkfs_error "-U not-a-uuid" 'not-a-uuid' -U not-a-uuid "$IMG" "$W/src"
mkfs_error "-U too short" '1234' -U 1234-5678 "$IMG" "$W/src"
mkfs_error "-L of 16 bytes" '[Ll]abel' -L 0123456789abcdef "$IMG" "$W/src"
mkfs_error "--chunksize=1000 (not a power of two)" '[Cc]hunk' --chunksize=1000 "$IMG" "$W/src"
mkfs_error "--chunksize=2048 (below the block size)" '[Cc]hunk' --chunksize=2048 "$IMG" "$W/src"
mkfs_error "unknown option --no-such-option" 'no-such-option' --no-such-option "$IMG" "$W/src"
mkfs_error "-T not-a-number" 'not-a-number|-T' -T not-a-number "$IMG" "$W/src"
check_error "mkfs without SOURCE" nonzero '' "$EROFS" mkfs "$IMG"
check "mkfs without SOURCE: nothing left" nothing_left "$W/out"
# the same contract for usage errors of the reading commands (the image need not exist: the
# arguments are wrong before it is opened)
for args in "fsck|" "extract|$W/out/dir" "ls|" "cat|x" "stat|x" "dump|"; do
    cmd=${args%%|*}
    rest=${args#*|}
    check_error "$cmd with an unknown option" nonzero 'no-such-option' \
        "$EROFS" "$cmd" --no-such-option "$W/out/none.img" ${rest:+"$rest"}
done
check_error "fsck without IMAGE" nonzero 'IMAGE' "$EROFS" fsck
check_error "extract without DIR" nonzero 'DIR' "$EROFS" extract "$W/out/none.img"
check_error "cat without PATH" nonzero 'PATH' "$EROFS" cat "$W/out/none.img"

# --- 2. bad inputs --------------------------------------------------------------------------------
mkfs_error "missing source directory" 'missing-src.*(No such file|does not exist|not found)' \
    "$IMG" "$W/missing-src"
mkfs_error "source is a file" 'top.*not a directory|not a directory.*top' "$IMG" "$W/src/top"
check_error "output directory does not exist" nonzero 'no-such-dir' \
    "$EROFS" mkfs "$W/no-such-dir/x.img" "$W/src"
check "output directory does not exist: still does not exist" test ! -e "$W/no-such-dir"

# Unreadable inputs. As root everything is readable, so mkfs runs as nobody (65534) on a tree
# everyone may read but one file (mode 000) or one directory (mode 000).
if have_root && have_cmd setpriv; then
    U=$W/unreadable
    mkdir -p "$U/src/sub" "$U/out" "$U/src2/locked"
    echo "ok" >"$U/src/sub/ok"
    echo "secret" >"$U/src/sub/secret"
    chmod 000 "$U/src/sub/secret"
    echo "hidden" >"$U/src2/locked/inside"
    echo "ok" >"$U/src2/ok"
    chmod 000 "$U/src2/locked"
    chmod 777 "$U/out"
    chmod 755 "$U" "$U/src" "$U/src2"
    as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
    if as_nobody test -r "$U/src/sub/ok" -a -w "$U/out" -a ! -r "$U/src/sub/secret"; then
        check_error "unreadable file" nonzero 'sub/secret' as_nobody "$EROFS" mkfs "$U/out/x.img" "$U/src"
        check "unreadable file: nothing left" nothing_left "$U/out"
        check_error "unreadable directory" nonzero 'locked' as_nobody "$EROFS" mkfs "$U/out/x.img" "$U/src2"
        check "unreadable directory: nothing left" nothing_left "$U/out"

        # --ignore-unreadable: exit 2, one warning naming the path, a usable image without it
        as_nobody "$EROFS" mkfs -q --ignore-unreadable "$U/out/x.img" "$U/src" >"$W/ign.out" 2>"$W/ign.err"
        rc=$?
        if [[ $rc == 2 ]]; then
            pass "--ignore-unreadable: exit 2"
            check_output "--ignore-unreadable: a warning names the path" 0 '[Ww]arning.*sub/secret' cat "$W/ign.err"
            check "--ignore-unreadable: no crash text" bash -c "! grep -Eq 'Segmentation|Aborted|Sanitizer' '$W/ign.err'"
            check "--ignore-unreadable: no temporary file left" \
                bash -c "! compgen -G '$U/out/x.img.tmp.*' >/dev/null"
        else
            fail "--ignore-unreadable: exit $rc, expected 2"
            sed 's/^/    /' "$W/ign.err"
        fi
        check "--ignore-unreadable: the image is clean" "$EROFS" fsck "$U/out/x.img"
        check_output "--ignore-unreadable: image has sub/ok and not sub/secret" 0 '^ok$' \
            "$EROFS" ls "$U/out/x.img" sub
        if ! have_erofs_kernel || ! have_loop; then
            skip_section "loop mount of the --ignore-unreadable image: no kernel erofs or loop device"
        else
            if check "--ignore-unreadable: the image mounts" mount_image "$U/out/x.img" "$W/mnt-ign"; then
                check_output "--ignore-unreadable: mounted sub/ok reads back" 0 '^ok$' cat "$W/mnt-ign/sub/ok"
                check "--ignore-unreadable: sub/secret is not in the image" test ! -e "$W/mnt-ign/sub/secret"
                umount_image "$W/mnt-ign"
            fi
        fi
    else
        skip_section "unreadable inputs: nobody cannot reach $U (parent directory permissions)"
    fi
else
    skip_section "unreadable inputs: need root and setpriv"
fi

# --- 3. full disk ---------------------------------------------------------------------------------
if have_root; then
    mkdir -p "$W/full" "$W/src10m"
    head -c $((10 * 1024 * 1024)) /dev/urandom >"$W/src10m/random"
    if mount -t tmpfs -o size=2m tmpfs "$W/full"; then
        check_error "disk full" nonzero 'No space left' "$EROFS" mkfs "$W/full/x.img" "$W/src10m"
        check "disk full: nothing left on the full filesystem" nothing_left "$W/full"
        umount "$W/full" || umount -l "$W/full"
    else
        fail "could not mount a tmpfs for the disk-full case"
    fi
    rm -rf "$W/src10m"
else
    skip_section "full disk: needs root (tmpfs mount)"
fi

# --- 4. SIGINT / SIGTERM during a long build ---------------------------------------------------------
mkdir -p "$W/bigsrc" "$W/sigout"
for i in $(seq -w 1 30); do
    head -c $((10 * 1024 * 1024)) /dev/urandom >"$W/bigsrc/random-$i" || break
done
for i in $(seq 1 200); do echo "small $i" >"$W/bigsrc/small-$i"; done

# interrupt SIG: build $W/bigsrc into $W/sigout/big.img, send SIG once the temporary image
# exists; up to 3 attempts (an attempt counts only if the signal reached a running build).
# `env --default-signal` undoes the SIG_IGN for SIGINT that bash gives background commands.
interrupt() {
    local sig=$1 attempt pid rc i sent
    for attempt in 1 2 3; do
        rm -f "$W/sigout"/*
        env --default-signal=INT "$EROFS" mkfs -q "$W/sigout/big.img" "$W/bigsrc" \
            >"$W/sig.out" 2>"$W/sig.err" &
        pid=$!
        sent=0
        for i in $(seq 1 1000); do
            if compgen -G "$W/sigout/big.img.tmp.*" >/dev/null; then
                kill "-$sig" "$pid" 2>/dev/null && sent=1
                break
            fi
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.01
        done
        wait "$pid"
        rc=$?
        if [[ $sent == 1 && $rc != 0 ]]; then
            echo "attempt $attempt: SIG$sig sent during the build, exit $rc"
            local left
            left=$(ls -A "$W/sigout")
            [[ -z "$left" ]] || { echo "left behind: $left"; return 1; }
            crash_text "$W/sig.err" && { echo "crash text:"; cat "$W/sig.err"; return 1; }
            [[ $(awk 'END { print NR }' "$W/sig.err") -le 1 ]] ||
                { echo "more than one line on stderr:"; head "$W/sig.err"; return 1; }
            return 0
        fi
        echo "attempt $attempt: the build was not interrupted (signal sent: $sent, exit $rc)"
    done
    echo "could not interrupt the build in 3 attempts"
    return 1
}
if env --default-signal=INT true 2>/dev/null; then
    check "SIGINT during the build leaves no image and no temporary file" interrupt INT
else
    skip_section "SIGINT during the build: env --default-signal missing (coreutils < 8.31)"
fi
check "SIGTERM during the build leaves no image and no temporary file" interrupt TERM
rm -rf "$W/bigsrc" "$W/sigout"

# --- 5. truncated images and garbage ------------------------------------------------------------------
# The small tree without its big files: ~110 KiB, every kind of metadata.
mkdir -p "$W/dmg"
mktree "$W/tiny" small >/dev/null
find "$W/tiny" -type f -size +16k -delete
touch -d @1500000000 "$W/tiny/sizes"
check "mkfs of the small image" "$EROFS" mkfs -q "$W/dmg/tiny.img" "$W/tiny"
TINY=$W/dmg/tiny.img
TINY_SIZE=$(stat -c %s "$TINY")
FILE_IN_IMAGE=types/regular

# fsck_rejects IMAGE: exit 1, one problem line besides the summary ("...: N problems: ..."), no
# crash
fsck_rejects() {
    local out rc n
    out=$("$EROFS" fsck "$1" 2>&1)
    rc=$?
    if [[ $rc -ge 128 ]] || crash_text <(printf '%s\n' "$out"); then
        ERROR_WHY="crashed: exit $rc"
    elif [[ $rc != 1 ]]; then
        ERROR_WHY="exit $rc, expected 1"
    else
        n=$(printf '%s\n' "$out" | grep -Evc ': [0-9]+ problems?:|^$')
        [[ $n == 1 ]] && ERROR_WHY= || ERROR_WHY="$n problem lines, expected 1"
    fi
    ERROR_STDERR=$(printf '%s\n' "$out" | head -n 20)
    ERROR_STDOUT=
    [[ -z "$ERROR_WHY" ]]
}

# rejected_by_all LABEL IMAGE: every reading command rejects IMAGE properly; one fail per
# command that does not; returns the number of failures
rejected_by_all() {
    local label=$1 img=$2 bad=0
    if ! fsck_rejects "$img"; then
        fail "$label: erofs fsck ($ERROR_WHY)"
        show_error_contract "$EROFS" fsck "$img"
        bad=$((bad + 1))
    fi
    local -a cmds=(
        "ls|$img"
        "ls|-l|$img|/"
        "stat|$img|$FILE_IN_IMAGE"
        "cat|$img|$FILE_IN_IMAGE"
        "dump|$img"
        "dump|--json|$img"
        "extract|$img|$W/dmg/x"
    )
    local c
    for c in "${cmds[@]}"; do
        local -a args
        IFS='|' read -r -a args <<<"$c"
        rm -rf "$W/dmg/x"
        if ! error_contract nonzero '' "$EROFS" "${args[@]}"; then
            fail "$label: erofs ${args[0]} ($ERROR_WHY)"
            show_error_contract "$EROFS" "${args[@]}"
            bad=$((bad + 1))
        fi
    done
    rm -rf "$W/dmg/x"
    return "$bad"
}

cuts=(0 512 1024 1100 2048)
for ((off = 4096; off < TINY_SIZE; off += 4096)); do cuts+=("$off"); done
bad=0
for cut in "${cuts[@]}"; do
    head -c "$cut" "$TINY" >"$W/dmg/cut.img"
    rejected_by_all "image cut at $cut of $TINY_SIZE bytes" "$W/dmg/cut.img" || bad=$((bad + $?))
done
[[ $bad == 0 ]] && pass "${#cuts[@]} truncated images: every command fails with one line, no crash"

python3 -c '
import random, sys
r = random.Random(42)
open(sys.argv[1], "wb").write(r.randbytes(65536))
open(sys.argv[2], "wb").write(bytes(8192))
g = bytearray(r.randbytes(65536))
g[1024:1028] = (0xE0F5E1E2).to_bytes(4, "little")     # EROFS_SUPER_MAGIC_V1
open(sys.argv[3], "wb").write(g)' "$W/dmg/random.img" "$W/dmg/zeros.img" "$W/dmg/magic.img"
: >"$W/dmg/empty.img"
mkdir -p "$W/dmg/a-directory"
bad=0
for g in random zeros magic empty; do
    rejected_by_all "garbage ($g)" "$W/dmg/$g.img" || bad=$((bad + $?))
done
rejected_by_all "a directory as the image" "$W/dmg/a-directory" || bad=$((bad + $?))
rejected_by_all "a missing image" "$W/dmg/no-such.img" || bad=$((bad + $?))
[[ $bad == 0 ]] && pass "garbage, a directory, a missing file: every command fails with one line, no crash"

# --- 6. seeded byte flips -------------------------------------------------------------------------
# The blocks after the file data: from the lower of meta_blkaddr and xattr_blkaddr (block 1 at the
# least) to the end.
meta_start=$("$EROFS" dump --json "$TINY" | python3 -c '
import json, sys
d = json.load(sys.stdin)
starts = [v for v in (d.get("meta_blkaddr", 0), d.get("xattr_blkaddr", 0)) if v]
print(max(1, min(starts) if starts else 1) * d["block_size"])')
echo "note: flipping bytes in [$meta_start, $TINY_SIZE) of $TINY"
FUZZ=$W/fuzz
mkdir -p "$FUZZ"
# extraction output on a tmpfs: much faster than the disk for hundreds of small trees
if have_root; then
    mount -t tmpfs -o size=256m tmpfs "$FUZZ" || echo "note: no tmpfs for the flip test, using the disk"
fi
check "corrupt.py: 200 images with one byte flipped after the data" \
    python3 "$EROFS_TEST_TOOLS/corrupt.py" "$TINY" "$FUZZ/meta1" --seeds 1-200 --start "$meta_start"
check "corrupt.py: 20 images with ten bytes flipped after the data" \
    python3 "$EROFS_TEST_TOOLS/corrupt.py" "$TINY" "$FUZZ/meta10" --seeds 1001-1020 --flips 10 --start "$meta_start"
check "corrupt.py: 40 images with a superblock byte flipped, checksum fixed" \
    python3 "$EROFS_TEST_TOOLS/corrupt.py" "$TINY" "$FUZZ/sb" --seeds 1-40 --superblock

# guarded COMMAND...: run with a 5 s limit and files limited to 16 MiB; sets GUARD_RC and GUARD_WHY
# (empty unless a crash, a hang or a runaway)
guarded() {
    # (a subshell that does not exec the command, as the `exit` after it ensures, so that its
    # report of a killed command, e.g. "File size limit exceeded", goes to g.err and not to this
    # script's output; a subshell is a fork, cheaper than starting another bash)
    (
        ulimit -f 16384
        timeout -k 2 5 "$@"
        exit $?
    ) >"$FUZZ/g.out" 2>"$FUZZ/g.err"
    GUARD_RC=$?
    GUARD_WHY=
    case $GUARD_RC in
    124 | 137) GUARD_WHY="did not finish within 5 s (hang, or endless output)" ;;
    153) GUARD_WHY="killed by SIGXFSZ: tried to write a file of more than 16 MiB (the image is $TINY_SIZE bytes)" ;;
    *)
        if [[ $GUARD_RC -ge 128 ]]; then
            GUARD_WHY="killed by signal $((GUARD_RC - 128))"
        elif crash_text "$FUZZ/g.out" "$FUZZ/g.err"; then
            GUARD_WHY="crash text in the output"
        fi
        ;;
    esac
    [[ -z "$GUARD_WHY" ]]
}

total=0 bad=0 clean=0 corrupt=0 stopped=
for img in "$FUZZ"/meta1/*.img "$FUZZ"/meta10/*.img "$FUZZ"/sb/*.img; do
    [[ -f "$img" ]] || continue
    total=$((total + 1))
    label="$(basename "$(dirname "$img")")/$(basename "$img")"
    if guarded "$EROFS" fsck "$img"; then
        case $GUARD_RC in
        0) clean=$((clean + 1)) ;;
        1) corrupt=$((corrupt + 1)) ;;
        *) GUARD_WHY="exit $GUARD_RC, expected 0 or 1" ;;
        esac
    fi
    if [[ -n "$GUARD_WHY" ]]; then
        bad=$((bad + 1))
        fail "flipped $label: erofs fsck: $GUARD_WHY"
        head -n 3 "$FUZZ/g.err" | cut -c1-300 | sed 's/^/    stderr: /'
    fi
    rm -rf "$FUZZ/x"
    if ! guarded "$EROFS" extract -q "$img" "$FUZZ/x"; then
        bad=$((bad + 1))
        fail "flipped $label: erofs extract: $GUARD_WHY"
        head -n 3 "$FUZZ/g.err" | cut -c1-300 | sed 's/^/    stderr: /'
        find "$FUZZ/x" -type f -size +1M -printf '    big file: %s bytes %P\n' 2>/dev/null | head -n 3
    fi
    rm -rf "$FUZZ/x"
    if [[ $bad -ge 10 ]]; then
        stopped=" (stopped after $bad failures)"
        break
    fi
done
echo "note: flips: $total images tried$stopped; fsck called $clean clean and $corrupt corrupt"
if [[ $total -lt 200 ]]; then
    fail "only $total images with flipped bytes were made, expected 260"
elif [[ $bad == 0 ]]; then
    pass "$total images with flipped bytes: no crash, no hang, no runaway output"
fi
mountpoint -q "$FUZZ" && umount "$FUZZ"

# --- 7. inodes whose data the kernel cannot read ------------------------------------------------------
# Two one-file images with the file's i_size patched (extended inodes, so i_size is the le64 at
# byte 8 of the inode; the inode is at meta_blkaddr * block size + nid * 32):
#   inline: a 1-byte FLAT_INLINE file made 2^40 + 1 bytes long: its 2^28 full blocks would start
#           at its raw_blkaddr (0xFFFFFFFF, unused for a tail-only file), far beyond the image.
#   plain:  an empty FLAT_PLAIN file (raw_blkaddr 0xFFFFFFFF) made 1 MiB long. FLAT_PLAIN has no
#           holes: Linux reads block 0xFFFFFFFF for it and fails with EIO ("attempt to access
#           beyond end of device"), so the image is corrupt, not a sparse file.
# Every reader must call both corrupt: fsck exit 1, cat/extract a one-line error, and nothing
# may stream zeros for the missing data.
# patch_size IMAGE PATH NEW_SIZE OUT: copy IMAGE to OUT with PATH's i_size set to NEW_SIZE
patch_size() {
    local nid meta
    nid=$("$EROFS" stat "$1" "$2" | sed -n 's/.*(nid): *\([0-9][0-9]*\).*/\1/p')
    meta=$("$EROFS" dump --json "$1" | python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["meta_blkaddr"] * d["block_size"])')
    [[ -n "$nid" && -n "$meta" ]] || { echo "no nid/meta_blkaddr for $2"; return 1; }
    python3 - "$1" "$4" "$((meta + nid * 32))" "$3" <<'PY'
import struct, sys
src, dst, off, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
d = bytearray(open(src, "rb").read())
fmt = struct.unpack_from("<H", d, off)[0]
assert fmt & 1, "not an extended inode: i_format 0x%x" % fmt
struct.pack_into("<Q", d, off + 8, size)
open(dst, "wb").write(d)
PY
}
mkdir -p "$W/sz/inline" "$W/sz/plain"
printf 'x' >"$W/sz/inline/f"
: >"$W/sz/plain/f"
for kind in inline plain; do
    "$EROFS" mkfs -q -T 0 -E force-inode-extended "$W/sz/$kind.img" "$W/sz/$kind" || fail "mkfs ($kind)"
done
check "patch i_size: 1-byte inline file -> 2^40+1" patch_size "$W/sz/inline.img" f $(((1 << 40) + 1)) "$W/sz/inline-big.img"
check "patch i_size: empty FLAT_PLAIN file -> 1 MiB" patch_size "$W/sz/plain.img" f $((1 << 20)) "$W/sz/plain-big.img"
# A FLAT_PLAIN inode of non-zero size whose start block is the NULL address: Linux (6.18 checked)
# reads it from that address and fails with EIO, so it is corrupt, not a hole.
for kind in inline plain; do
    img=$W/sz/$kind-big.img
    [[ -f "$img" ]] || continue
    label="$kind file with data outside the image"
    if guarded "$EROFS" fsck --metadata-only "$img" && [[ $GUARD_RC == 1 ]]; then
        pass "$label: fsck --metadata-only says corrupt"
    else
        fail "$label: fsck --metadata-only: ${GUARD_WHY:-exit $GUARD_RC, expected 1}"
        head -n 3 "$FUZZ/g.out" "$FUZZ/g.err" | sed 's/^/    /'
    fi
    if guarded "$EROFS" fsck "$img" && [[ $GUARD_RC == 1 ]]; then
        pass "$label: fsck says corrupt"
    else
        fail "$label: fsck: ${GUARD_WHY:-exit $GUARD_RC, expected 1}"
        head -n 3 "$FUZZ/g.out" "$FUZZ/g.err" | sed 's/^/    /'
    fi
    if guarded "$EROFS" cat "$img" f && [[ $GUARD_RC != 0 && $(awk 'END { print NR }' "$FUZZ/g.err") == 1 ]]; then
        pass "$label: cat fails with one line"
    else
        fail "$label: cat: ${GUARD_WHY:-exit $GUARD_RC, $(awk 'END { print NR }' "$FUZZ/g.err") lines on stderr, $(stat -c %s "$FUZZ/g.out") bytes on stdout; expected an error in one line}"
        head -n 3 "$FUZZ/g.err" | sed 's/^/    stderr: /'
    fi
    rm -rf "$FUZZ/x"
    if guarded "$EROFS" extract -q "$img" "$FUZZ/x" && [[ $GUARD_RC != 0 ]]; then
        pass "$label: extract fails"
    else
        fail "$label: extract: ${GUARD_WHY:-exit $GUARD_RC, expected an error}"
    fi
    rm -rf "$FUZZ/x"
done
if ! have_root || ! have_erofs_kernel || ! have_loop; then
    skip_section "the kernel on the NULL-address FLAT_PLAIN file: needs root, loop devices and erofs in the kernel"
elif check "mount the image with the NULL-address FLAT_PLAIN file" mount_image "$W/sz/plain-big.img" "$W/sz/mnt"; then
    check "the kernel refuses to read the NULL-address FLAT_PLAIN file too" \
        bash -c '! dd if="$1" of=/dev/null bs=4096 count=1 status=none 2>/dev/null' _ "$W/sz/mnt/f"
    umount_image "$W/sz/mnt"
fi

finish
