#!/bin/bash
# shellcheck disable=SC2317  # (functions below are called indirectly, through check)
# Self-test of the integration-test helpers: tests/tools/mktree.py, tests/tools/treecmp.py and
# tests/integration/lib.bash. Does not need our erofs binary.
#
#  1. mktree generates the awkward tree, deterministically (same seed: identical; other seed:
#     different).
#  2. `cp -a` of it compares identical; each single mutation of a copy (a byte, a mode, one
#     nanosecond of an mtime, an xattr value, a broken hard link, an extra file, a device
#     number) is reported (exit 1) with the expected line, and the matching treecmp option
#     hides it again.
#  3. lib.bash: skip exits 77; skip_section prints a SKIPPED line, counts it as skipped (not
#     passed) and writes it to $EROFS_SKIP_LOG; pipefail is on; a child script's workdir is
#     cleaned up on normal exit and on SIGTERM (including a loop mount it left behind, when loop
#     devices are usable).
#  4. With root + loop + kernel erofs + Debian's mkfs.erofs: images of the tree are
#     loop-mounted through mount_image and compared with the source, which validates the
#     kernel-mount comparison harness itself.
# shellcheck source-path=SCRIPTDIR source=lib.bash
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

require_cmd python3 cp find touch
workdir
scratch "$WORKDIR/s"
W=$WORKDIR/s

# --- 1. generator ---------------------------------------------------------------------------
check "mktree awkward" mktree "$W/src" awkward
check "mktree small (same seed)" mktree "$W/small1" small --seed 1
check "mktree small again" mktree "$W/small2" small --seed 1
check_output "mktree is deterministic" 0 ' 0 differences$' treecmp "$W/small1" "$W/small2"
check "mktree small (seed 2)" mktree "$W/small3" small --seed 2
check_output "another seed gives another tree" 1 'content' treecmp "$W/small1" "$W/small3"
check_output "treecmp: several B trees, the equal one reported equal" 1 "^treecmp: $W/small2: [0-9]+ entries compared, 0 differences\$" \
    treecmp "$W/small1" "$W/small2" "$W/small3"
check_output "treecmp: several B trees, the other one reported with its lines" 1 "^$W/small3: .*content" \
    treecmp "$W/small1" "$W/small2" "$W/small3"
check_output "treecmp: several B trees, a difference in any one fails" 1 "^treecmp: $W/small3: [0-9]+ entries compared, [1-9][0-9]* differences\$" \
    treecmp "$W/small1" "$W/small2" "$W/small3"
check_output "treecmp --label with one B tree" 0 "^treecmp: $W/small2: [0-9]+ entries compared, 0 differences\$" \
    treecmp "$W/small1" "$W/small2" --label
check_output "small profile has no 10,000-entry directory" 1 '^big: only in A: dir \(and 10000 entries below it\)$' \
    treecmp "$W/src" "$W/small1"
check_output "small profile is otherwise the awkward tree" 1 ' 1 differences$' treecmp "$W/src" "$W/small1"
rm -rf "$W/small2" "$W/small3"
check "mktree compressible" mktree "$W/comp" compressible
check_rc "mktree refuses an existing DEST" 2 mktree "$W/comp" compressible
rm -rf "$W/comp"

# --- 2. copy and mutations ------------------------------------------------------------------
check "cp -a" cp -a "$W/src" "$W/copy"
check_output "treecmp: cp -a copy is identical (10,000+ entries)" 0 \
    '^treecmp: [0-9]{5,} entries compared, 0 differences$' treecmp "$W/src" "$W/copy"
rm -rf "$W/copy"

# The mutations work on copies of the small tree (the awkward tree without its 10,000-entry
# directory): same checks, much less copying.
B=$W/small1

# fresh_copy NAME: a new cp -a copy of $B in $W/NAME, path in $M
fresh_copy() {
    M=$W/$1
    rm -rf "$M"
    cp -a "$B" "$M"
}

