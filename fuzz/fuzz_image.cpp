// fuzz_image: the input is an EROFS image. It is opened without superblock checksum verification
// (so mutations anywhere reach the structures behind the superblock) and walked completely from the
// root: every inode, directory, name lookup, path resolution, symlink, xattr, the extent list and
// stored runs of regular files, and every byte of every file, within fixed bounds on inodes,
// entries and bytes read.
//
// The reader may reject an image only with CorruptError, UnsupportedError or IoError; any other
// exception, a sanitizer report or a broken API promise (checked below) is a crash.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "fuzz/check.h"
#include "fuzz/input_file.h"
#include "reader/image.h"

namespace {

using erofs::fuzz::violation;
namespace reader = erofs::reader;

// Bounds per input, so one input costs milliseconds whatever sizes the image claims.
constexpr size_t kMaxInodes = 4096;
constexpr size_t kMaxEntriesPerDir = 8192;
constexpr size_t kMaxResolves = 256;
constexpr size_t kMaxRunsPerFile = 64;
constexpr uint64_t kMaxFileBytes = 1u << 20;
constexpr uint64_t kMaxTotalBytes = 8u << 20;
// An odd read size, so reads start and end inside blocks, extents and chunks.
constexpr size_t kReadChunk = 3001;

// Runs fn; an exception the reader documents for bad images ends only that step.
template <typename Fn>
bool guarded(Fn&& fn) {
  try {
    fn();
    return true;
  } catch (const reader::CorruptError&) {
  } catch (const reader::UnsupportedError&) {
  } catch (const reader::IoError&) {
  }
  return false;
}

class Walker {
 public:
  explicit Walker(const reader::Image& img) : img_(img), buf_(kReadChunk) {}

  void run() {
    queue_.push_back({img_.root_nid(), "/", true});
    while (!queue_.empty() && seen_.size() < kMaxInodes) {
      Item item = std::move(queue_.front());
      queue_.pop_front();
      if (!seen_.insert(item.nid).second) continue;
      guarded([&] { visit(item); });
    }
  }

 private:
  struct Item {
    uint64_t nid;
    std::string path;
    bool consistent;  // every directory on the path was read whole, so lookups along it must agree
  };

  void visit(const Item& item) {
    const reader::Inode ino = img_.inode(item.nid);
    if (ino.nid != item.nid) violation("inode({}) returned nid {}", item.nid, ino.nid);

    guarded([&] {
      for (const reader::Xattr& x : img_.xattrs(ino))
        if (x.name.empty()) violation("nid {}: xattr with an empty name", ino.nid);
    });
    if (resolves_ < kMaxResolves) {
      ++resolves_;
      guarded([&] {
        const reader::Inode found = img_.resolve(item.path, false);
        if (item.consistent && found.nid != ino.nid)
          violation("resolve({}) gave nid {}, the walk reached nid {} there", item.path, found.nid, ino.nid);
      });
      if (ino.is_symlink()) guarded([&] { img_.resolve(item.path, true); });
    }
    if (ino.is_symlink()) {
      guarded([&] {
        const std::string target = img_.readlink(ino);
        if (target.size() != ino.size)
          violation("nid {}: readlink gave {} bytes for a symlink of {}", ino.nid, target.size(), ino.size);
      });
    }
    if (ino.is_dir()) walk_dir(ino, item);
    if (ino.is_reg() && ino.size <= kMaxFileBytes) check_extents(ino);
    if (ino.is_reg()) check_stored_runs(ino);
    read_data(ino);
  }

  void walk_dir(const reader::Inode& dir, const Item& item) {
    std::vector<reader::DirEntry> entries;
    bool whole = guarded([&] {
      img_.read_dir(dir, [&](const reader::DirEntry& e) {
        entries.push_back(e);
        return entries.size() < kMaxEntriesPerDir;
      });
    });
    whole = whole && entries.size() < kMaxEntriesPerDir;
    for (const reader::DirEntry& e : entries) {
      guarded([&] {
        const auto found = img_.lookup(dir, e.name);
        // read_dir accepted every block, so the binary search must find each name it listed.
        if (whole && (!found || found->nid != e.nid || found->file_type != e.file_type))
          violation("nid {}: read_dir lists '{}' (nid {}), lookup gives {}", dir.nid, e.name, e.nid,
                    found ? std::to_string(found->nid) : std::string("nothing"));
      });
      if (e.name == "." || e.name == "..") continue;
      const std::string child = item.path == "/" ? "/" + e.name : item.path + "/" + e.name;
      queue_.push_back({e.nid, child, item.consistent && whole});
    }
  }

