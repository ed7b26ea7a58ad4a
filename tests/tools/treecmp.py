#!/usr/bin/env python3
"""Compare two directory trees entry by entry, metadata included.

Usage: treecmp.py A B [B2 ...] [--no-owner] [--no-xattrs] [--no-mtime] [--mtime-seconds]
                      [--ignore-root-mtime] [--no-hardlinks] [--contents-only]
                      [--skip-types TYPES] [--limit N] [--label]

Prints one line per difference:   PATH: WHAT: A=<value> B=<value>
(PATH relative to the roots, "." for the roots themselves; a backslash is shown doubled, bytes
that are not UTF-8 as \\xNN, control characters as \\n, \\t, \\xNN), then a final line
    treecmp: N entries compared, M differences
Exit status: 0 identical, 1 differences, 2 usage error or a root that is not a directory.
With several B trees (or --label), A is compared with each in turn (one Python start for many
images): each comparison's lines are prefixed with "B: " and its final line reads
    treecmp: B: N entries compared, M differences
and the exit status is 1 if any of them differs.

Compared for every path (names are compared as bytes):
  presence in A and B (a missing directory is one line, counting what is below it),
  type (reg dir lnk chr blk fifo sock),
  permission bits including setuid/setgid/sticky,
  uid and gid                                   (not with --no-owner),
  size of regular files and symlinks,
  nlink of regular files                        (not with --no-hardlinks; directories' nlink and
                                                 size are never compared),
  mtime in nanoseconds, symlinks too (lstat)    (--mtime-seconds: whole seconds only;
                                                 --no-mtime: not at all; --ignore-root-mtime:
                                                 not for the two roots),
  content of regular files (byte for byte, streamed; a difference shows both sha256 digests
                                                 and the first differing offset),
  symlink targets, device numbers (major, minor) of char/block devices,
  extended attributes of all namespaces, names and values (not with --no-xattrs; on symlinks
                                                 only where both sides can list them),
  hard-link groups: the partition of the regular files by (st_dev, st_ino) must be the same in
                                                 A and B (not with --no-hardlinks).
--skip-types TYPES (comma-separated, e.g. sock,fifo,chr,blk): paths having one of these types in
either tree are left out entirely; 'dir' leaves out the directories' own attributes but still
compares what is below them.
--contents-only: compare only what every extractor must give back: presence (names), type,
size of regular files and symlinks, content, symlink targets. Nothing else: no permission bits,
owners, mtimes, xattrs, nlink or hard-link groups, device numbers (implies --no-owner,
--no-xattrs, --no-mtime, --no-hardlinks).
--limit N: print at most N difference lines (all are still counted).
"""

import argparse
import errno
import hashlib
import os
import stat
import sys

TYPES = {
    stat.S_IFREG: "reg", stat.S_IFDIR: "dir", stat.S_IFLNK: "lnk", stat.S_IFCHR: "chr",
    stat.S_IFBLK: "blk", stat.S_IFIFO: "fifo", stat.S_IFSOCK: "sock",
}
TYPE_ALIASES = {
    "file": "reg", "regular": "reg", "f": "reg", "directory": "dir", "d": "dir",
    "symlink": "lnk", "link": "lnk", "l": "lnk", "char": "chr", "c": "chr", "block": "blk",
    "b": "blk", "pipe": "fifo", "p": "fifo", "socket": "sock", "s": "sock",
}
CHUNK = 1 << 20


def show_path(rel):
    if rel == b"":
        return "."
    return escape(rel.decode("utf-8", "surrogateescape"))


def escape(s):
    """One-line, unambiguous rendering: backslash doubled, control characters and bytes that
    are not UTF-8 as \\n, \\t, \\xNN, other unprintable characters as \\uNNNN."""
    out = []
    for c in s:
        o = ord(c)
        if c == "\\":
            out.append("\\\\")
        elif 0xDC80 <= o <= 0xDCFF:          # undecodable byte (surrogateescape)
            out.append("\\x%02x" % (o - 0xDC00))
        elif c.isprintable():
            out.append(c)
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif o < 0x100:
            out.append("\\x%02x" % o)
        else:
            out.append("\\u%04x" % o)
    return "".join(out)