# restore_mtime REL...: give $M/REL the mtime it has in $B again
restore_mtime() {
    local r
    for r in "$@"; do
        touch -h -m -r "$B/$r" "$M/$r"
    done
}

# A byte in the middle of a file (content only: the mtime is put back).
fresh_copy mut-byte
printf 'Z' | dd of="$M/sizes/size-4097" bs=1 seek=2000 conv=notrunc status=none
restore_mtime sizes/size-4097
check_output "changed byte is reported" 1 '^sizes/size-4097: content: .*first difference at byte 2000\)$' \
    treecmp "$B" "$M"
check_output "changed byte is the only difference" 1 ' 1 differences$' treecmp "$B" "$M"

# A mode.
fresh_copy mut-mode
chmod 0755 "$M/modes/setuid"
check_output "changed mode (setuid dropped) is reported" 1 '^modes/setuid: mode: A=4755 B=0755$' \
    treecmp "$B" "$M"
chmod 0700 "$M/modes/sticky-dir"
check_output "changed mode (sticky dir) is reported" 1 '^modes/sticky-dir: mode: A=1777 B=0700$' \
    treecmp "$B" "$M"

# One nanosecond of an mtime (before 1970, to exercise negative timestamps).
fresh_copy mut-mtime
python3 -c '
import os, sys
p = sys.argv[1]
ns = os.lstat(p).st_mtime_ns + 1
os.utime(p, ns=(ns, ns), follow_symlinks=False)' "$M/times/pre-1970"
check_output "mtime +1ns is reported" 1 \
    '^times/pre-1970: mtime: A=-1000000000\.987654321 B=-1000000000\.987654322$' treecmp "$B" "$M"
check_output "--mtime-seconds ignores a nanosecond" 0 ' 0 differences$' \
    treecmp "$B" "$M" --mtime-seconds
check_output "--no-mtime ignores it too" 0 ' 0 differences$' treecmp "$B" "$M" --no-mtime
python3 -c '
import os, sys
p = sys.argv[1]
ns = os.lstat(p).st_mtime_ns + 7
os.utime(p, ns=(ns, ns), follow_symlinks=False)' "$M/times/symlink-future"
check_output "symlink mtime is compared (lstat)" 1 '^times/symlink-future: mtime: ' \
    treecmp "$B" "$M"
touch -m -d @1000000000 "$M"
check_output "root mtime is compared" 1 '^\.: mtime: ' treecmp "$B" "$M"
check_output "--ignore-root-mtime ignores it" 1 ' 2 differences$' \
    treecmp "$B" "$M" --ignore-root-mtime

# An xattr value, an added xattr, a removed xattr.
fresh_copy mut-xattr
python3 -c '
import os, sys
m = sys.argv[1]
os.setxattr(m + "/xattrs/many", "user.attr.05", b"changed")
os.setxattr(m + "/xattrs/none", "user.added", b"new")
os.removexattr(m + "/xattrs/long-value", "user.long")' "$M"
check_output "changed xattr is reported" 1 '^xattrs/many: xattr user\.attr\.05: A=".*" B="changed"$' \
    treecmp "$B" "$M"
check_output "added xattr is reported" 1 '^xattrs/none: xattr user\.added: A=<missing> B="new"$' \
    treecmp "$B" "$M"
check_output "removed xattr is reported" 1 '^xattrs/long-value: xattr user\.long: A=.* B=<missing>$' \
    treecmp "$B" "$M"
check_output "--no-xattrs ignores them" 0 ' 0 differences$' treecmp "$B" "$M" --no-xattrs

# A broken hard link: links/other/two becomes a copy (same content, mode, owner, mtime, xattrs).
fresh_copy mut-link
cp -a "$M/links/other/two" "$M/links/other/two.tmp"
mv -f "$M/links/other/two.tmp" "$M/links/other/two"
restore_mtime links/other
check_output "broken hard link: group reported" 1 '^links/[a-z/]+: hard-link group: A=\{links/group/one, links/other/two, links/three\} B=' \
    treecmp "$B" "$M"
