#!/usr/bin/env python3
"""Generate a deterministic, awkward directory tree for filesystem round-trip tests.

Usage: mktree.py DEST [--profile awkward|compressible|small] [--seed N]

DEST must not exist. The tree depends only on the profile and the seed (default 1), except for
what the OS decides (inode numbers, the socket inode, ctimes/atimes).

Profiles:
  awkward       (default) odd names, a 10,000-entry directory, 30-deep nesting, every file type,
                hard links, interesting sizes and a sparse file, xattrs of every namespace and
                POSIX ACLs, odd mtimes (1980, before 1970, after 2106, all with nanoseconds),
                odd modes (setuid/setgid/sticky/000) and owners (uid/gid above 65535).
  small         the awkward tree without the 10,000-entry directory (fast matrices).
  compressible  content-oriented: text (seeded words), random, mixed (text/random in 64 KiB
                stripes) and all-zero files, sizes up to a few MiB, plus a sparse file and a
                hard-link pair.

Root-only parts (chown, mknod of char/block devices, trusted.* xattrs) are skipped when not run
as root, with one line per skipped part on stderr. Any other part the filesystem under DEST
refuses (e.g. no user xattrs) is likewise reported on stderr and skipped.

The last line on stdout is a summary: entries (not counting DEST itself) and bytes (apparent
size of regular files, each hard-linked inode counted once).
"""

import argparse
import os
import random
import socket
import stat
import struct
import sys
import zlib

MiB = 1024 * 1024
NS = 1_000_000_000

WORDS = (
    "the quick brown fox jumps over lazy dog erofs filesystem block inode extent cluster "
    "compress decompress lz4 lzma deflate zstd superblock xattr directory entry name hash "
    "mount loop device kernel read only image layer container overlay whiteout opaque data "
    "tail packing fragment dedupe chunk index metadata uid gid mode mtime nsec symlink target "
    "hard link sparse hole zero random text mixed stripe page cache buffer head queue bio "
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho "
    "sigma tau upsilon phi chi psi omega one two three four five six seven eight nine ten"
).split()

# POSIX ACL xattr binary format (linux/posix_acl_xattr.h)
ACL_USER_OBJ, ACL_USER, ACL_GROUP_OBJ, ACL_GROUP, ACL_MASK, ACL_OTHER = 1, 2, 4, 8, 0x10, 0x20
ACL_UNDEFINED_ID = 0xFFFFFFFF


def acl_value(entries):
    """entries: list of (tag, perm, id); returns the system.posix_acl_* xattr value."""
    out = [struct.pack("<I", 2)]
    norm = [(tag, ident if tag in (ACL_USER, ACL_GROUP) else ACL_UNDEFINED_ID, perm)
            for tag, perm, ident in entries]
    for tag, ident, perm in sorted(norm):      # the kernel wants them sorted by (tag, id)
        out.append(struct.pack("<HHI", tag, perm, ident))
    return b"".join(out)


def b(s):
    return s if isinstance(s, bytes) else os.fsencode(s)


