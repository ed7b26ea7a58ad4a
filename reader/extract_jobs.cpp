// The extraction engine's workers: files, symlinks, devices, pieces of large files, hard links,
// and directories completed once their entries are (reader/extract_engine.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>

#include <fmt/format.h>

#include "reader/extract_engine.h"

namespace erofs::reader::extract_detail {


void Engine::run_job(Worker& w, Job& job) {
  if (stopped_) return;  // nothing more is created once the extraction has failed
  try {
    if (!job.big) return make_entry(w, job);
    try {
      written_.fetch_add(copy_range(img_, job.big->fd.get(), job.ino, job.from, job.to, w.buf, job.path).covered);
    } catch (const DestinationError&) {
      throw;
    } catch (const std::exception& x) {
      std::lock_guard l(job.big->mutex);
      if (!job.big->error || job.from < job.big->error->first) job.big->error = {job.from, x.what()};
    }
    if (job.big->pending.fetch_sub(1) == 1) finish_piece(job);
  } catch (...) {
    fatal(std::current_exception());
  }
}

bool Engine::guarded(const std::string& path, const std::function<void()>& fn) {
  try {
    fn();
    return true;
  } catch (const DestinationError&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    entry_error(path, e.what());
    return false;
  }
}

void Engine::make_entry(Worker& w, const Job& job) {
  const Inode& ino = job.ino;
  const int dirfd = job.parent->fd.get();
  const char* n = job.name.c_str();
  auto warn = [&](const std::string& m) { say(opt_.warn, job.path + ": " + m, warnings_); };
  bool created = false;
  const bool ok = guarded(job.path, [&] {
    switch (ino.mode & S_IFMT) {
      case S_IFREG: {
        const uint32_t mode = attrs_->creation_mode(ino);
        Fd file(::openat(dirfd, n, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
        if (file.get() < 0) throw sys_error("cannot create " + job.path, errno);
        created = true;
        const Copied copied = copy_range(img_, file.get(), ino, 0, ino.size, w.buf, job.path);
        written_.fetch_add(copied.covered);
        // Sized by its last write, unless it ends in a hole.
        if (copied.end < ino.size && ::ftruncate(file.get(), off_t(ino.size)) != 0)
          throw sys_error("cannot write " + job.path, errno);
        attrs_->apply(file.get(), nullptr, ino, mode, warn);
        return;
      }
      case S_IFLNK: {
        const std::string target = img_.readlink(ino);
        if (::symlinkat(target.c_str(), dirfd, n) != 0) throw sys_error("cannot create symlink " + job.path, errno);
        break;
      }
      case S_IFCHR:
      case S_IFBLK:
      case S_IFIFO:
      case S_IFSOCK:
        if (::mknodat(dirfd, n, (ino.mode & S_IFMT) | 0600, makedev(ino.rdev_major, ino.rdev_minor)) != 0)
          throw sys_error("cannot create " + job.path, errno);
        break;
      default:
        throw CorruptError(fmt::format("unknown file type {:o}", ino.mode));
    }
    created = true;
    attrs_->apply(dirfd, n, ino, 0600, warn);
  });
  if (!ok && created) ::unlinkat(dirfd, n, 0);  // nothing of a damaged entry stays
  if (ok) {
    auto& count = S_ISREG(ino.mode) ? files_ : S_ISLNK(ino.mode) ? symlinks_ : specials_;
    count.fetch_add(1);
    if (S_ISREG(ino.mode)) bytes_.fetch_add(ino.size);
  }
  entry_done(job, ok);
}

void Engine::finish_piece(const Job& job) {
  BigFile& big = *job.big;
  bool ok = !big.error;
  if (ok) {
    ok = guarded(job.path, [&] {
      if (::ftruncate(big.fd.get(), off_t(job.ino.size)) != 0) throw sys_error("cannot write " + job.path, errno);
      attrs_->apply(big.fd.get(), nullptr, job.ino, 0600,
                    [&](const std::string& m) { say(opt_.warn, job.path + ": " + m, warnings_); });
    });
  } else {
    entry_error(job.path, big.error->second);
  }
  big.fd.reset();
  if (!ok) ::unlinkat(job.parent->fd.get(), job.name.c_str(), 0);
  if (ok) {
    files_.fetch_add(1);
    bytes_.fetch_add(job.ino.size);
  }
  entry_done(job, ok);
}

// Hard links wait for their target to be complete, and count as entries of their directory.
void Engine::entry_done(const Job& job, bool ok) {
  std::vector<Job> waiting;
  std::string rel;
  if (job.ino.nlink > 1) {
    std::lock_guard l(links_mutex_);
    if (auto it = links_.find(job.ino.nid); it != links_.end()) {
      it->second.state = ok ? LinkTarget::State::Done : LinkTarget::State::Failed;
      waiting.swap(it->second.waiting);
      rel = it->second.rel;
    }
  }
  for (const Job& w : waiting) {
    if (ok) link(w, rel);
    release(w.parent);
  }
  release(job.parent);
}

void Engine::link(const Job& job, const std::string& target_rel) {
  const auto slash = target_rel.find_last_of('/');
  const std::string parent = slash == std::string::npos ? "" : target_rel.substr(0, slash);
  const std::string base = slash == std::string::npos ? target_rel : target_rel.substr(slash + 1);
  Fd pfd(open_beneath(root_, parent));
  if (pfd.get() < 0) throw sys_error("cannot open " + parent, errno);
  if (::linkat(pfd.get(), base.c_str(), job.parent->fd.get(), job.name.c_str(), 0) != 0)
    throw sys_error("cannot link " + job.path, errno);
  hard_links_.fetch_add(1);
}

// A directory's attributes and times are set when its last entry is done; then it counts as
// done in its parent.
void Engine::release(std::shared_ptr<Dir> dir) {
  while (dir && dir->pending.fetch_sub(1) == 1) {
    if (!stopped_ && dir->ino)
      guarded(dir->path, [&] {
        attrs_->apply(dir->fd.get(), nullptr, *dir->ino, 0700,
                      [&](const std::string& m) { say(opt_.warn, dir->path + ": " + m, warnings_); });
      });
    dir->fd.reset();
    auto parent = dir->parent;
    dir = std::move(parent);
  }
}

void Engine::entry_error(const std::string& path, const std::string& what) { say(opt_.error, path + ": " + what, errors_); }

void Engine::fatal(std::exception_ptr e) {
  {
    std::lock_guard l(fatal_mutex_);
    if (!fatal_) fatal_ = e;
  }
  stopped_ = true;
  jobs_.cancel();
}

void Engine::say(const std::function<void(const std::string&)>& to, const std::string& line,
                 std::atomic<uint64_t>& count) {
  count.fetch_add(1);
  if (!to) return;
  std::lock_guard l(say_mutex_);
  to(line);
}

void Engine::report_progress(bool last) {
  if (!opt_.progress) return;
  const auto now = std::chrono::steady_clock::now();
  if (!last && now < next_progress_) return;
  next_progress_ = now + std::chrono::milliseconds(opt_.progress_interval_ms);
  opt_.progress({dirs_ + files_ + symlinks_ + specials_, img_.superblock().inos, written_});
}


}  // namespace erofs::reader::extract_detail
