#define FUSE_USE_VERSION 35
#include "fuse/fuse_driver.h"

#include <fuse3/fuse_lowlevel.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstdarg>
#include <cstdio>
#include <climits>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include <fmt/format.h>

#include "format/constants.h"
#include "fuse/page_store.h"
#include "fuse/readahead.h"
#include "util/task_pool.h"
#include "reader/image.h"

namespace erofs::fuse {
namespace {

// The image never changes: the kernel may cache names and attributes for as long as it likes.
constexpr double kForever = 365.0 * 24 * 3600;
// Reads from this size on are decoded on the decoders' threads (a hand-over costs a wake-up:
// small reads are cheaper answered at once).
constexpr uint64_t kDecodeElsewhereBytes = 128 << 10;
constexpr size_t kDecodesQueued = 64;

struct Fs {
  std::unique_ptr<reader::Image> image;
  uint64_t root_nid = 0;
  std::unique_ptr<Readahead> readahead;
  std::unique_ptr<PageStore> page_store;
  std::unique_ptr<util::TaskPool> decoders;
  std::string mountpoint;
  uint64_t kernel_readahead_bytes = 0;
  uint32_t max_read = 0;  // -o max_read=, which INIT must repeat or libfuse ends the session
  std::once_flag tuned;  // the kernel's readahead window, set on the first request after INIT
  // The kernel opens files and directories without asking (set at INIT when it can): no OPEN,
  // RELEASE, OPENDIR or RELEASEDIR request, and their pages and listings stay cached.
  bool no_open = false, no_opendir = false;
};

void set_kernel_readahead(const std::string& mountpoint, uint64_t bytes);

Fs& fs_of(fuse_req_t req) { return *static_cast<Fs*>(fuse_req_userdata(req)); }

// FUSE's root is inode 1; every other nid is shifted past it so no two collide.
fuse_ino_t to_ino(const Fs& fs, uint64_t nid) { return nid == fs.root_nid ? FUSE_ROOT_ID : fuse_ino_t(nid + 2); }
uint64_t to_nid(const Fs& fs, fuse_ino_t ino) { return ino == FUSE_ROOT_ID ? fs.root_nid : uint64_t(ino - 2); }

struct stat stat_of(const reader::Inode& ino, uint32_t block_size) {
  struct stat st {};
  st.st_ino = ino.nid;  // as the kernel driver reports it
  st.st_mode = ino.mode;
  st.st_nlink = ino.nlink;
  st.st_uid = ino.uid;
  st.st_gid = ino.gid;
  st.st_size = off_t(ino.size);
  st.st_blksize = block_size;
  st.st_blocks = blkcnt_t((ino.size + 511) / 512);
  st.st_rdev = makedev(ino.rdev_major, ino.rdev_minor);
  st.st_mtim = {ino.mtime, long(ino.mtime_nsec)};
  st.st_atim = st.st_ctim = st.st_mtim;
  return st;
}

// Every failure of the reader becomes an errno for the caller: a damaged image gives EIO for that
// request only, and one line in the log.
template <class F>
void guarded(fuse_req_t req, const char* op, F&& body) {
  try {
    body();
  } catch (const reader::IoError& e) {
    fuse_reply_err(req, e.error ? e.error : EIO);
  } catch (const std::bad_alloc&) {
    fuse_reply_err(req, ENOMEM);
  } catch (const std::exception& e) {
    fmt::print(stderr, "erofs mount: {}: {}\n", op, e.what());
    fuse_reply_err(req, EIO);
  }
}

reader::Inode inode_of(fuse_req_t req, fuse_ino_t ino) {
  Fs& fs = fs_of(req);
  std::call_once(fs.tuned, [&] { set_kernel_readahead(fs.mountpoint, fs.kernel_readahead_bytes); });
  return fs.image->inode(to_nid(fs, ino));
}

void reply_entry(fuse_req_t req, const reader::Inode& ino) {
  Fs& fs = fs_of(req);
  fuse_entry_param e{};
  e.ino = to_ino(fs, ino.nid);
  e.attr = stat_of(ino, fs.image->block_size());
  e.attr_timeout = e.entry_timeout = kForever;
  fuse_reply_entry(req, &e);
}

void op_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  guarded(req, "lookup", [&] {
    Fs& fs = fs_of(req);
    reader::Inode dir = inode_of(req, parent);
    if (!dir.is_dir()) return (void)fuse_reply_err(req, ENOTDIR);
    auto e = fs.image->lookup(dir, name);
    if (!e) {
      fuse_entry_param neg{};  // remembered by the kernel as absent, for ever
      neg.entry_timeout = kForever;
      return (void)fuse_reply_entry(req, &neg);
    }
    reply_entry(req, fs.image->inode(e->nid));
  });
}

void op_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  guarded(req, "getattr", [&] {
    struct stat st = stat_of(inode_of(req, ino), fs_of(req).image->block_size());
    fuse_reply_attr(req, &st, kForever);
  });
}

