#!/bin/bash
# The command-line interface of the reading commands (and a few mkfs options), on a small tree
# built here with known names, sizes, modes, owners, mtimes and xattrs:
#
#   ls          names of / and of a subdirectory (same set as the source); -a adds . and ..;
#               -l shows type+mode, nlink, uid, gid, size (major, minor for devices), and
#               "-> target" for symlinks; ls of a file shows that file; a missing path is an error
#   cat         exact bytes (also a 100 KiB random file, and two files in one call); a directory
#               or a missing path is a one-line error
#   stat        size, links, mode, uid/gid, mtime, symlink target, device numbers, xattr names
#   dump        text output; --json parses (python3 -m json.tool) and holds block size, UUID, label
#               and the inode count
#   fsck        --json parses and says clean; on a truncated image --json still parses, says not
#               clean and lists problems, exit 1; --metadata-only is clean
#   extract     --path of one file (content, mode, owner, mtime with ns, xattrs), --path of a
#               directory (treecmp equal to the source directory), --no-owners, --no-xattrs
#   mkfs        -q prints nothing, --json parses, --exclude-path, --exclude-regex, --force-uid,
#               --force-gid, -T with --mkfs-time
#   --help      every subcommand: exit 0 and every option it has is mentioned
#   erofs       with no arguments or an unknown command: non-zero exit
# Needs root for the owners (chown), the device node and trusted.* handling; skips otherwise.
# shellcheck disable=SC2317  # (functions below are called indirectly, through check)
# shellcheck source-path=SCRIPTDIR source=lib.bash
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

require_erofs_bin
require_root
require_cmd python3 sha256sum setfattr getfattr setfacl setcap getcap
workdir
W=$WORKDIR

# --- the tree ---------------------------------------------------------------------------------------
S=$W/src
mkdir -p "$S/dir/sub" "$S/empty-dir"
printf 'hello world\n' >"$S/dir/hello.txt"
ln "$S/dir/hello.txt" "$S/dir/hard"
printf 'deep\n' >"$S/dir/sub/deep.txt"
: >"$S/empty"
head -c 102400 /dev/urandom >"$S/big.bin"
printf 'spaced\n' >"$S/with space"
ln -s dir/hello.txt "$S/link"
mknod "$S/null-dev" c 1 3
mkfifo "$S/fifo"
printf 'attrs\n' >"$S/xattr-file"
setfattr -n user.test -v "a value" "$S/xattr-file"
setfattr -n trusted.t -v "trusted value" "$S/xattr-file"
chown 1000:100 "$S/dir/hello.txt"
chmod 0640 "$S/dir/hello.txt"
chmod 4755 "$S/dir/sub/deep.txt"
# Every attribute extract restores, on one file: the kernel clears setuid/setgid and the file
# capability on chown and on write, so the restore order decides whether they survive.
printf 'cap\n' >"$S/cap-file"
chown 1000:100 "$S/cap-file"
chmod 6750 "$S/cap-file"
setfacl -m u:1001:r-x "$S/cap-file"
setfattr -n user.one -v 1 "$S/cap-file"
setfattr -n user.two -v 2 "$S/cap-file"
setcap cap_net_raw,cap_sys_time+ep "$S/cap-file"
# a directory whose mtime predates its children's
mkdir "$S/old-dir"
printf 'new\n' >"$S/old-dir/new.txt"
# user.* xattrs on a file and a directory whose modes take write permission away (extracted by a
# user who is not root below)
mkdir "$S/ro-dir"
printf 'read only\n' >"$S/ro-dir/ro-file"
setfattr -n user.ro -v file "$S/ro-dir/ro-file"
setfattr -n user.ro -v dir "$S/ro-dir"
chmod 0444 "$S/ro-dir/ro-file"
chmod 0555 "$S/ro-dir"
for p in "$S"/dir/hello.txt "$S"/dir/sub/deep.txt "$S"/empty "$S"/big.bin "$S/with space" \
    "$S"/null-dev "$S"/fifo "$S"/xattr-file "$S"/dir/sub "$S"/dir "$S"/empty-dir "$S"; do
    touch -h -d @1600000000.123456789 "$p"
done
touch -h -d @1600000001.5 "$S/link"
touch -h -d @1600000000.123456789 "$S/old-dir/new.txt" "$S/ro-dir/ro-file" "$S/ro-dir"
touch -d @1000000000.5 "$S/old-dir"
touch -d @1600000000.123456789 "$S"
UUID=0badc0de-1234-4321-8765-0123456789ab
IMG=$W/cli.img
check "mkfs of the test tree" "$EROFS" mkfs -q -L cli-label -U "$UUID" "$IMG" "$S" || finish

