#!/bin/bash
# Hostile images: every bug class of tests/nasty (written by erofs-nasty-images, listed with its
# class in manifest.tsv; docs/security.md says which check stops each) given to fsck, extract and
# the FUSE driver, and extraction into destinations that hold symlinks.
#
#  1. fsck: exit 1 with at least one problem line (each "IMAGE: ..." on one line) for every corrupt
#     image, exit 0 for the valid ones (the base images, and a 4 EiB hole, which must be checked
#     in seconds); never a crash (status >= 128, sanitizer or abort text) or a hang (30 s).
#  2. extract: into AREA/dest, beside AREA/canary/victim, which the "extract" images' symlinks
#     point at (../../canary...), with files limited to 256 MiB: either a refusal (non-zero exit,
#     one line on stderr) or success; either way nothing outside AREA/dest appears or changes
#     (listing with types, sizes, modes, mtimes and the victim's digest compared). Must refuse: the
#     extract and loop classes and the directory DAG (2^23 paths from 24 directories); must
#     succeed: the base images; the 4 EiB hole uses under 1 MiB of disk (sized with ftruncate,
#     which the limit refuses, never written out).
#  3. FUSE (when /dev/fuse works): `erofs mount -f` of each image either fails at once with one
#     line (an image that cannot be opened) or mounts; then find, head -c 16M of every file,
#     readlink of every symlink and getfattr of everything (the first 500 entries; a command that
#     does not finish within its time limit is an error): errors are
#     allowed (EIO, ENOENT, ENOTDIR, ELOOP) but the mount stays up and answers stat, `erofs
#     umount` unmounts, the daemon exits with status 0 and logs only one-line "erofs mount: ..."
#     messages (and libfuse's own "fuse: ..." lines, shown as notes); the base images walk without
#     a single error.
#  4. Destinations with symlinks, extracting the valid base image: DEST/dir a symlink to a
#     directory outside, DEST/big.bin a symlink to a file outside, DEST itself a symlink to a
#     directory outside: refused, nothing outside changed; a fresh DEST: the image's symlinks are
#     created as symlinks and never followed.
# shellcheck disable=SC2317  # (functions below are called indirectly, through check)
# shellcheck source-path=SCRIPTDIR source=lib.bash
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

require_erofs_bin
[[ -n "${EROFS_NASTY:-}" && -x "$EROFS_NASTY" ]] || skip "EROFS_NASTY (path of erofs-nasty-images) is not set or not executable"
require_cmd timeout find stat sha256sum head mountpoint
workdir
scratch "$WORKDIR/s" 1g
W=$WORKDIR/s
EROFS=$(cd "$(dirname "$EROFS")" && pwd)/$(basename "$EROFS")
START=$SECONDS

section() { echo "--- $* (at $((SECONDS - START)) s)"; }

# --- helpers ---------------------------------------------------------------------------------------

# run_limited SECONDS OUT ERR COMMAND...: run with a time limit; RUN_RC, RUN_CRASH (empty or why)
run_limited() {
    local t=$1 out=$2 err=$3
    shift 3
    timeout -k 2 "$t" "$@" >"$out" 2>"$err"
    RUN_RC=$?
    RUN_CRASH=
    if [[ $RUN_RC == 124 || $RUN_RC == 137 ]]; then
        RUN_CRASH="did not finish within $t s"
    elif [[ $RUN_RC -ge 128 ]]; then
        RUN_CRASH="killed by signal $((RUN_RC - 128))"
    elif crash_text "$out" "$err"; then
        RUN_CRASH="crash text in the output"
    fi
}

# snapshot AREA: everything in AREA except AREA/dest: path, type, size, mode, mtime; and the
# digest of every regular file
snapshot() {
    (cd "$1" && find . -mindepth 1 -path ./dest -prune -o -printf '%p %y %s %m %T@\n' | LC_ALL=C sort &&
        find . -mindepth 1 -path ./dest -prune -o -type f -exec sha256sum {} + | LC_ALL=C sort)
}

# new_area AREA: AREA/canary/victim, AREA/outside (empty), no AREA/dest
new_area() {
    rm -rf "$1"
    mkdir -p "$1/canary" "$1/outside" || return 1
    echo canary >"$1/canary/victim"
}