check_output "broken hard link: nlink reported" 1 '^links/other/two: nlink: A=3 B=1$' treecmp "$B" "$M"
check_output "--no-hardlinks ignores it" 0 ' 0 differences$' treecmp "$B" "$M" --no-hardlinks

# An extra file, a missing directory (one line for it and what is below it), a symlink target.
fresh_copy mut-names
echo extra >"$M/names/-extra"
rm -rf "$M/deep/level-01-"*/level-02-*
ln -sfn elsewhere "$M/types/symlink-short"
check_output "extra file is reported" 1 '^names/-extra: only in B: reg$' treecmp "$B" "$M"
check_output "missing directory is reported once" 1 \
    '^deep/level-01-n+/level-02-n+: only in A: dir \(and [0-9]+ entries below it\)$' \
    treecmp "$B" "$M" --no-mtime --no-owner
check_output "symlink target is reported" 1 '^types/symlink-short: symlink target: A="regular" B="elsewhere"$' \
    treecmp "$B" "$M"
rm -f "$M/names/-extra"
restore_mtime names
check_output "--skip-types reg,dir,lnk leaves out the rest" 0 ' 0 differences$' \
    treecmp "$B" "$M" --skip-types reg,dir,lnk

# A device number and an owner (root only).
if have_root; then
    fresh_copy mut-dev
    rm -f "$M/types/blockdev-259-300000"
    mknod "$M/types/blockdev-259-300000" b 259 300001
    chmod 0644 "$M/types/blockdev-259-300000"
    restore_mtime types/blockdev-259-300000 types
    check_output "device number is reported" 1 '^types/blockdev-259-300000: device: A=259:300000 B=259:300001$' \
        treecmp "$B" "$M"
    chown -h 100001:200000 "$M/owners/symlink-big"
    check_output "symlink owner is reported" 1 '^owners/symlink-big: uid: A=100000 B=100001$' treecmp "$B" "$M"
    check_output "--no-owner ignores owners" 1 ' 1 differences$' treecmp "$B" "$M" --no-owner
else
    skip_section "treecmp on device numbers and owners: not root (mknod, chown)"
fi
rm -rf "$W"/mut-*
check_rc "treecmp: missing root is a usage error" 2 treecmp "$B" "$W/does-not-exist"

# --- 3. lib.bash itself -----------------------------------------------------------------------
cat >"$W/skipper.sh" <<EOF
source "$EROFS_SOURCE_DIR/tests/integration/lib.bash"
skip "testing skip"
EOF
check_output "skip prints SKIPPED and exits 77" 77 '^SKIPPED: skipper: testing skip$' bash "$W/skipper.sh"
cat >"$W/sectioner.sh" <<EOF
source "$EROFS_SOURCE_DIR/tests/integration/lib.bash"
pass "a part that ran"
skip_section "a part left out"
finish
EOF
check_output "skip_section prints SKIPPED" 0 '^SKIPPED: sectioner: a part left out$' \
    env EROFS_SKIP_LOG="$W/skips.log" bash "$W/sectioner.sh"
check_output "skip_section is counted as skipped, not passed" 0 '^sectioner: 1 passed, 0 failed, 1 skipped$' \
    env EROFS_SKIP_LOG="$W/skips.log" bash "$W/sectioner.sh"
check_output "skip_section writes its line to \$EROFS_SKIP_LOG" 0 '^2 SKIPPED: sectioner: a part left out$' \
    bash -c 'sort "$1" | uniq -c | sed "s/^ *//"' _ "$W/skips.log"
printf 'source "%s/tests/integration/lib.bash"\nfalse | true\n' "$EROFS_SOURCE_DIR" >"$W/pipe.sh"
check_rc "lib.bash sets pipefail: a pipeline whose first command fails fails" 1 bash "$W/pipe.sh"