class Builder:
    def __init__(self, dest, seed):
        self.dest = b(os.path.abspath(dest))
        self.rng = random.Random(seed)
        self.seed = seed
        self.is_root = os.geteuid() == 0
        self.skipped = []          # messages, in order, deduplicated
        self.attrs = []            # (rel, uid, gid, mode, xattrs, acls) applied after creation
        self.mtimes = {}           # rel -> ns (overrides of the default)
        self.entries = 0
        self.inodes_bytes = {}     # (dev, ino) -> size, for the summary

    # -- helpers -------------------------------------------------------------------------------
    def p(self, rel):
        rel = b(rel)
        return self.dest if rel in (b"", b".") else os.path.join(self.dest, rel)

    def skip(self, msg):
        if msg not in self.skipped:
            self.skipped.append(msg)
            print("mktree: skipped: " + msg, file=sys.stderr)

    def meta(self, rel, mode=None, uid=None, gid=None, mtime=None, xattrs=None, acls=None):
        if mtime is not None:
            self.mtimes[b(rel)] = mtime
        if mode is not None or uid is not None or gid is not None or xattrs or acls:
            self.attrs.append((b(rel), uid, gid, mode, xattrs or {}, acls or {}))

    def text(self, n, rng=None):
        """n bytes of seeded words, 12 words a line."""
        rng = rng or self.rng
        out, total = [], 0
        while total < n:
            words = rng.choices(WORDS, k=max(12, (n - total) // 5 + 12))
            chunk = "\n".join(" ".join(words[i:i + 12]) for i in range(0, len(words), 12))
            chunk = chunk.encode() + b"\n"
            out.append(chunk)
            total += len(chunk)
        return b"".join(out)[:n]

    def random_bytes(self, n):
        return self.rng.randbytes(n)

    # -- creation ------------------------------------------------------------------------------
    def mkdir(self, rel, mode=None, **kw):
        os.mkdir(self.p(rel), 0o755)
        self.entries += 1
        self.meta(rel, mode=mode, **kw)

    def file(self, rel, data=b"", mode=None, **kw):
        fd = os.open(self.p(rel), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        self.entries += 1
        self.meta(rel, mode=mode, **kw)

    def sparse(self, rel, size, chunks, mode=None, **kw):
        """chunks: list of (offset, data)."""
        fd = os.open(self.p(rel), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.ftruncate(fd, size)
            for off, data in chunks:
                os.pwrite(fd, data, off)
        finally:
            os.close(fd)
        self.entries += 1
        self.meta(rel, mode=mode, **kw)

    def symlink(self, rel, target, **kw):
        os.symlink(b(target), self.p(rel))
        self.entries += 1
        self.meta(rel, **kw)

    def hardlink(self, existing, rel):
        os.link(self.p(existing), self.p(rel))
        self.entries += 1

    def fifo(self, rel, mode=None, **kw):
        os.mkfifo(self.p(rel), 0o644)
        self.entries += 1
        self.meta(rel, mode=mode, **kw)

    def device(self, rel, kind, major, minor, mode=None, **kw):
        if not self.is_root:
            self.skip("char and block devices: mknod needs root")
            return
        os.mknod(self.p(rel), kind | 0o644, os.makedev(major, minor))
        self.entries += 1
        self.meta(rel, mode=mode, **kw)

    def unix_socket(self, rel, mode=None, **kw):
        path = self.p(rel)
        parent, name = os.path.split(path)
        cwd = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            os.chdir(parent)           # bind relative: sun_path is limited to 108 bytes
            s.bind(name)
        finally:
            s.close()
            os.fchdir(cwd)
            os.close(cwd)
        self.entries += 1
        self.meta(rel, mode=0o755 if mode is None else mode, **kw)

    # -- attributes ----------------------------------------------------------------------------
    def apply_attrs(self):
        # Order matters: chown first (it clears setuid/setgid), then xattrs (user.* needs write
        # permission for non-root owners, which a 000 mode would take away), then chmod, then
        # ACLs (setting an access ACL rewrites the group bits; chmod afterwards would rewrite the
        # ACL's mask).
        for rel, uid, gid, mode, xattrs, acls in self.attrs:
            if uid is None and gid is None:
                continue
            if not self.is_root:
                self.skip("ownership (chown): needs root")
                continue
            os.lchown(self.p(rel), -1 if uid is None else uid, -1 if gid is None else gid)
        for rel, uid, gid, mode, xattrs, acls in self.attrs:
            for name, value in xattrs.items():
                ns = name.split(b".", 1)[0].decode()
                if ns == "trusted" and not self.is_root:
                    self.skip("trusted.* xattrs: need root")
                    continue
                try:
                    os.setxattr(self.p(rel), name, value, follow_symlinks=False)
                except OSError as e:
                    self.skip("%s.* xattrs: %s" % (ns, os.strerror(e.errno)))
        for rel, uid, gid, mode, xattrs, acls in self.attrs:
            if mode is not None and not os.path.islink(self.p(rel)):  # no lchmod on Linux
                if not self.is_root and not mode & stat.S_IRUSR:
                    # Only root could read the file back (to copy or to pack it).
                    self.skip("modes without owner read permission (000, 0111, 0222): only "
                              "root can read such files; u+r added")
                    mode |= stat.S_IRUSR
                os.chmod(self.p(rel), mode)
        for rel, uid, gid, mode, xattrs, acls in self.attrs:
            for name, value in acls.items():
                try:
                    os.setxattr(self.p(rel), name, value, follow_symlinks=False)
                except OSError as e:
                    self.skip("POSIX ACLs: %s" % os.strerror(e.errno))

    def default_mtime(self, rel):
        h = zlib.crc32(rel)
        sec = 1_500_000_000 + h % 300_000_000
        nsec = 1 + zlib.crc32(rel + b"#ns") % (NS - 1)
        return sec * NS + nsec

    def apply_mtimes(self):
        # Depth-first, children before their directory, so directory mtimes stick.
        def walk(dirpath, rel):
            with os.scandir(dirpath) as it:
                ents = sorted(it, key=lambda e: e.name)
            for e in ents:
                r = os.path.join(rel, e.name) if rel else e.name
                if e.is_dir(follow_symlinks=False):
                    walk(e.path, r)
                self.set_mtime(e.path, r)
                st = e.stat(follow_symlinks=False)
                if stat.S_ISREG(st.st_mode):
                    self.inodes_bytes[(st.st_dev, st.st_ino)] = st.st_size
        walk(self.dest, b"")
        self.set_mtime(self.dest, b"")

    def set_mtime(self, path, rel):
        ns = self.mtimes.get(rel)
        if ns is None:
            ns = self.default_mtime(rel)
        os.utime(path, ns=(ns, ns), follow_symlinks=False)

    def finish(self):
        self.apply_attrs()
        self.apply_mtimes()


# ------------------------------------------------------------------------------------------------
# Awkward tree

ODD_NAMES = [
    "with space", " leading-space", "trailing-space ", "tab\there", "new\nline",
    "ünïcødé-日本", "L" * 255, "日" * 85, "-foo", "+x", "!bang", "#hash", ",comma", "$dollar",
    "%percent", "&amp", "'quote", "(paren)", "*star", "a", "a.b", "a-b", "a+b", "a b", "a!",
    "a0", "A", "Case", "case", "CASE", ".hidden", "..double", "...", "back\\slash",
    "colon:q?", 'dq"uote', "ctrl\x01char", "del\x7f", "emoji-😀", "combining-e\u0301",
    "combining-\u00e9", "~tilde", "z", "ZZ", "=eq", "@at", "[bracket]", "{brace}", "|pipe",
]
ODD_BYTE_NAMES = [b"latin1-\xe9\xff", b"\xc3\x28invalid-utf8", b"high-\x80\x81\xfe"]


def build_names(B):
    B.mkdir("names")
    for i, name in enumerate(ODD_NAMES):
        B.file(os.path.join("names", name), ("%d:%s\n" % (i, name)).encode())
    for i, name in enumerate(ODD_BYTE_NAMES):
        B.file(os.path.join(b"names", name), b"bytes %d\n" % i)
    # directories whose names sort around '.', each with children
    for d in ["-dir", "+dir", "dir with space", "a.d", "a", "日本-dir", "D" * 255]:
        rel = os.path.join("names", "dirs", d)
        if not os.path.isdir(B.p(os.path.join("names", "dirs"))):
            B.mkdir(os.path.join("names", "dirs"))
        B.mkdir(rel)
        for c in ["-", "+", ".x", "x", "X"]:
            B.file(os.path.join(rel, c), c.encode())


def build_big(B, count=10000):
    # Own RNG, so that the small profile (which leaves this out) is otherwise the same tree.
    rng = random.Random(B.seed * 7919 + 17)
    B.mkdir("big")
    for i in range(count):
        if i % 10 == 3:
            name = "entry-%05d-%s" % (i, "n" * (i % 200))
        else:
            name = "entry-%05d" % i
        size = 0 if i % 4 == 0 else (i * 37) % 97
        B.file(os.path.join("big", name),
               B.text(size, rng) if i % 2 else (b"%05d" % i)[:size].ljust(size, b"."))


def build_deep(B, depth=30):
    rel = "deep"
    B.mkdir(rel)
    for lvl in range(1, depth + 1):
        rel = os.path.join(rel, "level-%02d-%s" % (lvl, "n" * 40))
        B.mkdir(rel)
        B.file(os.path.join(rel, "f%02d" % lvl), b"level %d\n" % lvl)
    B.file(os.path.join(rel, "leaf"), b"bottom\n")
    B.symlink(os.path.join(rel, "to-top"), "../" * (depth + 1))


def build_types(B):
    B.mkdir("types")
    B.file("types/regular", b"regular file\n")
    B.mkdir("types/directory")
    B.file("types/directory/inside", b"x")
    B.mkdir("types/empty-dir")
    B.symlink("types/symlink-short", "regular")
    B.symlink("types/symlink-1", "x")
    B.symlink("types/symlink-dir", "directory")
    B.symlink("types/symlink-abs", "/nonexistent/absolute/target")
    B.symlink("types/symlink-dangling", "nowhere/does/not/exist")
    long_target = "/".join("t%03d-%s" % (i, "y" * 45) for i in range(80))
    long_target = (long_target + "/" + "z" * 4095)[:4095]
    B.symlink("types/symlink-4095", long_target)
    B.symlink("types/symlink-odd", "ünï\tcødé\nname")
    B.device("types/chardev-4-300", stat.S_IFCHR, 4, 300)
    B.device("types/chardev-1-3", stat.S_IFCHR, 1, 3)
    B.device("types/chardev-0-0-whiteout", stat.S_IFCHR, 0, 0)
    B.device("types/blockdev-259-300000", stat.S_IFBLK, 259, 300000)
    B.device("types/blockdev-8-1", stat.S_IFBLK, 8, 1)
    B.device("types/chardev-4095-1048575", stat.S_IFCHR, 4095, 1048575)
    B.fifo("types/fifo")
    B.unix_socket("types/socket")


def build_links(B):
    B.mkdir("links")
    B.file("links/pair-a", b"hard link pair in one directory\n")
    B.hardlink("links/pair-a", "links/pair-b")
    B.mkdir("links/group")
    B.mkdir("links/other")
    B.file("links/group/one", B.text(5000))
    B.hardlink("links/group/one", "links/other/two")
    B.hardlink("links/group/one", "links/three")
    B.file("links/empty-a", b"")
    B.hardlink("links/empty-a", "links/empty-b")
    B.file("links/with-xattr", b"linked, with xattrs\n", mode=0o640, uid=1000, gid=1000,
           xattrs={b"user.linked": b"yes"})
    B.hardlink("links/with-xattr", "links/group/with-xattr-2")
    B.file("links/single", b"nlink 1\n")


SIZES = [0, 1, 2, 100, 511, 512, 513, 1000, 4095, 4096, 4097, 8191, 8192, 8193, 12288,
         65535, 65536, 65537, 131079, 262144, MiB, MiB + 1]


def build_sizes(B):
    B.mkdir("sizes")
    for i, n in enumerate(SIZES):
        data = B.random_bytes(n) if i % 2 else B.text(n)
        B.file("sizes/size-%d" % n, data)
    B.sparse("sizes/sparse-4M", 4 * MiB,
             [(0, B.random_bytes(65536)), (4 * MiB - 65536, B.random_bytes(65536))])
    B.sparse("sizes/sparse-odd", 3 * MiB + 12345,
             [(0, B.text(5000)), (MiB + 17, b"island"), (3 * MiB + 12345 - 100, B.text(100))])
    B.sparse("sizes/sparse-tail-hole", 2 * MiB, [(0, B.text(4096))])
    B.sparse("sizes/all-hole", MiB, [])


def build_xattrs(B):
    B.mkdir("xattrs")
    many = {}
    for i in range(32):
        many[b"user.attr.%02d" % i] = B.text(20 + (i * 7) % 41)
    B.file("xattrs/many", b"many xattrs\n", xattrs=many)
    B.file("xattrs/long-value", b"long value\n", xattrs={b"user.long": B.text(1000)})
    B.file("xattrs/long-name", b"long name\n",
           xattrs={b"user." + b"n" * 195: b"v", b"user.short": b"s"})
    B.file("xattrs/binary-value", b"binary\n", xattrs={b"user.bin": bytes(range(256)) + b"\0"})
    B.file("xattrs/empty-value", b"empty\n", xattrs={b"user.empty": b""})
    B.file("xattrs/security", b"security\n", xattrs={b"security.test": b"security value"})
    B.file("xattrs/trusted", b"trusted\n",
           xattrs={b"trusted.test": b"trusted value", b"trusted.overlay.opaque": b"y",
                   b"user.mixed": b"u"})
    B.mkdir("xattrs/dir", xattrs={b"user.dir": b"directory xattr", b"trusted.dir": b"t",
                                  b"security.dir": b"s"})
    B.file("xattrs/dir/child", b"child\n", xattrs={b"user.child": b"c"})
    B.symlink("xattrs/symlink", "many", xattrs={b"trusted.link": b"on a symlink",
                                                b"security.link": b"s"})
    B.fifo("xattrs/fifo", xattrs={b"trusted.fifo": b"on a fifo"})
    shared = {b"user.shared.one": b"same value everywhere", b"user.shared.two": B.text(200),
              b"security.test": b"shared security", b"trusted.shared": b"shared trusted"}
    B.mkdir("xattrs/shared")
    for i in range(6):
        x = dict(shared)
        x[b"user.unique"] = b"%d" % i
        B.file("xattrs/shared/s%d" % i, b"shared xattrs %d\n" % i, xattrs=x)
    B.file("xattrs/none", b"no xattrs at all\n")


def build_acls(B):
    B.mkdir("acl")
    access = acl_value([(ACL_USER_OBJ, 6, 0), (ACL_USER, 7, 1000), (ACL_USER, 4, 100000),
                        (ACL_GROUP_OBJ, 4, 0), (ACL_GROUP, 6, 2000), (ACL_MASK, 7, 0),
                        (ACL_OTHER, 4, 0)])
    B.file("acl/file-access", b"access ACL\n", acls={b"system.posix_acl_access": access})
    default = acl_value([(ACL_USER_OBJ, 7, 0), (ACL_USER, 5, 1000), (ACL_GROUP_OBJ, 5, 0),
                         (ACL_MASK, 5, 0), (ACL_OTHER, 0, 0)])
    dir_access = acl_value([(ACL_USER_OBJ, 7, 0), (ACL_GROUP_OBJ, 5, 0), (ACL_GROUP, 7, 3000),
                            (ACL_MASK, 7, 0), (ACL_OTHER, 5, 0)])
    B.mkdir("acl/dir-default", acls={b"system.posix_acl_default": default})
    B.mkdir("acl/dir-both", acls={b"system.posix_acl_default": default,
                                  b"system.posix_acl_access": dir_access})
    B.file("acl/dir-default/plain", b"plain\n")


def build_times(B):
    B.mkdir("times")
    cases = {
        "old-1980": 315532800 * NS + 123456789,
        "pre-1970": -1000000000 * NS + 987654321,
        "minus-1ns": -1,
        "epoch": 0 * NS + 1,
        "y2038-plus": 2147483648 * NS + 7,
        "after-2106": 4294967296 * NS + 5,
        "far-future": 5000000000 * NS + 999999999,
        "recent": 1700000000 * NS + 500000000,
    }
    for name, ns in cases.items():
        B.file("times/" + name, name.encode() + b"\n", mtime=ns)
    B.mkdir("times/dir-1980", mtime=315532800 * NS + 42)
    B.file("times/dir-1980/child", b"child of an old directory\n", mtime=5000000000 * NS + 3)
    B.mkdir("times/dir-pre-1970", mtime=-1000000000 * NS + 999)
    B.symlink("times/symlink-pre-1970", "pre-1970", mtime=-1000000000 * NS + 111111111)
    B.symlink("times/symlink-future", "far-future", mtime=5000000000 * NS + 222222222)
    B.fifo("times/fifo-1980", mtime=315532800 * NS + 333333333)


def build_modes(B):
    B.mkdir("modes")
    for name, mode in [("setuid", 0o4755), ("setgid", 0o2755), ("setuid-setgid", 0o6755),
                       ("all-bits", 0o7777), ("zero", 0o000), ("exec-only", 0o111),
                       ("write-only", 0o222), ("group-rw", 0o660)]:
        B.file("modes/" + name, name.encode() + b"\n", mode=mode)
    B.mkdir("modes/sticky-dir", mode=0o1777)
    B.file("modes/sticky-dir/inside", b"x", mode=0o600)
    B.mkdir("modes/setgid-dir", mode=0o2775)
    B.file("modes/setgid-dir/inside", b"y", mode=0o640)
    B.mkdir("modes/private-dir", mode=0o700)
    B.file("modes/private-dir/secret", b"secret\n", mode=0o400)
    B.fifo("modes/fifo-0600", mode=0o600)
    B.fifo("modes/fifo-sticky", mode=0o1666)


def build_owners(B):
    B.mkdir("owners")
    B.file("owners/big-ids", b"big ids\n", uid=100000, gid=200000)
    B.file("owners/user", b"user\n", uid=1000, gid=1000)
    B.file("owners/nobody", b"nobody\n", uid=65534, gid=65534)
    B.file("owners/max-16bit", b"65535\n", uid=65535, gid=65535)
    B.file("owners/just-above-16bit", b"65536\n", uid=65536, gid=65536)
    B.file("owners/huge", b"huge\n", uid=2000000000, gid=3000000000)
    B.file("owners/mixed", b"mixed\n", uid=0, gid=100000)
    B.file("owners/setuid-big", b"setuid with big owner\n", mode=0o4750, uid=100000, gid=200000)
    B.symlink("owners/symlink-big", "big-ids", uid=100000, gid=200000)
    B.symlink("owners/symlink-user", "user", uid=1000, gid=1000)
    B.mkdir("owners/dir-user", uid=1000, gid=1000)
    B.file("owners/dir-user/child", b"child\n", uid=1000, gid=1000)
    B.fifo("owners/fifo-big", uid=100000, gid=200000)
    B.device("owners/chardev-big", stat.S_IFCHR, 10, 200, uid=100000, gid=200000)


def build_awkward(B, big=True):
    build_names(B)
    if big:
        build_big(B)
    build_deep(B)
    build_types(B)
    build_links(B)
    build_sizes(B)
    build_xattrs(B)
    build_acls(B)
    build_times(B)
    build_modes(B)
    build_owners(B)
    B.meta(b"", mode=0o755, mtime=1234567890 * NS + 987654321)


# ------------------------------------------------------------------------------------------------
# Compressible tree

def mixed(B, n, stripe=65536):
    out, pos, i = [], 0, 0
    while pos < n:
        k = min(stripe, n - pos)
        out.append(B.text(k) if i % 2 == 0 else B.random_bytes(k))
        pos += k
        i += 1
    return b"".join(out)


def big_text(B, n):
    """Multi-MiB text: permuted 4 KiB blocks of seeded words (fast, still repetitive)."""
    blocks = [B.text(4096) for _ in range(32)]
    out, pos = [], 0
    while pos < n:
        blk = blocks[B.rng.randrange(len(blocks))]
        out.append(blk)
        pos += len(blk)
    return b"".join(out)[:n]


def build_compressible(B):
    sizes = [0, 1, 100, 4095, 4096, 4097, 16384, 65536, 65537, 200000, MiB + 1, 3 * MiB + 17]
    B.mkdir("text")
    for n in sizes:
        B.file("text/text-%d" % n, B.text(n) if n < 65536 else big_text(B, n))
    B.mkdir("random")
    for n in [1, 4095, 4096, 4097, 65536, 300000, MiB + 1]:
        B.file("random/random-%d" % n, B.random_bytes(n))
    B.mkdir("mixed")
    for n in [65536 * 2, 65536 * 3 + 1, 1000000, 2 * MiB + 4097, 4 * MiB]:
        B.file("mixed/mixed-%d" % n, mixed(B, n))
    B.mkdir("zeros")
    for n in [1, 4096, 4097, MiB, 3 * MiB]:
        B.file("zeros/zeros-%d" % n, bytes(n))
    B.mkdir("other")
    B.sparse("other/sparse-4M", 4 * MiB, [(0, B.text(65536)), (4 * MiB - 65536, B.random_bytes(65536))])
    B.file("other/linked-a", big_text(B, 300000))
    B.hardlink("other/linked-a", "other/linked-b")
    # Two files that start alike and then differ: dedupe shares a pcluster by partial reference.
    base = big_text(B, 290000)
    B.file("other/prefix-base", base)
    B.file("other/prefix-shared", base[:150001] + b"".join(b"line %06d of the part that differs\n" % i
                                                            for i in range(2800)))
    rep = B.text(8192)
    B.file("other/repeated-8k-blocks", rep * 128)
    B.file("other/ones", b"\xff" * (MiB + 3))
    for i in range(64):
        B.file("other/tiny-%02d" % i, B.text(i * 13))
    B.symlink("other/symlink", "linked-a")
    B.meta(b"", mode=0o755, mtime=1234567890 * NS + 987654321)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dest")
    ap.add_argument("--profile", choices=["awkward", "compressible", "small"], default="awkward")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)

    if os.path.lexists(args.dest):
        print("mktree: %s already exists" % args.dest, file=sys.stderr)
        return 2
    os.umask(0o022)
    B = Builder(args.dest, args.seed)
    os.mkdir(B.dest, 0o755)
    if args.profile == "compressible":
        build_compressible(B)
    else:
        build_awkward(B, big=(args.profile == "awkward"))
    B.finish()
    total = sum(B.inodes_bytes.values())
    print("mktree: %s: profile=%s seed=%d: %d entries, %d bytes%s" % (
        args.dest, args.profile, args.seed, B.entries, total,
        (" (%d parts skipped)" % len(B.skipped)) if B.skipped else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
