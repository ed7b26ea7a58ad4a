# shellcheck shell=bash
# Helpers for the integration test scripts in tests/integration/. Source it first thing:
#
#     source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
#
# Each script is one CTest test, run as `bash SCRIPT` in the build directory with
#   EROFS             path of our erofs binary
#   EROFS_SOURCE_DIR  repository root            (default: two levels above this file)
#   EROFS_COMPAT_DIR  reference images of erofs-utils 1.9.3 (default: tests/data/compat)
#   EROFS_TEST_TOOLS  tests/tools                (default: ../tools next to this file)
# Exit status 77 means "skipped" (SKIP_RETURN_CODE in tests/CMakeLists.txt).
#
# Sourcing it sets pipefail: a pipeline fails when any command in it fails, so a check that pipes
# the command under test into a filter fails with it. (A `bash -c` inside a check starts without
# it: such a command sets it itself where the command under test is piped.)
#
# Functions:
#   skip REASON               the whole script is left out: print "SKIPPED: <script>: REASON"
#                             (stdout and stderr), exit 77
#   skip_section REASON       a part of the script is left out (no root, FUSE, a tool): print
#                             "SKIPPED: <script>: REASON", count it for finish, and append the
#                             line to $EROFS_SKIP_LOG when that is set (scripts/test counts those
#                             lines as skipped tests)
#   have_root, have_loop, have_fuse, have_cmd CMD..., have_erofs_kernel
#                             probes: return 0/1, print nothing (for optional parts of a test)
#   require_root, require_loop, require_fuse, require_cmd CMD..., require_erofs_kernel,
#   require_erofs_bin         skip unless the probe succeeds ($EROFS must be executable)
#   workdir                   create a fresh ./work.<script>.<pid> under the current directory,
#                             set WORKDIR to its absolute path and clean up on EXIT/INT/TERM
#                             (unmount what mount_image mounted and anything else mounted
#                             below WORKDIR, lazily as a last resort; detach loop devices
#                             backed by files below WORKDIR; remove WORKDIR unless
#                             KEEP_WORKDIR=1). Call it directly, not in $(...).
#   scratch DIR [SIZE]        create DIR and, as root, mount a fresh tmpfs (default size limit
#                             2g, mode 0755) on it: trees of thousands of small files are
#                             created, copied and removed there many times faster than on a disk
#                             (ext4 with online discard takes ~20 s to remove the awkward tree).
#                             tmpfs keeps everything the tests need (xattrs of all namespaces,
#                             ACLs, nanosecond mtimes, devices, sparse files). Unmounted by the
#                             workdir cleanup. Falls back to the plain directory (with a note)
#                             when not root, when the mount fails, or with EROFS_TEST_NO_TMPFS=1.
#   mount_image IMAGE MOUNTPOINT [FSTYPE]
#                             mount -t FSTYPE(erofs) -o loop,ro; remembered for cleanup
#   umount_image MOUNTPOINT   unmount (retrying a few times); the loop device goes with it
#   check NAME COMMAND...     run COMMAND (in this shell, so variables it sets stay set),
#                             print "ok: NAME" or "FAIL: NAME (exit N)" followed by its output;
#                             returns the command's status. VERBOSE=1 also shows output on ok.
#   check_rc NAME RC COMMAND...           like check, but expects exit status RC
#   check_output NAME RC REGEX COMMAND... expects exit status RC and output matching the
#                                         extended regular expression REGEX (grep -E)
#   check_error NAME RC REGEX COMMAND...
#                             the error contract of the erofs commands: exit status RC ("nonzero":
#                             any status from 1 to 127), exactly one line on stderr, matching
#                             REGEX (grep -E; "" means any), and no crash (status < 128, no
#                             "Segmentation fault", "Aborted", "core dumped" or sanitizer
#                             report in the output). stdout is not looked at.
#   error_contract RC REGEX COMMAND...
#                             the same check, quiet: sets ERROR_WHY (empty if it holds),
#                             ERROR_RC, ERROR_STDERR, ERROR_STDOUT; show_error_contract COMMAND...
#                             prints them (for loops that count one pass for many commands)
#   pass MSG / fail MSG       count a pass / a failure by hand ("ok: MSG" / "FAIL: MSG")
#   no_output COMMAND...      succeeds if COMMAND succeeds and prints nothing on stdout
#   finish                    print "N passed, M failed, K skipped"; exit 1 if any failed, else 0
#   mktree DEST [PROFILE [ARGS...]]       tests/tools/mktree.py DEST --profile PROFILE ARGS...
#   treecmp A B [OPTIONS...]              tests/tools/treecmp.py A B OPTIONS...
#   mount_cmp NAME IMAGE SRC [TREECMP_OPTIONS...]
#                             mount IMAGE on $WORKDIR/mnt, check it equals SRC (treecmp: 0
#                             differences), unmount, then check `erofs fsck IMAGE` says clean
#   copy_without_255_names SRC DST
#                             cp -a SRC DST, then remove from DST every entry whose name is 255
#                             bytes long (mkfs.erofs 1.5 cannot take them) and give the parents
#                             their mtimes from SRC back; prints the number removed
#   crash_text FILE...        succeeds if a FILE holds the text of a crash (signal, abort,
#                             sanitizer report)

