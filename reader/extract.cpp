// The extraction engine's walk: directories, entries handed to the workers, large files cut into
// pieces (reader/extract_engine.h).
#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <thread>

#include <fmt/format.h>

#include "reader/extract_engine.h"

namespace erofs::reader {
namespace extract_detail {


ExtractStats Engine::run(const std::string& dest) {
  if (::mkdir(dest.c_str(), 0755) != 0 && errno != EEXIST) throw sys_error("cannot create " + dest, errno);
  const int fd = ::open(dest.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ELOOP || errno == ENOTDIR)
      throw DestinationError("destination " + dest + " is not a directory (symlinks are not followed)", ENOTDIR);
    throw sys_error("cannot open " + dest, errno);
  }
  auto top = std::make_shared<Dir>();
  top->fd = Fd(fd);
  root_ = fd;
  attrs_.emplace(img_, owners_, opt_.xattrs, fd);
  const Inode ino = img_.resolve(opt_.subtree);
  next_progress_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(opt_.progress_interval_ms);

  std::vector<std::thread> threads;
  if (workers_ > 1)
    for (unsigned i = 0; i < workers_; ++i)
      threads.emplace_back([this] {
        Worker w;
        for (std::vector<Job> batch; jobs_.pop(batch);)
          for (Job& job : batch) run_job(w, job);
      });
  try {
    if (ino.is_dir()) {
      top->ino = ino;
      top->path.assign(1, '/');
      active_.insert(ino.nid);
      filled_.insert(ino.nid);
      walk(top);
    } else {
      const auto slash = opt_.subtree.find_last_of('/');
      Job job;
      job.parent = top;
      job.name = slash == std::string::npos ? opt_.subtree : opt_.subtree.substr(slash + 1);
      job.path = opt_.subtree;
      job.ino = ino;
      top->pending.fetch_add(1);
      submit({std::move(job)});
    }
  } catch (...) {
    fatal(std::current_exception());
  }
  release(top);  // the walk's own hold
  jobs_.close();
  for (auto& t : threads) t.join();
  if (fatal_) std::rethrow_exception(fatal_);
  report_progress(true);
  return {dirs_, files_, symlinks_, specials_, hard_links_, bytes_, errors_, warnings_, workers_};
}

// Entries are taken as read_dir yields them, so a huge directory is never held whole.
void Engine::walk(const std::shared_ptr<Dir>& dir) {
  try {
    img_.read_dir(*dir->ino, [&](const DirEntry& e) {
      if (stopped_) throw DestinationError("stopped", ECANCELED);  // replaced by the first fatal error
      if (e.name != "." && e.name != "..") add_entry(dir, e);
      report_progress(false);
      return true;
    });
  } catch (...) {
    // An error here ends the extraction. The jobs not handed over go now: each holds its
    // directory, which holds them, and neither would ever be freed.
    dir->batch.clear();
    throw;
  }
  flush(*dir);
}

void Engine::add_entry(const std::shared_ptr<Dir>& parent, const DirEntry& e) {
  // The reader rejects such names already; this keeps extraction safe on its own.
  if (e.name.empty() || e.name == "." || e.name == ".." || e.name.find('/') != std::string::npos ||
      e.name.find('\0') != std::string::npos)
    throw std::runtime_error(fmt::format("{}: unsafe name in the image", parent->path));
  Job job;
  job.parent = parent;
  job.name = e.name;
  job.path = child_of(parent->path, e.name, "/");
  try {
    job.ino = img_.inode(e.nid);
  } catch (const DestinationError&) {
    throw;
  } catch (const std::exception& x) {
    return entry_error(job.path, x.what());
  }
  if (job.ino.is_dir()) return add_directory(parent, e.name, job.path, job.ino);
  parent->pending.fetch_add(1);
  if (job.ino.nlink > 1) {
    std::optional<LinkTarget> known;  // the target is done (or failed) already
    {
      std::lock_guard l(links_mutex_);
      auto [it, first] = links_.try_emplace(job.ino.nid);
      if (first) {
        it->second.rel = child_of(parent->rel, e.name, "");
      } else if (it->second.state == LinkTarget::State::Pending) {
        it->second.waiting.push_back(std::move(job));
        return;
      } else {
        known = LinkTarget{it->second.rel, it->second.state, {}};
      }
    }
    if (known) {
      // Failed: the target's error was reported; its other names go with it.
      if (known->state == LinkTarget::State::Done) link(job, known->rel);
      release(parent);
      return;
    }
  }
  if (job.ino.is_reg() && job.ino.size > kPieceBytes && workers_ > 1) return add_big_file(std::move(job));
  queue(std::move(job));
}

void Engine::add_directory(const std::shared_ptr<Dir>& parent, const std::string& name, const std::string& path,
                           const Inode& ino) {
  if (!active_.insert(ino.nid).second) throw std::runtime_error(path + ": directory loop in the image");
  // A directory under two names would be extracted twice, and nested such links multiply (a few
  // dozen directories can stand for millions of paths): EROFS has no hard-linked directories.
  if (!filled_.insert(ino.nid).second)
    throw std::runtime_error(path + ": directory is linked from more than one place in the image");
  if (::mkdirat(parent->fd.get(), name.c_str(), 0700) != 0) throw sys_error("cannot create directory " + path, errno);
  const int fd = ::openat(parent->fd.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) throw sys_error("cannot open " + path, errno);
  auto dir = std::make_shared<Dir>();
  dir->fd = Fd(fd);
  dir->rel = child_of(parent->rel, name, "");
  dir->path = path;
  dir->ino = ino;
  dir->parent = parent;
  parent->pending.fetch_add(1);
  dirs_.fetch_add(1);
  walk(dir);
  active_.erase(ino.nid);
  release(dir);  // the walk's hold
}

// Pieces end where the extents starting in them end; a piece wholly inside a hole is not made
// (a hostile image may declare exabytes of one).
void Engine::add_big_file(Job job) {
  const int fd =
      ::openat(job.parent->fd.get(), job.name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) throw sys_error("cannot create " + job.path, errno);
  job.big = std::make_shared<BigFile>();
  job.big->fd = Fd(fd);
  try {
    for (uint64_t at = 0; at < job.ino.size;) {
      const Extent e = img_.extent_at(job.ino, at);
      if (e.kind == Extent::Kind::Hole && e.offset + e.length >= at + kPieceBytes) {
        at = (e.offset + e.length) / kPieceBytes * kPieceBytes;
        continue;
      }
      Job piece = job;
      piece.from = at;
      piece.to = std::min(job.ino.size, at + kPieceBytes);
      job.big->pending.fetch_add(1);
      submit({std::move(piece)});
      at += kPieceBytes;
      report_progress(false);
    }
  } catch (const DestinationError&) {
    throw;
  } catch (const std::exception& x) {
    std::lock_guard l(job.big->mutex);
    job.big->error = {UINT64_MAX, x.what()};
  }
  if (job.big->pending.fetch_sub(1) == 1) finish_piece(job);
}

void Engine::queue(Job job) {
  Dir& dir = *job.parent;
  if (job.ino.is_reg()) dir.batch_bytes += job.ino.size;
  dir.batch.push_back(std::move(job));
  if (dir.batch.size() >= kBatchEntries || dir.batch_bytes >= kBatchBytes) flush(dir);
}

void Engine::flush(Dir& dir) {
  if (dir.batch.empty()) return;
  std::vector<Job> batch;
  batch.swap(dir.batch);
  dir.batch_bytes = 0;
  submit(std::move(batch));
}

void Engine::submit(std::vector<Job> batch) {
  if (workers_ == 1) {
    for (Job& job : batch) run_job(inline_, job);
    return;
  }
  if (!jobs_.push_wait(std::move(batch))) throw DestinationError("stopped", ECANCELED);  // replaced by the first fatal error
}

}  // namespace extract_detail

ExtractStats extract_image(const Image& image, const std::string& dest, const ExtractOptions& options) {
  return extract_detail::Engine(image, options).run(dest);
}

}  // namespace erofs::reader
