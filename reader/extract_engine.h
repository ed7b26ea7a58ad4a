// The extraction engine behind extract_image (reader/extract.h): one thread walks the tree and
// creates the directories (reader/extract.cpp), workers create everything else
// (reader/extract_jobs.cpp). Internal to the reader.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "reader/extract.h"
#include "reader/extract_entry.h"
#include "reader/image.h"
#include "util/work_queue.h"

namespace erofs::reader::extract_detail {

// Files larger than this are written in pieces of this size by several workers at once.
inline constexpr uint64_t kPieceBytes = 8 << 20;
// Batches waiting per worker: enough to keep each busy, few enough to bound what is held open.
inline constexpr size_t kQueuedPerWorker = 4;
// Entries of one directory go to a worker together, up to this many or this many bytes of data:
// handing over each file on its own would cost a wake-up per file, and workers in different
// directories do not wait for each other's directory locks.
inline constexpr size_t kBatchEntries = 64;
inline constexpr uint64_t kBatchBytes = 1 << 20;

struct Job;

// A directory whose entries are being created. Its attributes and times are set when the last
// of them is done (`pending` counts them, plus one for the walk of the directory itself).
struct Dir {
  Fd fd;
  std::string rel;  // below the destination ("" for its top)
  std::string path;
  std::optional<Inode> ino;  // none for the destination of a single extracted file
  std::shared_ptr<Dir> parent;
  std::atomic<int64_t> pending{1};
  std::vector<Job> batch;  // entries not handed to a worker yet (the walker's)
  uint64_t batch_bytes = 0;
};

// A large regular file, written in pieces; the last piece to finish completes it.
struct BigFile {
  Fd fd;
  std::atomic<int64_t> pending{1};  // pieces in flight, plus one while the walker adds them
  std::mutex mutex;
  std::optional<std::pair<uint64_t, std::string>> error;  // the failure at the lowest offset
};

struct Job {
  std::shared_ptr<Dir> parent;
  std::string name, path;
  Inode ino;
  std::shared_ptr<BigFile> big;  // set for a piece of a large file
  uint64_t from = 0, to = 0;
};

// Where the first name of a hard-linked inode stands, and the links waiting for it.
struct LinkTarget {
  std::string rel;
  enum class State { Pending, Done, Failed } state = State::Pending;
  std::vector<Job> waiting;
};

inline std::string child_of(const std::string& base, const std::string& name, const char* top) {
  return base == top ? (std::string(top) == "/" ? "/" : "") + name : base + "/" + name;
}

class Engine {
 public:
  Engine(const Image& img, const ExtractOptions& o)
      : img_(img), opt_(o), owners_(o.owners && ::geteuid() == 0),
        workers_(o.workers ? o.workers : std::max(1u, std::thread::hardware_concurrency())),
        jobs_(workers_ * kQueuedPerWorker) {}

  ExtractStats run(const std::string& dest);

 private:
  struct Worker {
    std::vector<uint8_t> buf;
  };

  void walk(const std::shared_ptr<Dir>& dir);
  void add_entry(const std::shared_ptr<Dir>& parent, const DirEntry& e);
  void add_directory(const std::shared_ptr<Dir>& parent, const std::string& name, const std::string& path,
                     const Inode& ino);
  void add_big_file(Job job);
  // Hands a job to the workers in its directory's batch; flush hands over the batch.
  void queue(Job job);
  void flush(Dir& dir);
  void submit(std::vector<Job> batch);
  void run_job(Worker& w, Job& job);
  // Runs `fn` for the entry at `path`: an error of the image is that entry's (reported; false),
  // one of the destination ends the extraction (thrown on).
  bool guarded(const std::string& path, const std::function<void()>& fn);
  void make_entry(Worker& w, const Job& job);
  void finish_piece(const Job& job);
  void entry_done(const Job& job, bool ok);
  void link(const Job& job, const std::string& target_rel);
  void release(std::shared_ptr<Dir> dir);
  void entry_error(const std::string& path, const std::string& what);
  void fatal(std::exception_ptr e);
  void report_progress(bool last);
  void say(const std::function<void(const std::string&)>& to, const std::string& line, std::atomic<uint64_t>& count);

  const Image& img_;
  const ExtractOptions& opt_;
  const bool owners_;
  const unsigned workers_;
  int root_ = -1;
  Worker inline_;  // with one worker, the walker runs every job itself

  // The walker's own: directories on the path from the top (loops) and seen so far (a directory
  // under two names).
  std::set<uint64_t> active_, filled_;

  std::optional<Attributes> attrs_;
  util::WorkQueue<std::vector<Job>> jobs_;
  std::mutex links_mutex_;
  std::unordered_map<uint64_t, LinkTarget> links_;

  std::mutex fatal_mutex_;
  std::exception_ptr fatal_;
  std::atomic<bool> stopped_{false};

  std::mutex say_mutex_;
  std::atomic<uint64_t> dirs_{0}, files_{0}, symlinks_{0}, specials_{0}, hard_links_{0}, bytes_{0};
  std::atomic<uint64_t> written_{0};  // for progress: also the pieces of files not complete yet
  std::atomic<uint64_t> errors_{0}, warnings_{0};
  std::chrono::steady_clock::time_point next_progress_;
};

}  // namespace erofs::reader::extract_detail