void op_readlink(fuse_req_t req, fuse_ino_t ino) {
  guarded(req, "readlink", [&] {
    reader::Inode i = inode_of(req, ino);
    if (!i.is_symlink()) return (void)fuse_reply_err(req, EINVAL);
    fuse_reply_readlink(req, fs_of(req).image->readlink(i).c_str());
  });
}

void op_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  if (fs_of(req).no_open) return (void)fuse_reply_err(req, ENOSYS);  // "opened" from now on without asking
  if ((fi->flags & O_ACCMODE) != O_RDONLY) return (void)fuse_reply_err(req, EROFS);
  guarded(req, "open", [&] {
    reader::Inode i = inode_of(req, ino);
    if (i.is_dir()) return (void)fuse_reply_err(req, EISDIR);
    fi->keep_cache = 1;  // contents never change
    fi->fh = 0;
    fuse_reply_open(req, fi);
  });
}

// Bytes stored as they are in the image go to the kernel straight from the image file (spliced
// when the kernel allows it); holes and inline tails are read into memory.
void reply_stored(fuse_req_t req, const Fs& fs, const reader::Inode& i, uint64_t off, uint64_t end) {
  const uint32_t bs = fs.image->block_size();
  std::vector<fuse_buf> bufs;
  std::vector<std::vector<uint8_t>> memory;
  for (uint64_t pos = off; pos < end;) {
    if (auto run = fs.image->stored_run(i, pos)) {
      const uint64_t n = std::min(run->length, end - pos);
      fuse_buf b{};
      b.size = size_t(n);
      b.flags = fuse_buf_flags(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK | FUSE_BUF_FD_RETRY);
      b.fd = fs.image->file_descriptor();
      b.pos = off_t(run->position);
      bufs.push_back(b);
      pos += n;
      continue;
    }
    uint64_t stop = std::min(end, (pos / bs + 1) * bs);
    while (stop < end && !fs.image->stored_run(i, stop)) stop = std::min(end, stop + bs);
    auto& m = memory.emplace_back(size_t(stop - pos));
    fs.image->read(i, pos, m);
    fuse_buf b{};
    b.size = m.size();
    b.mem = m.data();
    bufs.push_back(b);
    pos = stop;
  }
  std::vector<char> storage(sizeof(fuse_bufvec) + bufs.size() * sizeof(fuse_buf));
  auto* vec = new (storage.data()) fuse_bufvec{};
  vec->count = bufs.size();
  std::copy(bufs.begin(), bufs.end(), vec->buf);
  fuse_reply_data(req, vec, FUSE_BUF_SPLICE_MOVE);
}

void serve_read(fuse_req_t req, Fs& fs, fuse_ino_t ino, const reader::Inode& i, uint64_t off, uint64_t n) {
  guarded(req, "read", [&] {
    // Decoded data goes to the kernel from the pcluster cache itself, without a copy here.
    const auto pieces = fs.image->read_shared(i, off, n);
    std::vector<iovec> iov;
    iov.reserve(pieces.size());
    size_t got = 0;
    for (const auto& p : pieces) {
      iov.push_back({const_cast<uint8_t*>(p.bytes.data()), p.bytes.size()});
      got += p.bytes.size();
    }
    fuse_reply_iov(req, iov.data(), int(iov.size()));
    if (fs.readahead) fs.readahead->after_read(i, off, got);
    if (fs.page_store && got) fs.page_store->after_read(ino, i, off, got);
  });
}

// Large reads of compressed data go to the decoders, so that the kernel's readahead requests
// (several at once) are decoded in parallel; everything else is answered on the thread that
// received it.
void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*) {
  guarded(req, "read", [&] {
    Fs& fs = fs_of(req);
    reader::Inode i = inode_of(req, ino);
    const uint64_t at = off < 0 ? 0 : uint64_t(off);
    const uint64_t n = std::min<uint64_t>(size, at >= i.size ? 0 : i.size - at);
    if (!format::is_compressed(i.layout())) {
      if (n) return reply_stored(req, fs, i, at, at + n);
    } else if (n >= kDecodeElsewhereBytes && fs.decoders &&
               fs.decoders->submit([req, &fs, ino, i, at, n] { serve_read(req, fs, ino, i, at, n); })) {
      return;
    }
    serve_read(req, fs, ino, i, at, n);
  });
}

