#include "reader/fsck.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "format/constants.h"
#include "format/dirent.h"
#include "reader/image.h"
#include "util/work_queue.h"

namespace erofs::reader {
namespace {

// Files larger than this are checked in pieces of this size by several workers at once. The
// pieces do not depend on the number of workers, so neither do the byte counts.
constexpr uint64_t kPieceBytes = 8 << 20;
constexpr size_t kQueuedPerWorker = 4;
// Files go to a worker in batches of up to this many or this many bytes: handing over each on its
// own would cost a wake-up per file.
constexpr size_t kBatchFiles = 64;
constexpr uint64_t kBatchBytes = 1 << 20;

struct Piece {
  uint64_t bytes = 0;  // checked before the error, holes included
  std::optional<std::string> error;
};

// The data check of a large file; its pieces finish in any order, the last one reports.
struct FileCheck {
  std::atomic<int64_t> pending{1};  // pieces in flight, plus one while the walker adds them
  std::mutex mutex;
  std::map<uint64_t, Piece> pieces;  // by start
};

struct DataJob {
  uint64_t seq = 0;  // the file's place among the problems
  std::string path;
  Inode ino;
  std::shared_ptr<FileCheck> file;  // a piece of a large file; none for a whole small one
  uint64_t from = 0, to = 0;
};

class Checker {
 public:
  Checker(const Image& img, const FsckOptions& o, FsckReport& r)
      : img_(img), opt_(o), report_(r),
        workers_(o.workers ? o.workers : 2 * std::max(1u, std::thread::hardware_concurrency())),
        jobs_(workers_ * kQueuedPerWorker) {}

  void run();

 private:
  struct Counts {
    uint32_t nlink = 0, dentries = 0;
  };

  void problem(const std::string& path, const std::string& what) { add_problem(next_seq_++, path + ": " + what); }
  void add_problem(uint64_t seq, std::string text);
  std::optional<Inode> load(uint64_t nid, const std::string& path);
  void check_inode(const Inode& ino, const std::string& path);
  void check_data(const Inode& ino, const std::string& path);
  void queue(DataJob job);
  void flush();
  void run_job(std::vector<uint8_t>& buf, const DataJob& job);
  Piece check_piece(std::vector<uint8_t>& buf, const Inode& ino, uint64_t from, uint64_t to) const;
  void piece_done(const DataJob& job, Piece piece);
  void report(const DataJob& job, const Piece& piece);
  void check_dir(const Inode& dir, uint64_t parent, const std::string& path);
  void check_link_counts(uint64_t root);
  void find_paths(const Inode& dir, const std::string& path, std::set<uint64_t>& active, std::set<uint64_t>& done,
                  std::map<uint64_t, std::string>& wanted) const;

  const Image& img_;
  const FsckOptions& opt_;
  FsckReport& report_;
  const unsigned workers_;
  util::WorkQueue<std::vector<DataJob>> jobs_;
  std::vector<uint8_t> inline_buf_;  // with one worker, the walker checks data itself
  std::vector<DataJob> batch_;       // not handed to a worker yet
  uint64_t batch_bytes_ = 0;

  // The walker's own.
  uint64_t next_seq_ = 0;
  std::set<uint64_t> active_, dirs_done_;
  std::unordered_map<uint64_t, Counts> links_;  // non-directories by nid