# Running this file on its own (CTest picks up every tests/integration/*.sh) does nothing.
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
    echo "lib.bash: helper library for the integration tests, nothing to run"
    exit 0
fi

set -o pipefail

_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${EROFS_SOURCE_DIR:=$(cd "$_LIB_DIR/../.." && pwd)}"
: "${EROFS_TEST_TOOLS:=$EROFS_SOURCE_DIR/tests/tools}"
: "${EROFS_COMPAT_DIR:=$EROFS_SOURCE_DIR/tests/data/compat}"
export EROFS_SOURCE_DIR EROFS_TEST_TOOLS EROFS_COMPAT_DIR
: "${PYTHON:=python3}"

SCRIPT_NAME=$(basename "${BASH_SOURCE[-1]}" .sh)
WORKDIR=
_LIB_PASSED=0
_LIB_FAILED=0
_LIB_SKIPPED=0
_LIB_MOUNTS=()
_LIB_CLEANED=0

_lib_log() { echo "$*"; }

skip() {
    echo "SKIPPED: $SCRIPT_NAME: $*"
    echo "SKIPPED: $SCRIPT_NAME: $*" >&2
    exit 77
}

skip_section() {
    _LIB_SKIPPED=$((_LIB_SKIPPED + 1))
    # One line per section, whatever the reason quotes (a tool's message may span lines):
    # scripts/test counts the skip log's lines.
    local why="$*"
    why=${why//$'\n'/ }
    echo "SKIPPED: $SCRIPT_NAME: $why"
    if [[ -n "${EROFS_SKIP_LOG:-}" ]]; then
        echo "SKIPPED: $SCRIPT_NAME: $why" >>"$EROFS_SKIP_LOG"
    fi
}

# --- probes -----------------------------------------------------------------------------------

have_root() { [[ $(id -u) == 0 ]]; }

have_cmd() {
    local c
    for c in "$@"; do
        command -v "$c" >/dev/null 2>&1 || return 1
    done
}

have_erofs_kernel() {
    grep -qw erofs /proc/filesystems 2>/dev/null && return 0
    have_root && modprobe erofs >/dev/null 2>&1 && grep -qw erofs /proc/filesystems
}

# Root, losetup, and a loop device that can really be attached (containers often have
# /dev/loop-control but no usable loop devices).
have_loop() {
    have_root && have_cmd losetup || return 1
    losetup -f >/dev/null 2>&1 || return 1
    local f dev ok=1
    f=$(mktemp "${WORKDIR:-$PWD}/.looptest.XXXXXX" 2>/dev/null) || return 1
    if truncate -s 1M "$f" 2>/dev/null && dev=$(losetup -f --show "$f" 2>/dev/null); then
        ok=0
        losetup -d "$dev" 2>/dev/null
    fi
    rm -f "$f"
    return $ok
}

have_fuse() {
    [[ -c /dev/fuse ]] && have_cmd fusermount3 || return 1
    { : <>/dev/fuse; } 2>/dev/null
}

# --- requirements (skip when missing) ---------------------------------------------------------

require_root() { have_root || skip "needs root"; }

require_loop() {
    require_root
    have_cmd losetup || skip "needs losetup"
    have_loop || skip "no usable loop device (losetup -f / attach failed)"
}

require_fuse() {
    [[ -c /dev/fuse ]] || skip "needs /dev/fuse"
    have_cmd fusermount3 || skip "needs fusermount3"
    have_fuse || skip "cannot open /dev/fuse"
}

require_cmd() {
    local c
    for c in "$@"; do
        have_cmd "$c" || skip "needs command: $c"
    done
}

require_erofs_kernel() { have_erofs_kernel || skip "kernel has no erofs support"; }

require_erofs_bin() {
    [[ -n "${EROFS:-}" ]] || skip "EROFS (path of the erofs binary) is not set"
    [[ -x "$EROFS" ]] || skip "EROFS=$EROFS is not executable"
}

# --- work directory and cleanup ---------------------------------------------------------------

workdir() {
    if [[ "${BASHPID:-$$}" != "$$" ]]; then
        echo "lib.bash: call workdir directly, not in a subshell or \$(...)" >&2
        exit 2
    fi
    if [[ -n "$WORKDIR" ]]; then
        return 0
    fi
    local d="$PWD/work.$SCRIPT_NAME.$$"
    if [[ -e "$d" ]]; then
        _lib_unmount_below "$d"
        rm -rf --one-file-system "$d"
    fi
    mkdir -p "$d" || { echo "lib.bash: cannot create $d" >&2; exit 2; }
    WORKDIR=$d
    trap _lib_cleanup EXIT
    trap '_lib_signal 130' INT
    trap '_lib_signal 143' TERM
    trap '_lib_signal 129' HUP
    echo "workdir: $WORKDIR"
}

_lib_signal() {
    echo "lib.bash: interrupted, cleaning up" >&2
    exit "$1"                              # runs the EXIT trap
}

# Mount points at or below $1 from /proc/self/mountinfo (octal escapes decoded), deepest first.
_lib_mounts_below() {
    local base=$1
    [[ -r /proc/self/mountinfo ]] || return 0
    local mp
    while read -r _ _ _ _ mp _; do
        mp=$(printf '%b' "$mp")
        if [[ "$mp" == "$base" || "$mp" == "$base"/* ]]; then
            printf '%s\n' "$mp"
        fi
    done </proc/self/mountinfo | awk '{ print length($0) "\t" $0 }' | sort -rn | cut -f2-
}

# Unmount one mount point: plain umount (retrying: a just-closed file may keep it busy),
# fusermount3 -u for FUSE mounts, lazy unmount as the last resort.
_lib_umount() {
    local mp=$1 i
    for i in 1 2 3 4; do
        mountpoint -q "$mp" 2>/dev/null || return 0
        umount "$mp" 2>/dev/null && return 0
        if have_cmd fusermount3; then
            fusermount3 -u "$mp" 2>/dev/null && return 0
        fi
        [[ $i == 4 ]] || sleep "0.$i"
    done
    echo "lib.bash: $mp is busy, lazy unmount" >&2
    umount -l "$mp" 2>/dev/null || { have_cmd fusermount3 && fusermount3 -uz "$mp" 2>/dev/null; }
}

_lib_unmount_below() {
    local mp
    while IFS= read -r mp; do
        [[ -n "$mp" ]] && _lib_umount "$mp"
    done < <(_lib_mounts_below "$1")
}

# Detach loop devices whose backing file is below $1.
_lib_detach_loops_below() {
    local base=$1 f back dev
    for f in /sys/block/loop*/loop/backing_file; do
        [[ -r "$f" ]] || continue
        back=$(<"$f")
        back=${back% (deleted)}
        if [[ "$back" == "$base"/* ]]; then
            dev=/dev/$(basename "$(dirname "$(dirname "$f")")")
            losetup -d "$dev" 2>/dev/null || echo "lib.bash: could not detach $dev ($back)" >&2
        fi
    done
}

_lib_cleanup() {
    local rc=$?
    [[ $_LIB_CLEANED == 1 ]] && return "$rc"
    _LIB_CLEANED=1
    trap - INT TERM HUP
    local i
    for ((i = ${#_LIB_MOUNTS[@]} - 1; i >= 0; i--)); do
        _lib_umount "${_LIB_MOUNTS[i]}"
    done
    _LIB_MOUNTS=()
    if [[ -n "$WORKDIR" && -d "$WORKDIR" ]]; then
        _lib_unmount_below "$WORKDIR"
        if have_root; then
            _lib_detach_loops_below "$WORKDIR"
        fi
        if [[ "${KEEP_WORKDIR:-0}" == 1 ]]; then
            echo "lib.bash: keeping $WORKDIR" >&2
        else
            # --one-file-system: never descend into something still mounted
            rm -rf --one-file-system "$WORKDIR" 2>/dev/null ||
                { chmod -R u+rwX "$WORKDIR" 2>/dev/null; rm -rf --one-file-system "$WORKDIR"; }
        fi
    fi
    return "$rc"
}

# --- mounts -----------------------------------------------------------------------------------

scratch() {
    local dir=$1 size=${2:-2g}
    mkdir -p "$dir" || return 1
    if [[ "${EROFS_TEST_NO_TMPFS:-0}" == 1 ]]; then
        return 0
    fi
    if have_root && mount -t tmpfs -o "size=$size,mode=0755" tmpfs "$dir" 2>/dev/null; then
        return 0
    fi
    echo "note: $dir is not a tmpfs (not root, or the mount failed): slower" >&2
    return 0
}

mount_image() {
    local image=$1 mp=$2 fstype=${3:-erofs} out
    mkdir -p "$mp" || return 1
    if ! out=$(mount -t "$fstype" -o loop,ro "$image" "$mp" 2>&1); then
        echo "mount -t $fstype -o loop,ro $image $mp failed: $out" >&2
        dmesg 2>/dev/null | tail -n 5 >&2
        return 1
    fi
    _LIB_MOUNTS+=("$(cd "$mp" && pwd -P)")
}

umount_image() {
    local mp i keep=()
    mp=$(cd "$1" 2>/dev/null && pwd -P) || mp=$1
    _lib_umount "$mp"
    for i in "${_LIB_MOUNTS[@]}"; do
        [[ "$i" == "$mp" ]] || keep+=("$i")
    done
    _LIB_MOUNTS=("${keep[@]}")
    ! mountpoint -q "$mp" 2>/dev/null
}

# --- steps and results ------------------------------------------------------------------------

pass() {
    _LIB_PASSED=$((_LIB_PASSED + 1))
    echo "ok: $*"
}

fail() {
    _LIB_FAILED=$((_LIB_FAILED + 1))
    echo "FAIL: $*"
}

# _lib_step NAME WANT_RC REGEX COMMAND...  (WANT_RC "" means 0; REGEX "" means any output)
_lib_step() {
    local name=$1 want=$2 regex=$3 out rc why=
    shift 3
    out=$(mktemp "${WORKDIR:-$PWD}/.check.XXXXXX") || { fail "$name (mktemp)"; return 1; }
    "$@" >"$out" 2>&1
    rc=$?
    if [[ -z "$want" ]]; then
        [[ $rc == 0 ]] || why="exit $rc"
    elif [[ $rc != "$want" ]]; then
        why="exit $rc, expected $want"
    fi
    if [[ -z "$why" && -n "$regex" ]] && ! grep -Eq -- "$regex" "$out"; then
        why="output does not match /$regex/"
    fi
    if [[ -z "$why" ]]; then
        pass "$name"
        [[ "${VERBOSE:-0}" == 1 ]] && sed 's/^/    /' "$out"
    else
        fail "$name ($why)"
        echo "    \$ $*" | cut -c1-500
        if [[ $(wc -l <"$out") -gt 200 ]]; then
            head -n 100 "$out" | sed 's/^/    /'
            echo "    ... ($(wc -l <"$out") lines, last 100:)"
            tail -n 100 "$out" | sed 's/^/    /'
        else
            sed 's/^/    /' "$out"
        fi
    fi
    rm -f "$out"
    [[ -z "$why" ]] && return 0
    [[ -z "$want" && $rc != 0 ]] && return "$rc"
    return 1
}

check() {
    local name=$1
    shift
    _lib_step "$name" "" "" "$@"
}

check_rc() {
    local name=$1 want=$2
    shift 2
    _lib_step "$name" "$want" "" "$@"
}

check_output() {
    local name=$1 want=$2 regex=$3
    shift 3
    _lib_step "$name" "$want" "$regex" "$@"
}

no_output() {
    local out
    out=$("$@") || return 1
    [[ -z "$out" ]] || { printf 'unexpected output:\n%s\n' "$out" | head -n 20; return 1; }
}

crash_text() {
    grep -Eqs 'Segmentation fault|Aborted|core dumped|AddressSanitizer|UndefinedBehaviorSanitizer|runtime error:|terminate called|std::bad_alloc|stack smashing' "$@"
}

# error_contract RC REGEX COMMAND...: the check behind check_error, quiet: sets ERROR_WHY (empty
# when the contract holds), ERROR_RC, ERROR_STDERR (first 20 lines) and ERROR_STDOUT (first 5).
error_contract() {
    local want=$1 regex=$2 out err lines
    shift 2
    ERROR_WHY='' ERROR_STDERR='' ERROR_STDOUT=''
    out=$(mktemp "${WORKDIR:-$PWD}/.out.XXXXXX") || { ERROR_WHY="mktemp failed"; return 1; }
    err=$(mktemp "${WORKDIR:-$PWD}/.err.XXXXXX") || { rm -f "$out"; ERROR_WHY="mktemp failed"; return 1; }
    "$@" >"$out" 2>"$err"
    ERROR_RC=$?
    lines=$(awk 'END { print NR }' "$err")
    if [[ $ERROR_RC -ge 128 ]] || crash_text "$out" "$err"; then
        ERROR_WHY="crashed: exit $ERROR_RC"
    elif [[ "$want" == nonzero ]]; then
        [[ $ERROR_RC != 0 ]] || ERROR_WHY="exit 0, expected an error"
    elif [[ $ERROR_RC != "$want" ]]; then
        ERROR_WHY="exit $ERROR_RC, expected $want"
    fi
    if [[ -z "$ERROR_WHY" && $lines != 1 ]]; then
        ERROR_WHY="$lines lines on stderr, expected 1"
    fi
    if [[ -z "$ERROR_WHY" && -n "$regex" ]] && ! grep -Eq -- "$regex" "$err"; then
        ERROR_WHY="stderr does not match /$regex/"
    fi
    ERROR_STDERR=$(head -n 20 "$err")
    [[ $lines -gt 20 ]] && ERROR_STDERR+=$'\n'"... ($lines lines)"
    ERROR_STDOUT=$(head -n 5 "$out" | cut -c1-300)
    rm -f "$out" "$err"
    [[ -z "$ERROR_WHY" ]]
}

# show_error_contract COMMAND...: print what error_contract saw (after a failure)
show_error_contract() {
    echo "    \$ $*" | cut -c1-500
    [[ -n "$ERROR_STDERR" ]] && sed 's/^/    stderr: /' <<<"$ERROR_STDERR"
    [[ -n "$ERROR_STDOUT" ]] && sed 's/^/    stdout: /' <<<"$ERROR_STDOUT"
    return 0
}

# check_error NAME RC REGEX COMMAND...  (see the header)
check_error() {
    local name=$1 want=$2 regex=$3
    shift 3
    if error_contract "$want" "$regex" "$@"; then
        pass "$name"
        [[ "${VERBOSE:-0}" == 1 ]] && sed 's/^/    stderr: /' <<<"$ERROR_STDERR"
        return 0
    fi
    fail "$name ($ERROR_WHY)"
    show_error_contract "$@"
    return 1
}

finish() {
    echo "$SCRIPT_NAME: $_LIB_PASSED passed, $_LIB_FAILED failed, $_LIB_SKIPPED skipped"
    [[ $_LIB_FAILED == 0 ]] && exit 0
    exit 1
}

# --- tools ------------------------------------------------------------------------------------

mktree() {
    local dest=$1 profile=${2:-awkward}
    shift 2 2>/dev/null || shift $#
    "$PYTHON" "$EROFS_TEST_TOOLS/mktree.py" "$dest" --profile "$profile" "$@"
}

treecmp() {
    "$PYTHON" "$EROFS_TEST_TOOLS/treecmp.py" "$@"
}

copy_without_255_names() {
    local src=$1 dst=$2 n d
    cp -a "$src" "$dst" || return 1
    n=$(LC_ALL=C find "$dst" -mindepth 1 -regextype posix-extended -regex '.*/[^/]{255}' | wc -l)
    LC_ALL=C find "$dst" -mindepth 1 -depth -regextype posix-extended -regex '.*/[^/]{255}' \
        -exec rm -rf {} + || return 1
    # put the parents' mtimes back, so that only the missing names differ from SRC
    (cd "$src" && LC_ALL=C find . -mindepth 1 -regextype posix-extended -regex '.*/[^/]{255}' \
        -exec dirname {} \; | sort -u | while IFS= read -r d; do
            touch -h -m -r "$src/$d" "$dst/$d"
        done) || return 1
    echo "$n"
}

mount_cmp() {
    local name=$1 img=$2 src=$3
    shift 3
    if check "mount: $name" mount_image "$img" "$WORKDIR/mnt"; then
        check_output "treecmp $*: $name" 0 ' 0 differences$' treecmp "$src" "$WORKDIR/mnt" --limit 20 "$@"
        umount_image "$WORKDIR/mnt" || fail "umount $WORKDIR/mnt"
    fi
    check_output "fsck: $name" 0 clean "$EROFS" fsck "$img"
}