# each_line_names IMAGE FILE...: every non-empty line of the FILEs starts with "IMAGE: " (fsck's
# problem lines and summary) or "erofs fsck: IMAGE: " (an image it cannot open)
each_line_names() {
    local img=$1
    shift
    awk -v p="$img: " -v q="erofs fsck: $img: " 'NF && index($0, p) != 1 && index($0, q) != 1 { bad = 1 } END { exit bad }' "$@"
}

running() {
    local st
    st=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    st=${st##*) }
    [[ "${st%% *}" != Z ]]
}

# fuse_walk MNT LOG: find, read, readlink, getfattr everything below MNT, one command each for
# the first 500 entries (a process per entry would cost more than the walk); writes the errors to
# LOG, and a line there for a command that did not finish in time
fuse_walk() {
    local mnt=$1 log=$2 f
    local files=() links=() all=()
    timeout 5 find "$mnt" >/dev/null 2>>"$log"
    while IFS= read -r -d '' f; do
        all+=("$f")
        if [[ -L "$f" ]]; then
            links+=("$f")
        elif [[ -f "$f" ]]; then
            files+=("$f")
        fi
    done < <(timeout 10 find "$mnt" -print0 2>/dev/null | head -z -n 500)
    ((${#links[@]})) && walk_step "$log" readlink -v -- "${links[@]}"
    ((${#files[@]})) && walk_step "$log" head -c 16M -- "${files[@]}"
    have_cmd getfattr && ((${#all[@]})) && walk_step "$log" getfattr --absolute-names -h -d -m - -- "${all[@]}"
    return 0
}

# walk_step LOG COMMAND...: COMMAND with a 20 s limit, its errors to LOG, and a line there if it
# did not finish
walk_step() {
    local log=$1 rc
    shift
    timeout 20 "$@" >/dev/null 2>>"$log"
    rc=$?
    [[ $rc == 124 || $rc == 137 ]] && echo "walk: $1 did not finish within 20 s" >>"$log"
    return 0
}

# --- the corpus ------------------------------------------------------------------------------------
section "corpus"
check "erofs-nasty-images writes the corpus" "$EROFS_NASTY" "$W/corpus" || finish
NAMES=() CLASSES=() EXPECTS=()
while IFS=$'\t' read -r file cls expect what; do
    [[ "$file" == \#* || -z "$file" ]] && continue
    NAMES+=("${file%.img}")
    CLASSES+=("$cls")
    EXPECTS+=("$expect")
    echo "  $file [$cls, $expect]: $what"
done <"$W/corpus/manifest.tsv"
if [[ ${#NAMES[@]} -ge 50 ]]; then
    pass "manifest lists ${#NAMES[@]} images"
else
    fail "manifest lists only ${#NAMES[@]} images"
fi
have_fuse && FUSE=1 || FUSE=0
WALK_ERRORS='Input/output error|No such file or directory|Not a directory|Too many levels of symbolic links|File system loop detected'
[[ $FUSE == 1 ]] || skip_section "the FUSE part (3.): /dev/fuse or fusermount3 is not usable"

# --- 1.-3. every image -----------------------------------------------------------------------------
section "fsck, extract and FUSE, image by image"
for i in "${!NAMES[@]}"; do
    name=${NAMES[i]} cls=${CLASSES[i]} expect=${EXPECTS[i]}
    img=$W/corpus/$name.img
    out=$W/out.txt err=$W/err.txt

    # 1. fsck
    run_limited 30 "$out" "$err" "$EROFS" fsck "$img"
    problems=$(cat "$out" "$err" | grep -Evc ': [0-9]+ problems?: |: clean: |^$')
    first=$(cat "$out" "$err" | grep -Ev ': [0-9]+ problems?: |: clean: |^$' | head -n 1 | cut -c1-160)
    if [[ -n "$RUN_CRASH" ]]; then
        fail "fsck $name: $RUN_CRASH"
        head -n 5 "$out" "$err" | sed 's/^/    /'
    elif [[ $expect == valid ]]; then
        if [[ $RUN_RC == 0 && $problems == 0 ]]; then
            pass "fsck $name: clean"
        else
            fail "fsck $name: a valid image: exit $RUN_RC, $problems problem lines"
            head -n 5 "$out" "$err" | sed 's/^/    /'
        fi
    elif [[ $RUN_RC == 1 && $problems -ge 1 ]] && each_line_names "$img" "$out" "$err"; then
        pass "fsck $name: exit 1, $problems problems: ${first#"$img": }"
    else
        fail "fsck $name: exit $RUN_RC, $problems problem lines (expected exit 1, at least one line, each naming the image)"
        head -n 5 "$out" "$err" | sed 's/^/    /'
    fi

    # 2. extract
    area=$W/x/$name
    new_area "$area"
    before=$(snapshot "$area")
    # files limited to 256 MiB (EFBIG, not SIGXFSZ, past it): an extraction that wrote out a
    # declared size would otherwise fill the disk
    run_limited 30 "$out" "$err" bash -c 'ulimit -f 262144; trap "" XFSZ; exec "$@"' limited \
        "$EROFS" extract -q "$img" "$area/dest"
    after=$(snapshot "$area")
    why=
    [[ -n "$RUN_CRASH" ]] && why=$RUN_CRASH
    [[ -z "$why" && "$before" != "$after" ]] && why="something outside the destination changed: $(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | head -n 3 | tr '\n' ' ')"
    [[ -z "$why" && $RUN_RC != 0 && $(awk 'END { print NR }' "$err") != 1 ]] && why="refused with $(awk 'END { print NR }' "$err") lines on stderr, expected 1"
    case $cls/$name in
    base/*) [[ -z "$why" && $RUN_RC != 0 ]] && why="a valid image was refused: $(head -n 1 "$err")" ;;
    extract/* | loops/* | */bomb_dir_dag) [[ -z "$why" && $RUN_RC == 0 ]] && why="a hostile tree was extracted" ;;
    */bomb_sparse_exabytes)
        # extracted sparse, or refused (EFBIG: 4 EiB is past the limit) before writing anything
        used=$(du -sk "$area/dest" | cut -f1)
        [[ -z "$why" && $used -ge 1024 ]] && why="the hole was written out: $used KiB used"
        ;;
    esac
    if [[ -z "$why" ]]; then
        if [[ $RUN_RC == 0 ]]; then
            pass "extract $name: extracted, nothing outside the destination touched"
        else
            pass "extract $name: refused ($(head -n 1 "$err" | cut -c1-140)), nothing outside touched"
        fi
    else
        fail "extract $name: $why"
        head -n 3 "$err" | sed 's/^/    stderr: /'
    fi
    rm -rf "$area"

    # 3. FUSE
    [[ $FUSE == 1 ]] || continue
    mnt=$W/mnt
    log=$W/mount.log walklog=$W/walk.log
    mkdir -p "$mnt"
    : >"$walklog"
    "$EROFS" mount -f "$img" "$mnt" 2>"$log" &
    mpid=$!
    for ((t = 0; t < 50; t++)); do
        mountpoint -q "$mnt" && break
        running "$mpid" || break
        sleep 0.1
    done
    if ! mountpoint -q "$mnt"; then
        if running "$mpid"; then
            fail "mount $name: neither mounted nor exited within 5 s"
            kill "$mpid"
            wait "$mpid"
            continue
        fi
        wait "$mpid"
        rc=$?
        if [[ $expect == corrupt && $rc -gt 0 && $rc -lt 128 && $(awk 'END { print NR }' "$log") == 1 ]] && ! crash_text "$log"; then
            pass "mount $name: refused ($(cut -c1-140 "$log"))"
        else
            fail "mount $name: not mounted, exit $rc"
            head -n 3 "$log" | sed 's/^/    /'
        fi
        continue
    fi
    fuse_walk "$mnt" "$walklog"
    why=
    mountpoint -q "$mnt" && stat "$mnt" >/dev/null 2>&1 || why="the mount is gone or does not answer after the walk"
    [[ -z "$why" ]] && ! running "$mpid" && why="the daemon died during the walk"
    [[ -z "$why" && $expect == valid && -s "$walklog" ]] && why="errors walking a valid image: $(head -n 2 "$walklog" | tr '\n' ' ')"
    [[ -z "$why" ]] && crash_text "$walklog" && why="crash text from the walk"
    # the errors a damaged image may cause: EIO, ENOENT, ENOTDIR, ELOOP (also find's loop report)
    [[ -z "$why" ]] && grep -Evq "$WALK_ERRORS|^\$" "$walklog" &&
        why="unexpected errors from the walk: $(grep -Ev "$WALK_ERRORS" "$walklog" | head -n 2 | tr '\n' ' ')"
    if [[ -z "$why" ]] && ! "$EROFS" umount "$mnt" >>"$log" 2>&1; then
        why="erofs umount failed"
        fusermount3 -u -z "$mnt" 2>/dev/null
    fi
    for ((t = 0; t < 50; t++)); do
        running "$mpid" || break
        sleep 0.1
    done
    if running "$mpid"; then
        [[ -z "$why" ]] && why="the daemon still runs 5 s after the umount"
        fusermount3 -u -z "$mnt" 2>/dev/null
        kill "$mpid" 2>/dev/null
    fi
    wait "$mpid"
    rc=$?
    [[ -z "$why" && $rc != 0 ]] && why="the daemon exited with status $rc"
    [[ -z "$why" ]] && crash_text "$log" && why="crash text in the daemon's log"
    # libfuse's own complaints ("fuse: ...") are noted, not counted: a page-cache store for an inode
    # the kernel has just forgotten fails harmlessly with ENOENT
    grep -q '^fuse: ' "$log" && echo "note: mount $name: libfuse logged: $(grep '^fuse: ' "$log" | sort -u | head -n 2 | tr '\n' ' ')"
    [[ -z "$why" ]] && grep -Evq '^(erofs mount|fuse): |^$' "$log" &&
        why="the daemon logged lines other than 'erofs mount: ...': $(grep -Ev '^(erofs mount|fuse): ' "$log" | head -n 2 | tr '\n' ' ')"
    if [[ -z "$why" ]]; then
        errs=$(awk 'END { print NR }' "$walklog")
        pass "mount $name: walked ($errs errors, e.g. $(sed -n '1s/^.*: //p' "$walklog" | head -c 60)), still up, unmounted"
    else
        fail "mount $name: $why"
        head -n 3 "$log" | sed 's/^/    log: /'
        head -n 3 "$walklog" | sed 's/^/    walk: /'
    fi
done

# --- 4. destinations holding symlinks ---------------------------------------------------------------
section "destinations holding symlinks"
BASE=$W/corpus/base_plain.img
A=$W/sym

# refuses LABEL: extract BASE into $A/dest fails with one line, nothing outside dest changes, and
# $A/outside stays empty
refuses() {
    local before after
    before=$(snapshot "$A")
    run_limited 30 "$W/out.txt" "$W/err.txt" "$EROFS" extract -q "$BASE" "$A/dest"
    after=$(snapshot "$A")
    [[ -z "$RUN_CRASH" ]] || { echo "$RUN_CRASH"; return 1; }
    [[ $RUN_RC != 0 ]] || { echo "extracted anyway"; return 1; }
    [[ $(awk 'END { print NR }' "$W/err.txt") == 1 ]] || { echo "stderr:"; cat "$W/err.txt"; return 1; }
    echo "refused: $(cat "$W/err.txt")"
    [[ "$before" == "$after" ]] || { echo "changed outside dest:"; diff <(echo "$before") <(echo "$after"); return 1; }
    [[ -z "$(ls -A "$A/outside")" ]] || { echo "created in outside/: $(ls -A "$A/outside")"; return 1; }
    [[ "$(cat "$A/canary/victim")" == canary ]] || { echo "the victim changed"; return 1; }
}

new_area "$A" && mkdir -p "$A/dest" && ln -s "$A/outside" "$A/dest/dir"
check "DEST/dir -> a directory outside: refused, nothing created there" refuses
new_area "$A" && mkdir -p "$A/dest" && ln -s "$A/canary/victim" "$A/dest/big.bin"
check "DEST/big.bin -> a file outside: refused, the file unchanged" refuses
new_area "$A" && mkdir -p "$A/dest/x" && ln -s "$A/outside" "$A/dest/x/u"
check "DEST/x/u -> a directory outside (DEST/x a directory): refused" refuses
new_area "$A" && ln -s "$A/outside" "$A/dest"
check_output "DEST itself a symlink to a directory outside: refused" 0 'symlinks are not followed' refuses
new_area "$A"
check "a fresh DEST: extracted" "$EROFS" extract -q "$BASE" "$A/dest"
check_output "the image's symlink x/s is a symlink in DEST, not followed" 0 '^\.\./\.\./canary/victim$' readlink "$A/dest/x/s"
check_output "the image's symlink x/r is a symlink in DEST" 0 '^\.\./\.\./canary$' readlink "$A/dest/x/r"
check_output "canary/victim unchanged" 0 '^canary$' cat "$A/canary/victim"
check "outside/ still empty" test -z "$(ls -A "$A/outside")"
rm -rf "$A"

echo "nasty_images: $((SECONDS - START)) s"
finish