# same_sorted A-COMMAND B-COMMAND: both commands succeed and their outputs, sorted, are the same
# lines
same_sorted() {
    local a b
    a=$(eval "$1" | LC_ALL=C sort) || { echo "failed: $1"; return 1; }
    b=$(eval "$2" | LC_ALL=C sort) || { echo "failed: $2"; return 1; }
    diff <(printf '%s\n' "$a") <(printf '%s\n' "$b")
}

# output_is FILE COMMAND...: COMMAND succeeds and writes exactly the bytes of FILE
output_is() {
    local file=$1 out
    shift
    out=$(mktemp "$WORKDIR/.out.XXXXXX") || return 1
    "$@" >"$out" || { echo "exit $?"; rm -f "$out"; return 1; }
    cmp "$file" "$out"
    local rc=$?
    rm -f "$out"
    return "$rc"
}

# output_lacks LINE COMMAND...: COMMAND succeeds and no line of its output is LINE
output_lacks() {
    local line=$1 out
    shift
    out=$("$@") || { echo "exit $?"; return 1; }
    ! grep -qxF -- "$line" <<<"$out" || { echo "the output has the line $line"; return 1; }
}

# --- ls -------------------------------------------------------------------------------------------------
check "ls /: the names of the root" same_sorted "'$EROFS' ls '$IMG'" "ls -A1 '$S'"
check "ls / (explicit path)" same_sorted "'$EROFS' ls '$IMG' /" "ls -A1 '$S'"
check "ls dir" same_sorted "'$EROFS' ls '$IMG' dir" "ls -A1 '$S/dir'"
check "ls -a dir: . and .. added" same_sorted "'$EROFS' ls -a '$IMG' dir" "ls -a1 '$S/dir'"
check "ls -a of an empty directory: only . and .." same_sorted "'$EROFS' ls -a '$IMG' empty-dir" "printf '.\n..\n'"
check_output "ls -l: regular file with mode, nlink, owner, size" 0 \
    '^-rw-r----- +2 +1000 +100 +12 .*hello\.txt$' "$EROFS" ls -l "$IMG" dir
check_output "ls -l: setuid file" 0 '^-rwsr-xr-x +1 +0 +0 +5 .*deep\.txt$' "$EROFS" ls -l "$IMG" dir/sub
check_output "ls -l: directory" 0 '^drwxr-xr-x +[0-9]+ +0 +0 .* dir$' "$EROFS" ls -l "$IMG"
check_output "ls -l: symlink with its target" 0 '^lrwxrwxrwx +1 +0 +0 +13 .* link -> dir/hello\.txt$' "$EROFS" ls -l "$IMG"
check_output "ls -l: char device with major, minor" 0 '^crw-r--r-- +1 +0 +0 +1, +3 .* null-dev$' "$EROFS" ls -l "$IMG"
check_output "ls -l: fifo" 0 '^prw-r--r-- +1 .* fifo$' "$EROFS" ls -l "$IMG"
check_output "ls -l: name with a space" 0 ' with space$' "$EROFS" ls -l "$IMG"
check_output "ls -l: date of the mtime" 0 ' 2020-09-13 .*empty$' "$EROFS" ls -l "$IMG"
check_output "ls -l of a file shows that file" 0 '^-rw-r----- +2 +1000 +100 +12 .*hello\.txt$' \
    "$EROFS" ls -l "$IMG" dir/hello.txt
check_output "ls -l of a file: one line" 0 '^1$' bash -c "set -o pipefail; '$EROFS' ls -l '$IMG' dir/hello.txt | wc -l"
check_error "ls of a missing path" nonzero 'no-such' "$EROFS" ls "$IMG" no-such
check_error "ls of a missing image" nonzero 'no-such\.img' "$EROFS" ls "$W/no-such.img"

# --- cat ------------------------------------------------------------------------------------------------
check_output "cat: exact bytes" 0 '^hello world$' "$EROFS" cat "$IMG" dir/hello.txt
check "cat: 100 KiB random file, the same bytes" output_is "$S/big.bin" "$EROFS" cat "$IMG" big.bin
cat "$S/dir/hello.txt" "$S/dir/sub/deep.txt" >"$W/two-files"
check "cat: two files in one call" output_is "$W/two-files" "$EROFS" cat "$IMG" dir/hello.txt dir/sub/deep.txt
check "cat: empty file" output_is "$S/empty" "$EROFS" cat "$IMG" empty
check "cat: path with a leading /" output_is "$S/dir/hello.txt" "$EROFS" cat "$IMG" /dir/hello.txt
check "cat: name with a space" output_is "$S/with space" "$EROFS" cat "$IMG" "with space"
check_error "cat of a directory" nonzero 'dir' "$EROFS" cat "$IMG" dir
check_error "cat of a missing path" nonzero 'no-such' "$EROFS" cat "$IMG" no-such