# child.sh MODE: makes a workdir below $W (its current directory), maybe mounts an image there,
# then exits normally (MODE=exit) or is killed (MODE=term); its cleanup must leave nothing.
mkdir -p "$W/child-cwd"
cat >"$W/child.sh" <<EOF
source "$EROFS_SOURCE_DIR/tests/integration/lib.bash"
workdir
mkdir -p "\$WORKDIR/tree/a/b" && echo hi >"\$WORKDIR/tree/a/b/f"
chmod 000 "\$WORKDIR/tree/a"
if [[ -n "\${CHILD_IMAGE:-}" ]]; then
    mount_image "\$CHILD_IMAGE" "\$WORKDIR/mnt" || exit 3
    mount_image "\$CHILD_IMAGE" "\$WORKDIR/mnt2" || exit 3
    cd "\$WORKDIR/mnt2"          # keeps mnt2 busy: cleanup has to fall back to lazy unmount
    exec 9<"\$WORKDIR/mnt/tree/a/b/f" 2>/dev/null || exec 9<"\$WORKDIR/mnt/f"
fi
case "\$1" in
    term) kill -TERM \$\$; sleep 5; exit 0 ;;
    *) exit 0 ;;
esac
EOF

child_left_nothing() {
    local left
    left=$(find "$W/child-cwd" -mindepth 1 -maxdepth 1 2>/dev/null)
    if [[ -n "$left" ]]; then
        echo "left behind: $left"
        return 1
    fi
    if grep -q " $W/child-cwd/" /proc/self/mountinfo; then
        echo "still mounted:"
        grep " $W/child-cwd/" /proc/self/mountinfo
        return 1
    fi
    # a loop device under a lazily unmounted filesystem goes away when its last user
    # (the child process) is gone; give the kernel a moment
    local _
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        grep -qs "$W/child-cwd/" /sys/block/loop*/loop/backing_file || break
        sleep 0.5
    done
    if have_root && grep -qs "$W/child-cwd/" /sys/block/loop*/loop/backing_file; then
        echo "loop devices still attached:"
        losetup -a | grep "$W/child-cwd/"
        return 1
    fi
}

check_rc "child exits normally" 0 bash -c "cd '$W/child-cwd' && bash '$W/child.sh' exit"
check "child's workdir was removed" child_left_nothing
check_rc "child killed by SIGTERM exits 143" 143 bash -c "cd '$W/child-cwd' && bash '$W/child.sh' term"
check "killed child's workdir was removed" child_left_nothing

# --- 4. kernel mounts of mkfs.erofs images --------------------------------------------------
why_not=
have_root || why_not="not root"
[[ -z "$why_not" ]] && ! have_cmd mkfs.erofs && why_not="no mkfs.erofs"
[[ -z "$why_not" ]] && ! have_erofs_kernel && why_not="kernel has no erofs"
[[ -z "$why_not" ]] && ! have_loop && why_not="no usable loop device"
if [[ -n "$why_not" ]]; then
    skip_section "kernel mounts of mkfs.erofs images (4.): $why_not"
    finish
fi

# mkfs.erofs 1.5 (Debian 12) cannot take names of exactly 255 bytes: it copies the name into a
# buffer that keeps 254 bytes, then fails with "Could not format the device: [Error 2] No such
# file or directory" when it lstat()s the truncated name. Probe for it and, where it is so,
# build the images from a copy without those names (our own writer must handle them; they
# stay in the source tree for everything else). Newer mkfs.erofs versions keep them.
mkdir -p "$W/probe255"
touch "$W/probe255/$(printf 'N%.0s' {1..255})"
probe_out=$(mkfs.erofs "$W/probe255.img" "$W/probe255" 2>&1)
probe_rc=$?
echo "note: using $(head -n 1 <<<"$probe_out" | tr -d '\r')"
if [[ $probe_rc == 0 ]]; then
    S=$W/src
    echo "note: this mkfs.erofs takes 255-byte names"