void op_init(void* userdata, fuse_conn_info* conn) {
  Fs& fs = *static_cast<Fs*>(userdata);
  if (conn->capable & FUSE_CAP_SPLICE_WRITE) conn->want |= FUSE_CAP_SPLICE_WRITE;
  // Nothing is opened for writing (the mount is read-only, which the kernel enforces itself) and
  // no open needs state: the kernel may skip OPEN and OPENDIR, keeping the page cache and the
  // listings (its defaults when it does not ask).
  fs.no_open = conn->capable & FUSE_CAP_NO_OPEN_SUPPORT;
  fs.no_opendir = conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT;
  if (fs.no_open) conn->want |= FUSE_CAP_NO_OPEN_SUPPORT;
  if (fs.no_opendir) conn->want |= FUSE_CAP_NO_OPENDIR_SUPPORT;
  // Every listing carries the entries' attributes (READDIRPLUS, not only the first batch of a
  // directory as the kernel's adaptive mode does): a walker that stats what it lists (ls -l, tar,
  // find) then sends no LOOKUP for them, and attributes cost nothing extra here.
  conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
  // libfuse sizes the kernel's largest request (max_pages) from max_write: 1 MiB reads.
  conn->max_write = 1 << 20;
  if (fs.max_read) conn->max_read = fs.max_read;
}

// The kernel gives a FUSE mount a 128 KiB readahead window and lets the daemon only lower it (at
// INIT); raising it afterwards (sysfs, root only) turns a sequential reader's requests into large
// ones. The device number comes from mountinfo: stat() on the mount point would wait for us.
void set_kernel_readahead(const std::string& mountpoint, uint64_t bytes) {
  if (!bytes) return;
  std::ifstream info("/proc/self/mountinfo");
  for (std::string line; std::getline(info, line);) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, point;
    fields >> id >> parent >> dev >> root >> point;
    if (point != mountpoint || line.find(" - fuse.erofs ") == std::string::npos) continue;
    std::ofstream(fmt::format("/sys/class/bdi/{}/read_ahead_kb", dev)) << bytes / 1024 << "\n";
  }
}

// Listings need no handle: a readdir offset is a position in the directory (read_dir_at).
void op_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  if (fs_of(req).no_opendir) return (void)fuse_reply_err(req, ENOSYS);  // listed without opening from now on
  guarded(req, "opendir", [&] {
    if (!inode_of(req, ino).is_dir()) return (void)fuse_reply_err(req, ENOTDIR);
    fi->fh = 0;
    fi->keep_cache = 1;
    fi->cache_readdir = 1;
    fuse_reply_open(req, fi);
  });
}

void readdir_common(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, bool plus) {
  guarded(req, plus ? "readdirplus" : "readdir", [&] {
    Fs& fs = fs_of(req);
    const reader::Inode dir = inode_of(req, ino);
    std::vector<char> buf(size);
    size_t used = 0;
    fs.image->read_dir_at(dir, uint64_t(off), [&](const reader::DirEntry& e, uint64_t next) {
      size_t n;
      if (plus) {
        fuse_entry_param p{};
        if (e.name != "." && e.name != "..") {
          reader::Inode child = fs.image->inode(e.nid);
          p.ino = to_ino(fs, e.nid);
          p.attr = stat_of(child, fs.image->block_size());
          p.attr_timeout = p.entry_timeout = kForever;
        } else {
          p.attr.st_ino = e.nid;
          p.attr.st_mode = S_IFDIR;
        }
        n = fuse_add_direntry_plus(req, buf.data() + used, size - used, e.name.c_str(), &p, off_t(next));
      } else {
        struct stat st {};
        st.st_ino = e.nid;
        st.st_mode = uint32_t(e.file_type) == 2 ? S_IFDIR : 0;
        n = fuse_add_direntry(req, buf.data() + used, size - used, e.name.c_str(), &st, off_t(next));
      }
      if (n > size - used) return false;
      used += n;
      return true;
    });
    fuse_reply_buf(req, buf.data(), used);
  });
}

void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*) {
  readdir_common(req, ino, size, off, false);
}
void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*) {
  readdir_common(req, ino, size, off, true);
}