  std::mutex problems_mutex_;
  std::vector<std::pair<uint64_t, std::string>> problems_;  // by seq once sorted
  std::atomic<uint64_t> data_bytes_{0};
};

void Checker::run() {
  std::vector<std::thread> threads;
  if (workers_ > 1 && opt_.check_data)
    for (unsigned i = 0; i < workers_; ++i)
      threads.emplace_back([this] {
        std::vector<uint8_t> buf;
        for (std::vector<DataJob> batch; jobs_.pop(batch);)
          for (const DataJob& job : batch) run_job(buf, job);
      });
  const uint64_t root = img_.root_nid();
  if (std::optional<Inode> ino = load(root, "/")) {
    if (ino->is_dir())
      check_dir(*ino, root, "/");
    else
      problem("/", "root inode is not a directory");
  }
  flush();
  jobs_.close();
  for (auto& t : threads) t.join();
  check_link_counts(root);
  std::sort(problems_.begin(), problems_.end());
  if (problems_.size() > opt_.max_problems) problems_.resize(opt_.max_problems);
  for (auto& [seq, text] : problems_) report_.problems.push_back(std::move(text));
  report_.data_bytes = data_bytes_;
}

// Problems may come from any thread in any order: the first max_problems by their place in the
// walk are kept, and no more than twice that are ever held.
void Checker::add_problem(uint64_t seq, std::string text) {
  std::lock_guard l(problems_mutex_);
  problems_.emplace_back(seq, std::move(text));
  if (problems_.size() > 2 * opt_.max_problems) {
    std::sort(problems_.begin(), problems_.end());
    problems_.resize(opt_.max_problems);
  }
}

// Inodes named by several dentries are checked once.
std::optional<Inode> Checker::load(uint64_t nid, const std::string& path) {
  try {
    Inode ino = img_.inode(nid);
    if (ino.is_dir() || !links_.count(nid)) {
      ++report_.inodes;
      check_inode(ino, path);
    }
    return ino;
  } catch (const std::exception& e) {
    problem(path, fmt::format("inode {}: {}", nid, e.what()));
    return std::nullopt;
  }
}

void Checker::check_inode(const Inode& ino, const std::string& path) {
  try {
    img_.xattrs(ino);
    if (ino.is_symlink()) img_.readlink(ino);
    if (ino.is_reg()) {
      ++report_.files;
      if (opt_.check_data) check_data(ino, path);
    }
  } catch (const std::exception& e) {
    problem(path, e.what());
  }
}

// The file's problem keeps its place in the walk, whenever its pieces finish. A piece wholly
// inside a hole is not made (a hostile image may declare exabytes of one); its bytes count.
void Checker::check_data(const Inode& ino, const std::string& path) {
  DataJob job{next_seq_++, path, ino, nullptr, 0, ino.size};
  if (ino.size <= kPieceBytes) return queue(std::move(job));
  job.file = std::make_shared<FileCheck>();
  try {
    for (uint64_t at = 0; at < ino.size;) {
      const Extent e = img_.extent_at(ino, at);
      if (e.kind == Extent::Kind::Hole && e.offset + e.length >= at + kPieceBytes) {
        const uint64_t next = (e.offset + e.length) / kPieceBytes * kPieceBytes;
        std::lock_guard l(job.file->mutex);
        job.file->pieces[at].bytes = next - at;
        at = next;
        continue;
      }
      DataJob piece = job;
      piece.from = at;
      piece.to = std::min(ino.size, at + kPieceBytes);
      job.file->pending.fetch_add(1);
      queue(std::move(piece));
      at = std::min(ino.size, at + kPieceBytes);
    }
  } catch (const std::exception& e) {
    std::lock_guard l(job.file->mutex);
    job.file->pieces[UINT64_MAX].error = e.what();
  }
  job.from = UINT64_MAX;  // the walker's hold, with no piece of its own
  piece_done(job, {});
}

void Checker::queue(DataJob job) {
  if (workers_ == 1) return run_job(inline_buf_, job);
  batch_bytes_ += job.to - job.from;
  batch_.push_back(std::move(job));
  if (batch_.size() >= kBatchFiles || batch_bytes_ >= kBatchBytes) flush();
}

void Checker::flush() {
  if (batch_.empty()) return;
  std::vector<DataJob> batch;
  batch.swap(batch_);
  batch_bytes_ = 0;
  jobs_.push_wait(std::move(batch));
}

void Checker::run_job(std::vector<uint8_t>& buf, const DataJob& job) {
  Piece piece = check_piece(buf, job.ino, job.from, job.to);
  if (job.file) return piece_done(job, std::move(piece));
  report(job, piece);
}

// Every index entry is followed as a reader at a random offset would, and every extent is read
// once: compressed ones judged whole, with `buf` as scratch (Image::check_data).
Piece Checker::check_piece(std::vector<uint8_t>& buf, const Inode& ino, uint64_t from, uint64_t to) const {
  Piece piece;
  try {
    img_.check_data(ino, from, to, buf, piece.bytes);
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    piece.error = e.what();
  }
  return piece;
}

void Checker::piece_done(const DataJob& job, Piece piece) {
  FileCheck& file = *job.file;
  {
    std::lock_guard l(file.mutex);
    if (job.from != UINT64_MAX) file.pieces[job.from] = std::move(piece);
  }
  if (file.pending.fetch_sub(1) != 1) return;
  // In file order, as one reader would have gone: the bytes up to the first error.
  Piece whole;
  for (auto& [at, p] : file.pieces) {
    whole.bytes += p.bytes;
    if (p.error) {
      whole.error = std::move(p.error);
      break;
    }
  }
  report(job, whole);
}

void Checker::report(const DataJob& job, const Piece& piece) {
  data_bytes_.fetch_add(piece.bytes);
  if (piece.error) add_problem(job.seq, job.path + ": " + *piece.error);
}

// Entries are taken as read_dir yields them, so a huge directory is never held whole.
void Checker::check_dir(const Inode& dir, uint64_t parent, const std::string& path) {
  ++report_.directories;
  if (!active_.insert(dir.nid).second) {
    problem(path, "directory loop: it contains one of its ancestors");
    return;
  }
  if (!dirs_done_.insert(dir.nid).second) {
    problem(path, "directory is linked from more than one place");
    active_.erase(dir.nid);
    return;
  }
  bool dot = false, dotdot = false;
  uint32_t subdirs = 0;
  try {
    img_.read_dir(dir, [&](const DirEntry& e) {
      if (e.name == ".") {
        dot = true;
        if (e.nid != dir.nid) problem(path, fmt::format("'.' points to inode {} instead of {}", e.nid, dir.nid));
        return true;
      }
      if (e.name == "..") {
        dotdot = true;
        if (e.nid != parent) problem(path, fmt::format("'..' points to inode {} instead of {}", e.nid, parent));
        return true;
      }
      const std::string child = path == "/" ? "/" + e.name : path + "/" + e.name;
      const std::optional<Inode> ino = load(e.nid, child);
      if (!ino) return true;
      if (format::file_type_of_mode(ino->mode) != format::FileType(e.file_type))
        problem(child, fmt::format("directory entry type {} does not match the inode's mode {:o}", e.file_type, ino->mode));
      if (ino->is_dir()) {
        ++subdirs;
        check_dir(*ino, dir.nid, child);
        return true;
      }
      auto [it, fresh] = links_.try_emplace(e.nid);
      if (fresh) it->second.nlink = ino->nlink;
      ++it->second.dentries;
      return true;
    });
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    problem(path, e.what());
  }
  const bool dot_omitted = dir.disk.flag;
  if (!dot && !dot_omitted) problem(path, "no '.' entry");
  if (!dotdot) problem(path, "no '..' entry");
  if (dir.nlink != 2 + subdirs && dir.nlink != 1)
    problem(path, fmt::format("nlink is {} but the directory has {} subdirectories", dir.nlink, subdirs));
  active_.erase(dir.nid);
}

// Link counts are reported by nid, naming each inode by its first path in the walk. Only counts
// are kept while walking (a path per file would cost more memory than all the rest); the paths
// of the few inodes that disagree are found by walking the directories again.
void Checker::check_link_counts(uint64_t root) {
  std::map<uint64_t, std::string> wanted;
  for (auto& [nid, c] : links_)
    if (c.nlink != c.dentries) wanted[nid];
  if (wanted.empty()) return;
  std::set<uint64_t> active, done;
  find_paths(img_.inode(root), "/", active, done, wanted);
  for (auto& [nid, path] : wanted) {
    const Counts& c = links_.at(nid);
    problem(path, fmt::format("nlink is {} but {} directory entries name it", c.nlink, c.dentries));
  }
}

// The same walk as check_dir, without the checks.
void Checker::find_paths(const Inode& dir, const std::string& path, std::set<uint64_t>& active,
                         std::set<uint64_t>& done, std::map<uint64_t, std::string>& wanted) const {
  if (!active.insert(dir.nid).second) return;
  if (!done.insert(dir.nid).second) {
    active.erase(dir.nid);
    return;
  }
  try {
    img_.read_dir(dir, [&](const DirEntry& e) {
      if (e.name == "." || e.name == "..") return true;
      const std::string child = path == "/" ? "/" + e.name : path + "/" + e.name;
      std::optional<Inode> ino;
      try {
        ino = img_.inode(e.nid);
      } catch (const std::exception&) {
        return true;
      }
      if (ino->is_dir()) {
        find_paths(*ino, child, active, done, wanted);
      } else if (auto it = wanted.find(e.nid); it != wanted.end() && it->second.empty()) {
        it->second = child;
      }
      return true;
    });
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception&) {
  }
  active.erase(dir.nid);
}

}  // namespace

FsckReport fsck_image(const std::string& path, const FsckOptions& options) {
  FsckReport report;
  std::unique_ptr<Image> img;
  try {
    // Sized for a check's walk: metadata is read in order, decoded extents are wanted again only
    // for fragments, which neighbouring files share.
    img = Image::open(path, {.pcluster_cache_bytes = 16ull << 20,
                             .metadata_cache_bytes = 16ull << 20,
                             .whole_extents = true,
                             .direct_reads = true});
  } catch (const CorruptError& e) {
    report.problems.push_back(e.what());
    return report;
  }
  Checker(*img, options, report).run();
  return report;
}

}  // namespace erofs::reader