else
    S=$W/src-mkfs
    cp -a "$W/src" "$S"
    n=$(LC_ALL=C find "$S" -regextype posix-extended -regex '.*/[^/]{255}' | wc -l)
    LC_ALL=C find "$S" -depth -regextype posix-extended -regex '.*/[^/]{255}' -exec rm -rf {} +
    # put the parents' mtimes back so that only the missing names differ from the source
    (cd "$W/src" && LC_ALL=C find . -regextype posix-extended -regex '.*/[^/]{255}' \
        -exec dirname {} \; | sort -u | while IFS= read -r d; do touch -m -r "$W/src/$d" "$S/$d"; done)
    echo "note: this mkfs.erofs cannot take 255-byte names; the images are built without the $n of them"
    check_output "source without 255-byte names differs only by them" 1 " $n differences\$" \
        treecmp "$W/src" "$S"
fi
rm -rf "$W/probe255" "$W/probe255.img"

# (a) Plain mkfs.erofs 1.5 keeps everything treecmp looks at: names, types, all mode bits,
#     32-bit uid/gid, mtimes with nanoseconds (also before 1970 and after 2106: it writes
#     extended inodes), devices with large minors, xattrs of all namespaces (also on symlinks
#     and fifos) and ACLs, hard links, sparse files. So no treecmp option is needed.
check "mkfs.erofs (plain)" mkfs.erofs --quiet "$W/plain.img" "$S"
if have_cmd fsck.erofs; then
    check "fsck.erofs (plain)" fsck.erofs "$W/plain.img"
else
    skip_section "fsck.erofs of the plain image: no fsck.erofs"
fi
if check "mount_image (plain)" mount_image "$W/plain.img" "$W/mnt-plain"; then
    check_output "treecmp source vs kernel mount (plain)" 0 '^treecmp: [0-9]{5,} entries compared, 0 differences$' \
        treecmp "$S" "$W/mnt-plain"
    check "umount_image (plain)" umount_image "$W/mnt-plain"
fi

# (b) mkfs.erofs -zlz4hc -T0 --all-root: compressed data, and on purpose lossy metadata:
#     -T0 sets every mtime to 0            -> treecmp --no-mtime
#     --all-root makes every uid/gid 0     -> treecmp --no-owner
#     and both are checked directly on the mount instead. Left mounted on purpose: the EXIT
#     cleanup has to unmount it (checked from outside by running this script and looking at
#     `mount` and `losetup -a`).
check "mkfs.erofs -zlz4hc -T0 --all-root" mkfs.erofs --quiet -zlz4hc -T0 --all-root "$W/lossy.img" "$S"
if check "mount_image (lz4hc, -T0, --all-root)" mount_image "$W/lossy.img" "$W/mnt-lossy"; then
    check_output "treecmp --no-owner --no-mtime (lz4hc, -T0, --all-root)" 0 ' 0 differences$' \
        treecmp "$S" "$W/mnt-lossy" --no-owner --no-mtime
    check_output "without those options treecmp sees the lost mtimes" 1 '^times/far-future: mtime: A=5000000000\.999999999 B=0\.000000000$' \
        treecmp "$S" "$W/mnt-lossy"
    check "all owners are root on the -T0 --all-root mount" \
        no_output find "$W/mnt-lossy" \( ! -uid 0 -o ! -gid 0 \) -print -quit
    check "all mtimes are 0 on the -T0 --all-root mount" \
        no_output bash -c "find '$W/mnt-lossy' -printf '%T@\n' | grep -v '^0\.0*\$'; [[ \${PIPESTATUS[0]} == 0 ]]"
fi

# (c) lib.bash cleanup of a child's loop mounts (one of them busy) on exit and on SIGTERM.
check_rc "child with mounts exits normally" 0 \
    env CHILD_IMAGE="$W/plain.img" bash -c "cd '$W/child-cwd' && bash '$W/child.sh' exit"
check "child's mounts, loops and workdir are gone" child_left_nothing
check_rc "child with mounts killed by SIGTERM" 143 \
    env CHILD_IMAGE="$W/plain.img" bash -c "cd '$W/child-cwd' && bash '$W/child.sh' term"
check "killed child's mounts, loops and workdir are gone" child_left_nothing

finish