void op_statfs(fuse_req_t req, fuse_ino_t) {
  guarded(req, "statfs", [&] {
    Fs& fs = fs_of(req);
    const auto& sb = fs.image->superblock();
    struct statvfs st {};
    st.f_bsize = st.f_frsize = fs.image->block_size();
    st.f_blocks = sb.blocks();
    st.f_files = sb.inos;
    st.f_namemax = 255;
    st.f_flag = ST_RDONLY;
    fuse_reply_statfs(req, &st);
  });
}

void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  guarded(req, "getxattr", [&] {
    for (auto& x : fs_of(req).image->xattrs(inode_of(req, ino))) {
      if (x.name != name) continue;
      if (size == 0) return (void)fuse_reply_xattr(req, x.value.size());
      if (size < x.value.size()) return (void)fuse_reply_err(req, ERANGE);
      return (void)fuse_reply_buf(req, x.value.data(), x.value.size());
    }
    fuse_reply_err(req, ENODATA);
  });
}

void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  guarded(req, "listxattr", [&] {
    std::string names;
    for (auto& x : fs_of(req).image->xattrs(inode_of(req, ino))) names.append(x.name).push_back('\0');
    if (size == 0) return (void)fuse_reply_xattr(req, names.size());
    if (size < names.size()) return (void)fuse_reply_err(req, ERANGE);
    fuse_reply_buf(req, names.data(), names.size());
  });
}

void op_access(fuse_req_t req, fuse_ino_t ino, int mask) {
  if (mask & W_OK) return (void)fuse_reply_err(req, EROFS);
  guarded(req, "access", [&] {
    inode_of(req, ino);
    fuse_reply_err(req, 0);
  });
}

const fuse_lowlevel_ops kOps = [] {
  fuse_lowlevel_ops ops{};
  ops.init = op_init;
  ops.lookup = op_lookup;
  ops.getattr = op_getattr;
  ops.readlink = op_readlink;
  ops.open = op_open;
  ops.read = op_read;
  ops.opendir = op_opendir;
  ops.readdir = op_readdir;
  ops.readdirplus = op_readdirplus;
  ops.statfs = op_statfs;
  ops.getxattr = op_getxattr;
  ops.listxattr = op_listxattr;
  ops.access = op_access;
  return ops;
}();

// The session loop (libfuse's fuse_session_loop, less its sleep between requests): after each
// request the device is polled for `poll` (-o poll=, 100 us by default) before the loop sleeps in
// poll(). A client that waits for each answer (ls -l, random reads) sends its next request
// microseconds after the last answer; a daemon asleep by then must be woken, and on a virtual
// machine whose other processor idles that wake-up was most of a request's cost: ls -lR of the
// linux tree took 13.6-15.3 s sleeping, 4.9-5.0 s polling for 50 us (erofsfuse 1.9.3: 6.9-11.1
// s), with the same daemon CPU time (4.4-5.0 s), which the wake-ups had cost before; 4.6-6.5 s at
// the 100 us kept (bench/results/2026-12-02-vm-reader-compare-fuse-2).
// The polling thread yields between tries: the client it just answered is often woken on this
// thread's processor and would otherwise wait out the poll before it can send its next request
// (cold random 4 KiB reads of the 10^9-byte file: 170-215 us a read, 145 us yielding).
// The signals that end the session (libfuse's handlers) stay blocked in every thread but inside
// ppoll(), given the mask `sleeping` to sleep with: one arriving while the loop works waits for
// it, where a plain poll() could miss it and sleep on.
int serve(fuse_session* se, const sigset_t& sleeping, std::chrono::microseconds poll) {
  const int fd = fuse_session_fd(se);
  if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) return fuse_session_loop(se) == 0 ? 0 : 1;
  fuse_buf buf{};
  int res = 0;
  auto deadline = std::chrono::steady_clock::now();
  while (!fuse_session_exited(se)) {
    res = fuse_session_receive_buf(se, &buf);
    if (res == -EAGAIN) {
      if (std::chrono::steady_clock::now() < deadline) {
        sched_yield();
        continue;
      }
      pollfd p{fd, POLLIN, 0};
      ppoll(&p, 1, nullptr, &sleeping);  // a request, the device's end (unmount) or a signal
      continue;
    }
    if (res == -EINTR) continue;
    if (res <= 0) break;
    fuse_session_process_buf(se, &buf);
    deadline = std::chrono::steady_clock::now() + poll;
  }
  free(buf.mem);
  fuse_session_reset(se);
  // Unmounted (0) or ended by a signal (-EAGAIN, -EINTR: the last receive before the exit check):
  // a clean end. libfuse's loop called a signal an error.
  return res < 0 && res != -EAGAIN && res != -EINTR ? 1 : 0;
}

}  // namespace

