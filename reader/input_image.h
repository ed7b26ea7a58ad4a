// The image file the reader reads, with pread, and where asked, through a mapping.
//
// With direct reads asked for, large reads of ranges the page cache does not hold go around it
// (O_DIRECT): a check or an extraction reads each pcluster once, so caching the image costs a
// fresh page per 4 KiB read and saves nothing. On a 2-core VM a cold read of a 181 MB image took 0.30 s of system time through
// the cache and 0.01 s around it. Ranges the cache holds (a warm image, or one a read-ahead hint
// asked for) are read from it, since that is faster still.
//
// With mapped reads asked for, a random reader's pclusters are decoded straight from a mapping of
// the file: no copy of each pcluster out of the page cache, and exactly its pages read from the
// disk. A page the mapping cannot give (the file truncated under it, a failing disk) raises
// SIGBUS, which reader/mapping_faults.h turns into a count: the read is then made again with
// pread, which reports the error, and the mapping is not used again.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

namespace erofs::reader {

class InputImage {
 public:
  struct Access {
    bool direct = false;  // large reads of uncached ranges may go around the page cache
    bool mapped = false;  // read_mapped may read through a mapping
  };
  // Throws IoError when the file cannot be opened or sized. What `access` asks is used where the
  // file and the system allow it, and is otherwise left out.
  InputImage(const std::string& path, Access access);
  ~InputImage();
  InputImage(const InputImage&) = delete;
  InputImage& operator=(const InputImage&) = delete;

  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  int fd() const { return fd_; }

  // The one raw accessor: reads exactly buf.size() bytes at `offset`. A range outside the file is
  // a CorruptError (the image pointed there); a failing or short pread is an IoError.
  void read(uint64_t offset, std::span<uint8_t> buf) const;
  // With mapped reads: calls use() with the bytes [offset, offset + length) as the mapping shows
  // them, and returns true. Returns false, having called use() or not, when the mapping cannot
  // serve: none, a range shorter than kMappedFrom or outside the file, or a fault in the mapping
  // since it was made. Then read() is the way, and reports the error. An exception from use() passes through unless a
  // fault may have caused it (then false).
  bool read_mapped(uint64_t offset, size_t length, const std::function<void(std::span<const uint8_t>)>& use) const;
  // Starts reading [offset, offset + length) into the page cache without waiting for it: reads
  // that follow find their bytes arrived or on the way. Only a hint; nothing fails.
  void will_need(uint64_t offset, uint64_t length) const;
  // pread calls so far, by every thread (for tests and profiles: what the caches save).
  uint64_t reads() const { return reads_.load(std::memory_order_relaxed); }
  // Those of them that went around the page cache.
  uint64_t direct_reads() const { return direct_reads_.load(std::memory_order_relaxed); }
  // read_mapped calls that the mapping served (for tests).
  uint64_t mapped_reads() const { return mapped_reads_.load(std::memory_order_relaxed); }
  // will_need calls so far (for tests).
  uint64_t hints() const { return hints_.load(std::memory_order_relaxed); }

  // Reads at least this long may go around the page cache; shorter ones are random reads of small
  // pclusters or metadata, where the cache's read-ahead helps.
  static constexpr size_t kDirectFrom = 32 << 10;
  // read_mapped serves ranges at least this long. A copy of a shorter one costs less than asking
  // for its pages and mapping them: reading every block of the 10^9-byte file's 4 KiB-pcluster
  // image at random through FUSE took 9.9 s with its pclusters mapped, 7.0-8.0 s copied.
  static constexpr size_t kMappedFrom = 32 << 10;
  // Offsets, lengths and buffer addresses of reads around the cache are multiples of this: every
  // device with 512- or 4096-byte sectors takes them. A filesystem that asks more refuses the
  // first such read, and the image is read through the cache from then on.
  static constexpr uint64_t kDirectAlign = 4096;

 private:
  // The mapping mincore and read_mapped use; false when there is none.
  bool map_file();
  void open_direct();
  // Reads buf at offset around the page cache; false when it cannot (then nothing was counted as
  // read and the caller reads through the cache, which reports any error).
  bool read_direct(uint64_t offset, std::span<uint8_t> buf) const;
  // Every page of [offset, offset + length) is in the page cache.
  bool cached(uint64_t offset, uint64_t length) const;

  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  int direct_fd_ = -1;            // the same file opened with O_DIRECT; -1 when not allowed
  void* map_ = nullptr;           // the file mapped: mincore says what is cached, read_mapped reads it
  std::atomic<uint64_t>* map_faults_ = nullptr;  // raised by SIGBUS in map_; set: read_mapped may use it
  // Mapped bytes used since the mapping's pages were last let go (see read_mapped).
  mutable std::atomic<uint64_t> mapped_since_drop_{0};
  uint64_t page_ = 4096;
  mutable std::atomic<bool> direct_works_{true};  // cleared when the filesystem refuses a read
  mutable std::atomic<uint64_t> reads_{0};
  mutable std::atomic<uint64_t> direct_reads_{0};
  mutable std::atomic<uint64_t> mapped_reads_{0};
  mutable std::atomic<uint64_t> hints_{0};
};

}  // namespace erofs::reader