def show_bytes(v, maxlen=64):
    if v is None:
        return "<missing>"
    if isinstance(v, str):
        return v
    try:
        s = v.decode("utf-8")
        text = all(c.isprintable() or c in "\n\t" for c in s)
    except UnicodeDecodeError:
        text = False
    if text:
        r = '"' + escape(s[:maxlen]) + '"'
    else:
        r = "0x" + v[:maxlen // 2].hex()
    if len(v) > (maxlen if text else maxlen // 2):
        r += "...(%d bytes, sha256 %s)" % (len(v), hashlib.sha256(v).hexdigest()[:16])
    return r


def ns_str(ns):
    sec, nsec = divmod(ns, 1_000_000_000)
    return "%d.%09d" % (sec, nsec)


class Tree:
    def __init__(self, root):
        self.root = os.fsencode(root)
        self.entries = {}   # rel -> stat_result (lstat); b"" is the root

    def path(self, rel):
        return os.path.join(self.root, rel) if rel else self.root

    def scan(self):
        self.entries[b""] = os.stat(self.root)
        stack = [b""]
        errors = []
        while stack:
            rel = stack.pop()
            try:
                with os.scandir(self.path(rel)) as it:
                    for e in it:
                        r = os.path.join(rel, e.name) if rel else e.name
                        try:
                            st = e.stat(follow_symlinks=False)
                        except OSError as ex:
                            errors.append((r, "lstat: " + ex.strerror))
                            continue
                        self.entries[r] = st
                        if stat.S_ISDIR(st.st_mode):
                            stack.append(r)
            except OSError as ex:
                errors.append((rel, "cannot list directory: " + ex.strerror))
        return errors

    def xattrs(self, rel, is_link):
        """dict name->value; None if not listable on a symlink."""
        p = self.path(rel)
        try:
            names = os.listxattr(p, follow_symlinks=False)
        except OSError as ex:
            if is_link:
                return None
            return {"<listxattr error>": errno.errorcode.get(ex.errno, str(ex.errno))}
        out = {}
        for n in names:
            try:
                out[n] = os.getxattr(p, n, follow_symlinks=False)
            except OSError as ex:
                out[n] = "<getxattr error %s>" % errno.errorcode.get(ex.errno, str(ex.errno))
        return out


def fill(f, buf):
    """Reads into buf until it is full or the file ends; returns the byte count."""
    view, n = memoryview(buf), 0
    while n < len(buf):
        got = f.readinto(view[n:])
        if not got:
            break
        n += got
    return n


def first_difference(a, b, n):
    """The first index below n at which a and b differ, else n."""
    return next((i for i in range(n) if a[i] != b[i]), n)


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()[:16]


BUFFERS = []


def compare_content(pa, pb):
    """Returns None if equal, else a description. Files are read into two buffers allocated once
    for the run (a fresh buffer per read or per file costs page faults that dominate the
    comparison); digests are computed only for the report of a difference."""
    try:
        fa = open(pa, "rb", buffering=0)
    except OSError as ex:
        return "cannot read A: " + ex.strerror
    try:
        try:
            fb = open(pb, "rb", buffering=0)
        except OSError as ex:
            return "cannot read B: " + ex.strerror
        with fb:
            if not BUFFERS:
                BUFFERS.extend((bytearray(CHUNK), bytearray(CHUNK)))
            ba, bb = BUFFERS
            off = 0
            while True:
                try:
                    na = fill(fa, ba)
                except OSError as ex:
                    return "read error A at %d: %s" % (off, ex.strerror)
                try:
                    nb = fill(fb, bb)
                except OSError as ex:
                    return "read error B at %d: %s" % (off, ex.strerror)
                if na == nb == CHUNK:
                    if ba != bb:
                        break
                elif ba[:na] != bb[:nb]:
                    break
                if na < CHUNK:
                    return None
                off += CHUNK
            first = off + first_difference(ba, bb, min(na, nb))
    finally:
        fa.close()
    try:
        digests = "A=sha256:%s B=sha256:%s " % (sha256_of(pa), sha256_of(pb))
    except OSError:
        digests = ""
    return "%s(first difference at byte %d)" % (digests, first)


class Comparer:
    def __init__(self, a, b, args, label=""):
        self.A, self.B, self.args, self.label = a, b, args, label
        self.ndiff = 0
        self.printed = 0

    def diff(self, rel, what, va=None, vb=None, raw=None):
        self.ndiff += 1
        if self.args.limit is not None and self.printed >= self.args.limit:
            return
        self.printed += 1
        if raw is not None:
            print("%s%s: %s: %s" % (self.label, show_path(rel), what, raw))
        else:
            print("%s%s: %s: A=%s B=%s" % (self.label, show_path(rel), what, va, vb))

    def run(self):
        args = self.args
        skip = args.skip_types
        ea, eb = self.A.entries, self.B.entries

        def skipped(rel):
            for e in (ea.get(rel), eb.get(rel)):
                if e is not None and TYPES.get(stat.S_IFMT(e.st_mode)) in skip:
                    return True
            return False

        allrels = sorted(set(ea) | set(eb))
        compared = 0
        missing_dirs = set()   # directories present on one side only (reported once)
        for rel in allrels:
            if missing_dirs:
                parent = os.path.dirname(rel)
                while parent and parent not in missing_dirs:
                    parent = os.path.dirname(parent)
                if parent:
                    continue
            if skipped(rel):
                continue       # a skipped directory's children are still in allrels
            compared += 1
            sa, sb = ea.get(rel), eb.get(rel)
            if sa is None or sb is None:
                side, st = ("A", sa) if sa is not None else ("B", sb)
                t = TYPES.get(stat.S_IFMT(st.st_mode), "?")
                extra = ""
                if stat.S_ISDIR(st.st_mode):
                    tree = ea if sa is not None else eb
                    below = sum(1 for r in tree if r.startswith(rel + b"/"))
                    if below:
                        extra = " (and %d entries below it)" % below
                    missing_dirs.add(rel)
                self.diff(rel, "only in " + side, raw="%s%s" % (t, extra))
                continue
            self.compare_entry(rel, sa, sb)
        if not args.no_hardlinks:
            self.compare_links(skipped)
        return compared

    def compare_entry(self, rel, sa, sb):
        args = self.args
        ta, tb = TYPES.get(stat.S_IFMT(sa.st_mode), "?"), TYPES.get(stat.S_IFMT(sb.st_mode), "?")
        if ta != tb:
            self.diff(rel, "type", ta, tb)
            return
        ma, mb = stat.S_IMODE(sa.st_mode), stat.S_IMODE(sb.st_mode)
        if ma != mb and not args.contents_only:
            self.diff(rel, "mode", "%04o" % ma, "%04o" % mb)
        if not args.no_owner:
            if sa.st_uid != sb.st_uid:
                self.diff(rel, "uid", sa.st_uid, sb.st_uid)
            if sa.st_gid != sb.st_gid:
                self.diff(rel, "gid", sa.st_gid, sb.st_gid)
        if ta in ("reg", "lnk") and sa.st_size != sb.st_size:
            self.diff(rel, "size", sa.st_size, sb.st_size)
        if ta == "reg" and not args.no_hardlinks and sa.st_nlink != sb.st_nlink:
            self.diff(rel, "nlink", sa.st_nlink, sb.st_nlink)
        if not args.no_mtime and not (rel == b"" and args.ignore_root_mtime):
            if args.mtime_seconds:
                if sa.st_mtime_ns // 1_000_000_000 != sb.st_mtime_ns // 1_000_000_000:
                    self.diff(rel, "mtime (seconds)", sa.st_mtime_ns // 1_000_000_000,
                              sb.st_mtime_ns // 1_000_000_000)
            elif sa.st_mtime_ns != sb.st_mtime_ns:
                self.diff(rel, "mtime", ns_str(sa.st_mtime_ns), ns_str(sb.st_mtime_ns))
        pa, pb = self.A.path(rel), self.B.path(rel)
        if ta == "reg" and sa.st_size == sb.st_size:
            r = compare_content(pa, pb)
            if r is not None:
                self.diff(rel, "content", raw=r)
        elif ta == "lnk":
            try:
                la, lb = os.readlink(pa), os.readlink(pb)
            except OSError as ex:
                self.diff(rel, "readlink", raw=ex.strerror)
            else:
                if la != lb:
                    self.diff(rel, "symlink target", show_bytes(la), show_bytes(lb))
        elif ta in ("chr", "blk") and sa.st_rdev != sb.st_rdev and not args.contents_only:
            self.diff(rel, "device",
                      "%d:%d" % (os.major(sa.st_rdev), os.minor(sa.st_rdev)),
                      "%d:%d" % (os.major(sb.st_rdev), os.minor(sb.st_rdev)))
        if not args.no_xattrs:
            xa = self.A.xattrs(rel, ta == "lnk")
            xb = self.B.xattrs(rel, ta == "lnk")
            if xa is not None and xb is not None:
                for name in sorted(set(xa) | set(xb)):
                    va, vb = xa.get(name), xb.get(name)
                    if va != vb:
                        self.diff(rel, "xattr " + escape(name), show_bytes(va), show_bytes(vb))

    def compare_links(self, skipped):
        def groups(entries):
            by_ino = {}
            for rel, st in entries.items():
                if stat.S_ISREG(st.st_mode) and not skipped(rel):
                    by_ino.setdefault((st.st_dev, st.st_ino), []).append(rel)
            out = {}
            for rels in by_ino.values():
                g = tuple(sorted(rels))
                for r in rels:
                    out[r] = g
            return out

        ga, gb = groups(self.A.entries), groups(self.B.entries)
        seen = set()
        for rel in sorted(set(ga) & set(gb)):
            a, b = ga[rel], gb[rel]
            if a == b or (a, b) in seen:
                continue
            seen.add((a, b))
            if len(a) == 1 and len(b) == 1:
                continue
            fmt = lambda g: "{" + ", ".join(show_path(r) for r in g) + "}"
            self.diff(rel, "hard-link group", fmt(a), fmt(b))


def parse_types(s):
    out = set()
    for t in s.split(","):
        t = t.strip().lower()
        if not t:
            continue
        t = TYPE_ALIASES.get(t, t)
        if t not in TYPES.values():
            raise argparse.ArgumentTypeError("unknown type %r (use %s)" % (
                t, ",".join(sorted(TYPES.values()))))
        out.add(t)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("a")
    ap.add_argument("b", nargs="+")
    ap.add_argument("--no-owner", action="store_true", help="do not compare uid/gid")
    ap.add_argument("--no-xattrs", action="store_true", help="do not compare xattrs")
    ap.add_argument("--no-mtime", action="store_true", help="do not compare mtimes")
    ap.add_argument("--mtime-seconds", action="store_true",
                    help="compare mtimes in whole seconds only")
    ap.add_argument("--ignore-root-mtime", action="store_true",
                    help="do not compare the mtimes of the two roots")
    ap.add_argument("--no-hardlinks", action="store_true",
                    help="do not compare hard-link groups or nlink")
    ap.add_argument("--contents-only", action="store_true",
                    help="compare only names, types, sizes, contents and symlink targets")
    ap.add_argument("--skip-types", type=parse_types, default=set(), metavar="TYPES",
                    help="comma-separated types to leave out: reg,dir,lnk,chr,blk,fifo,sock")
    ap.add_argument("--limit", type=int, default=None, metavar="N",
                    help="print at most N difference lines")
    ap.add_argument("--label", action="store_true",
                    help="prefix each comparison's lines with its B tree (implied by several B trees)")
    args = ap.parse_args(argv)
    if args.contents_only:
        args.no_owner = args.no_xattrs = args.no_mtime = args.no_hardlinks = True

    for root in [args.a] + args.b:
        try:
            st = os.stat(root)
        except OSError as ex:
            print("treecmp: %s: %s" % (root, ex.strerror), file=sys.stderr)
            return 2
        if not stat.S_ISDIR(st.st_mode):
            print("treecmp: %s: not a directory" % root, file=sys.stderr)
            return 2
    a = Tree(args.a)
    a_errors = list(a.scan())
    rc = 0
    for b_root in args.b:
        b = Tree(b_root)
        label = "%s: " % b_root if len(args.b) > 1 or args.label else ""
        c = Comparer(a, b, args, label)
        for rel, msg in a_errors:
            c.diff(rel, "error in A", raw=msg)
        for rel, msg in b.scan():
            c.diff(rel, "error in B", raw=msg)
        compared = c.run()
        if c.printed < c.ndiff:
            print("treecmp: %s(%d more difference lines not shown)" % (label, c.ndiff - c.printed))
        print("treecmp: %s%d entries compared, %d differences" % (label, compared, c.ndiff))
        sys.stdout.flush()
        if c.ndiff:
            rc = 1
    return rc


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        sys.exit(1)