# --- stat -----------------------------------------------------------------------------------------------
st() { "$EROFS" stat "$IMG" "$@"; }
check_output "stat: size" 0 'Size: 12 ' st dir/hello.txt
check_output "stat: links" 0 'Links: 2' st dir/hello.txt
check_output "stat: mode" 0 'Access: \(0640/-rw-r-----\)' st dir/hello.txt
check_output "stat: owner" 0 'Uid: 1000 +Gid: 100' st dir/hello.txt
check_output "stat: mtime with ns" 0 '2020-09-13 12:26:40\.123456789' st dir/hello.txt
check_output "stat: setuid mode" 0 'Access: \(4755/-rwsr-xr-x\)' st dir/sub/deep.txt
check_output "stat: symlink target" 0 'link -> dir/hello\.txt' st link
check_output "stat: device numbers" 0 'Device: 1, 3' st null-dev
check_output "stat: xattr names" 0 'user\.test' st xattr-file
check_output "stat: trusted xattr" 0 'trusted\.t' st xattr-file
check_output "stat /" 0 'Access: \(0755/drwxr-xr-x\)' st /
check_error "stat of a missing path" nonzero 'no-such' st no-such

# --- dump -----------------------------------------------------------------------------------------------
check_output "dump: text" 0 "UUID: +$UUID" "$EROFS" dump "$IMG"
check "dump --json parses (python3 -m json.tool)" bash -c "set -o pipefail; '$EROFS' dump --json '$IMG' | python3 -m json.tool >/dev/null"
ninodes=$(find "$S" -printf '%i\n' | sort -u | wc -l)
check "dump --json: block size, UUID, label, inode count ($ninodes)" bash -c "set -o pipefail; '$EROFS' dump --json '$IMG' | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d[\"block_size\"] == 4096, d[\"block_size\"]
assert d[\"uuid\"] == \"$UUID\", d[\"uuid\"]
assert d[\"label\"] == \"cli-label\", d[\"label\"]
assert d[\"inodes\"] == $ninodes, d[\"inodes\"]
'"

# --- fsck -----------------------------------------------------------------------------------------------
check "fsck --json parses" bash -c "set -o pipefail; '$EROFS' fsck --json '$IMG' | python3 -m json.tool >/dev/null"
check "fsck --json: clean, no problems" bash -c "set -o pipefail; '$EROFS' fsck --json '$IMG' | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d[\"clean\"] is True and d[\"problems\"] == [], d
'"
check_output "fsck --metadata-only" 0 'clean' "$EROFS" fsck --metadata-only "$IMG"
head -c 8192 "$IMG" >"$W/cut.img"
check_rc "fsck --json of a truncated image: exit 1" 1 "$EROFS" fsck --json "$W/cut.img"
# (its exit status, 1, is checked above; here only what it prints)
check "fsck --json of a truncated image: parses, not clean, problems listed" bash -c "'$EROFS' fsck --json '$W/cut.img' >'$W/cut.json'
[[ \$? == 1 ]] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d[\"clean\"] is False and len(d[\"problems\"]) >= 1, d
' '$W/cut.json'"

# --- extract --------------------------------------------------------------------------------------------
# same_file A B [no-owner] [no-xattrs]: content (of a file), mode, mtime ns, (owner), (xattrs) equal
same_file() {
    python3 - "$@" <<'PY'
import os, stat, sys
a, b, opts = sys.argv[1], sys.argv[2], sys.argv[3:]
sa, sb = os.lstat(a), os.lstat(b)
bad = []
if stat.S_ISREG(sa.st_mode) and open(a, "rb").read() != open(b, "rb").read(): bad.append("content")
if sa.st_mode != sb.st_mode: bad.append("mode %o %o" % (sa.st_mode, sb.st_mode))
if sa.st_mtime_ns != sb.st_mtime_ns: bad.append("mtime %d %d" % (sa.st_mtime_ns, sb.st_mtime_ns))
if "no-owner" not in opts and (sa.st_uid, sa.st_gid) != (sb.st_uid, sb.st_gid):
    bad.append("owner %d:%d %d:%d" % (sa.st_uid, sa.st_gid, sb.st_uid, sb.st_gid))
if "no-xattrs" not in opts:
    xa = {n: os.getxattr(a, n) for n in os.listxattr(a)}
    xb = {n: os.getxattr(b, n) for n in os.listxattr(b)}
    if xa != xb: bad.append("xattrs %r %r" % (xa, xb))
if bad:
    print("differences: " + ", ".join(bad))
    sys.exit(1)
PY
}

check "extract --path of one file" "$EROFS" extract -q --path dir/hello.txt "$IMG" "$W/x-file"
check_output "extract --path of one file: only that file" 0 '^hello\.txt$' ls -A "$W/x-file"
check "extract --path of one file: content, mode, owner, mtime" same_file "$S/dir/hello.txt" "$W/x-file/hello.txt"
check "extract --path of a file with xattrs" "$EROFS" extract -q --path /xattr-file "$IMG" "$W/x-xfile"
check "extract --path: xattrs restored" same_file "$S/xattr-file" "$W/x-xfile/xattr-file"

check_output "extract: the source file has its capability" 0 'cap_net_raw,cap_sys_time[=+]ep' getcap "$S/cap-file"
check_output "extract: the source file has its ACL" 0 '^user:1001:r-x$' getfacl -cn "$S/cap-file"
check_output "extract: the source file has setuid/setgid and its owner" 0 '^6750 1000:100$' \
    stat -c '%a %u:%g' "$S/cap-file"
check "extract of the whole image" "$EROFS" extract -q "$IMG" "$W/x-attrs"
check "extract: capability, setuid/setgid, owner, ACL, user xattrs, mtime, content" \
    same_file "$S/cap-file" "$W/x-attrs/cap-file"
check_output "extract: the capability reads back" 0 'cap_net_raw,cap_sys_time[=+]ep' getcap "$W/x-attrs/cap-file"
check "extract: a directory whose mtime predates its children keeps it" same_file "$S/old-dir" "$W/x-attrs/old-dir"
check "extract: ... and its child" same_file "$S/old-dir/new.txt" "$W/x-attrs/old-dir/new.txt"
rm -rf "$W/x-attrs"
# as a user who is not root (nobody): the owner is that user's, everything else is kept
if ! have_cmd setpriv; then
    skip_section "extract by a user who is not root: needs setpriv"
else
    as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
    mkdir -p "$W/nobody" && chmod 777 "$W/nobody"
    if ! as_nobody test -r "$IMG" -a -w "$W/nobody"; then
        skip_section "extract by a user who is not root: nobody cannot reach $W (parent directory permissions)"
    else
        check "extract as nobody of a read-only directory" as_nobody "$EROFS" extract -q --path ro-dir "$IMG" "$W/nobody/x"
        check "extract as nobody: the read-only directory keeps its user xattr, mode, mtime" \
            same_file "$S/ro-dir" "$W/nobody/x" no-owner
        check "extract as nobody: the read-only file keeps its user xattr, mode, mtime, content" \
            same_file "$S/ro-dir/ro-file" "$W/nobody/x/ro-file" no-owner
        chmod -R u+w "$W/nobody"
    fi
fi

check "extract --path of a directory" "$EROFS" extract -q --path dir "$IMG" "$W/x-dir"
check_output "extract --path of a directory: equals the source directory" 0 ' 0 differences$' \
    treecmp "$S/dir" "$W/x-dir"

check "extract --no-owners" "$EROFS" extract -q --no-owners --path dir "$IMG" "$W/x-noown"
check_output "extract --no-owners: owner is the extracting user" 0 "^$(id -u):$(id -g)\$" \
    stat -c '%u:%g' "$W/x-noown/hello.txt"
check "extract --no-owners: the rest is kept" same_file "$S/dir/hello.txt" "$W/x-noown/hello.txt" no-owner

check "extract --no-xattrs" "$EROFS" extract -q --no-xattrs "$IMG" "$W/x-noxattr"
check "extract --no-xattrs: no xattrs" no_output getfattr -m - -d --absolute-names "$W/x-noxattr/xattr-file"
check "extract --no-xattrs: the rest is kept" same_file "$S/xattr-file" "$W/x-noxattr/xattr-file" no-xattrs
check_output "full extract equals the source" 0 ' 0 differences$' bash -c "
    '$EROFS' extract -q '$IMG' '$W/x-all' && '$PYTHON' '$EROFS_TEST_TOOLS/treecmp.py' '$S' '$W/x-all'"
check_error "extract --path of a missing path" nonzero 'no-such' "$EROFS" extract --path no-such "$IMG" "$W/x-missing"

# --- mkfs options and output ------------------------------------------------------------------------------
check "mkfs -q prints nothing" no_output bash -c '"$@" 2>&1' _ "$EROFS" mkfs -q "$W/q.img" "$S"
check "mkfs --json parses" bash -c "set -o pipefail; '$EROFS' mkfs --json '$W/j.img' '$S' | python3 -m json.tool >/dev/null"
check "mkfs --exclude-path --exclude-regex" \
    "$EROFS" mkfs -q --exclude-path=dir/sub --exclude-regex='\.bin$' "$W/ex.img" "$S"
check "--exclude-path: dir/sub left out" same_sorted "'$EROFS' ls '$W/ex.img' dir" "printf 'hard\nhello.txt\n'"
check "--exclude-regex: big.bin left out" output_lacks big.bin "$EROFS" ls "$W/ex.img"
check_output "--exclude-regex: the rest is there" 0 '^xattr-file$' "$EROFS" ls "$W/ex.img"
check "mkfs --force-uid --force-gid" "$EROFS" mkfs -q --force-uid=123 --force-gid=456 "$W/own.img" "$S"
check "--force-uid/--force-gid: every inode owned by 123:456" bash -c "
    '$EROFS' extract -q '$W/own.img' '$W/x-own' && test -z \"\$(find '$W/x-own' \\( ! -uid 123 -o ! -gid 456 \\) -print -quit)\""
check "mkfs -T --mkfs-time" "$EROFS" mkfs -q -T 1000000000 --mkfs-time "$W/mt.img" "$S"
check_output "--mkfs-time: image time is -T" 0 '"epoch": 1000000000[,}]' "$EROFS" dump --json "$W/mt.img"
check_output "--mkfs-time: file mtimes are kept" 0 '2020-09-13 12:26:40\.123456789' \
    "$EROFS" stat "$W/mt.img" dir/hello.txt

# --- help and usage -------------------------------------------------------------------------------
# help_mentions COMMAND OPTION...: `erofs COMMAND --help` exits 0 and mentions every OPTION
help_mentions() {
    local cmd=$1 out o missing=
    shift
    out=$("$EROFS" "$cmd" --help 2>&1) || { echo "exit $?"; return 1; }
    for o in "$@"; do
        if [[ $o == -* ]]; then
            # as an option of its own: -v must not be found inside --verify
            grep -Eq -- "(^|[[:space:],])$o([[:space:],=]|\$)" <<<"$out" || missing+=" $o"
        else
            grep -qw -- "$o" <<<"$out" || missing+=" $o"
        fi
    done
    [[ -z "$missing" ]] || { echo "not mentioned:$missing"; return 1; }
}
check "mkfs --help" help_mentions mkfs -b -U -L -T --mkfs-time --all-root --force-uid --force-gid \
    --exclude-path --exclude-regex -E force-inode-compact force-inode-extended --chunksize \
    --ignore-unreadable --verify -q -v --json
check "fsck --help" help_mentions fsck --metadata-only --json
check "extract --help" help_mentions extract --path --no-owners --no-xattrs
check "ls --help" help_mentions ls -l -a
check "cat --help" help_mentions cat PATH
check "stat --help" help_mentions stat PATH
check "dump --help" help_mentions dump --json
help_all() {
    local out c
    out=$("$EROFS" --help 2>&1) || return 1
    for c in mkfs fsck extract ls cat stat dump; do
        grep -qw "$c" <<<"$out" || { echo "command $c not listed"; return 1; }
    done
}
check "erofs --help lists every command" help_all
# fails_with REGEX COMMAND...: non-zero exit below 128, output matching REGEX
fails_with() {
    local regex=$1 out rc
    shift
    out=$("$@" 2>&1)
    rc=$?
    printf '%s\n' "$out" | head -n 5
    [[ $rc != 0 && $rc -lt 128 ]] || { echo "exit $rc"; return 1; }
    grep -Eq -- "$regex" <<<"$out" || { echo "output does not match /$regex/"; return 1; }
}
check "erofs without arguments: non-zero exit, usage" fails_with '[Uu]sage' "$EROFS"
check "erofs with an unknown command: non-zero exit, names it" fails_with 'no-such-command' "$EROFS" no-such-command
check "erofs with an unknown option: non-zero exit" fails_with '.' "$EROFS" --no-such-option

finish