  // extents() covers the file from 0 to its size, each run holding the byte after the previous one
  // (runs may overlap in a hostile compressed map, but never leave a gap).
  void check_extents(const reader::Inode& ino) {
    guarded([&] {
      const std::vector<reader::Extent> extents = img_.extents(ino);
      uint64_t end = 0;
      for (const reader::Extent& e : extents) {
        if (e.length == 0 || e.offset > end || e.offset + e.length <= end || e.offset + e.length > ino.size)
          violation("nid {}: extent [{}, +{}) after byte {} of {}", ino.nid, e.offset, e.length, end, ino.size);
        end = e.offset + e.length;
      }
      if (end != ino.size) violation("nid {}: extents end at {} of {} bytes", ino.nid, end, ino.size);
    });
  }

  // stored_run() names bytes of the image file; they must be the bytes read() returns there.
  void check_stored_runs(const reader::Inode& ino) {
    std::vector<uint8_t> raw(kReadChunk), data(kReadChunk);
    const uint64_t limit = std::min<uint64_t>(ino.size, kMaxFileBytes);
    for (uint64_t off = 0, steps = 0; off < limit && steps < kMaxRunsPerFile; ++steps) {
      std::optional<reader::Image::StoredRun> run;
      if (!guarded([&] { run = img_.stored_run(ino, off); })) return;
      if (!run) {
        off += img_.block_size() - off % img_.block_size();
        continue;
      }
      if (run->length == 0 || run->length > ino.size - off || run->position + run->length > img_.image_size())
        violation("nid {}: stored run at {} of {} bytes: {} bytes at image byte {} (image of {})", ino.nid, off,
                  ino.size, run->length, run->position, img_.image_size());
      const size_t n = size_t(std::min<uint64_t>(run->length, kReadChunk));
      size_t got = 0;
      if (guarded([&] { img_.read_raw(run->position, std::span(raw).first(n)); }) &&
          guarded([&] { got = img_.read(ino, off, std::span(data).first(n)); }) &&
          (got != n || std::memcmp(raw.data(), data.data(), n) != 0))
        violation("nid {}: the {} bytes at {} differ from the stored run at image byte {}", ino.nid, n, off,
                  run->position);
      off += run->length;
    }
  }

  void read_data(const reader::Inode& ino) {
    uint64_t limit = std::min<uint64_t>(ino.size, kMaxFileBytes);
    for (uint64_t off = 0; off < limit && total_ < kMaxTotalBytes;) {
      size_t n = 0;
      if (!guarded([&] { n = img_.read(ino, off, buf_); })) return;
      const uint64_t want = std::min<uint64_t>(buf_.size(), ino.size - off);
      if (n != want)
        violation("nid {}: read of {} bytes at {} of {} returned {}", ino.nid, buf_.size(), off, ino.size, n);
      off += n;
      total_ += n;
    }
    // Reads at or past the end return nothing.
    guarded([&] {
      if (size_t n = img_.read(ino, ino.size, buf_); n != 0)
        violation("nid {}: read at the end of {} bytes returned {}", ino.nid, ino.size, n);
    });
  }

  const reader::Image& img_;
  std::vector<uint8_t> buf_;
  std::deque<Item> queue_;
  std::unordered_set<uint64_t> seen_;
  size_t resolves_ = 0;
  uint64_t total_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static erofs::fuzz::InputFile file;
  const std::string& path = file.put(data, size);
  reader::OpenOptions options;
  options.verify_checksum = false;
  options.pcluster_cache_bytes = 1u << 20;  // small, so eviction runs too
  std::unique_ptr<reader::Image> img;
  if (!guarded([&] { img = reader::Image::open(path, options); })) return 0;
  Walker(*img).run();
  return 0;
}