// libfuse's own messages become our one-line errors. It may write one message in several
// calls, so text is collected until the newline.
static void log_to_stderr(enum fuse_log_level, const char* format, va_list ap) {
  thread_local std::string pending;
  char piece[1024];
  vsnprintf(piece, sizeof piece, format, ap);
  pending += piece;
  if (pending.empty() || pending.back() != '\n') return;
  pending.pop_back();
  fmt::print(stderr, "erofs mount: {}\n", pending);
  pending.clear();
}

int mount_and_serve(const MountOptions& o) {
  struct stat mp;
  if (::stat(o.mountpoint.c_str(), &mp) != 0) {
    fmt::print(stderr, "erofs mount: mount point {}: {}\n", o.mountpoint, std::strerror(errno));
    return 1;
  }
  if (!S_ISDIR(mp.st_mode)) {
    fmt::print(stderr, "erofs mount: mount point {}: not a directory\n", o.mountpoint);
    return 1;
  }
  fuse_set_log_func(log_to_stderr);
  Fs fs;
  try {
    reader::OpenOptions ro;
    ro.pcluster_cache_bytes = o.cache_bytes;
    ro.metadata_cache_bytes = o.meta_cache_bytes;
    // Replies come from zeroed buffers (compress::DecoderConfig::check_lz4_offsets); fsck checks.
    ro.check_lz4_offsets = false;
    ro.mapped_reads = true;
    fs.image = reader::Image::open(o.image, ro);
    fs.root_nid = fs.image->root_nid();
    fs.image->inode(fs.root_nid);
  } catch (const std::exception& e) {
    fmt::print(stderr, "erofs mount: {}: {}\n", o.image, e.what());
    return 1;
  }
  // Resolved now: daemonizing changes to "/".
  char real[PATH_MAX];
  fs.mountpoint = ::realpath(o.mountpoint.c_str(), real) ? real : o.mountpoint;
  fs.kernel_readahead_bytes = o.kernel_readahead_bytes;
  fs.max_read = o.max_read;

  std::vector<std::string> args = {"erofs", "-o", "ro,default_permissions,fsname=" + o.image + ",subtype=erofs"};
  for (auto& opt : o.fuse_options) {
    args.push_back("-o");
    args.push_back(opt);
  }
  if (o.debug) args.push_back("-d");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  fuse_args fargs = FUSE_ARGS_INIT(int(argv.size()), argv.data());

  fuse_session* se = fuse_session_new(&fargs, &kOps, sizeof kOps, &fs);
  if (!se) return 1;  // libfuse said why
  int rc = 1;
  if (fuse_set_signal_handlers(se) == 0) {
    if (fuse_session_mount(se, o.mountpoint.c_str()) == 0) {
      if (o.foreground || fuse_daemonize(0) == 0) {
        sigset_t stop, sleeping;
        sigemptyset(&stop);
        for (int sig : {SIGHUP, SIGINT, SIGTERM}) sigaddset(&stop, sig);
        pthread_sigmask(SIG_BLOCK, &stop, &sleeping);  // before any thread starts: they inherit it
        // Threads start only now: daemonizing forks, and a child keeps none of its parent's threads.
        if (o.readahead_bytes)
          fs.readahead = std::make_unique<Readahead>(*fs.image, o.readahead_threads, o.readahead_bytes);
        fs.page_store = std::make_unique<PageStore>(*fs.image, se);
        fs.decoders = std::make_unique<util::TaskPool>(std::max(1u, std::thread::hardware_concurrency()),
                                                       kDecodesQueued);
        // One thread receives every request and answers all but large decodes at once. A client
        // that waits for each answer (a tree walk, random reads) then wakes one thread per
        // request: libfuse's multithreaded loop hands consecutive requests to different threads,
        // and took twice the daemon's CPU time for `tar` of the linux tree.
        rc = serve(se, sleeping, std::chrono::microseconds(o.poll_us));
        fs.decoders.reset();  // answers the reads still queued
        fs.page_store.reset();
        fs.readahead.reset();
        pthread_sigmask(SIG_SETMASK, &sleeping, nullptr);
      }
      fuse_session_unmount(se);
    }
    fuse_remove_signal_handlers(se);
  }
  fuse_session_destroy(se);
  return rc;
}

}  // namespace erofs::fuse
