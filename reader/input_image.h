// The image file the reader reads, with pread (its bytes are never read through a mapping: a
// failing disk must give an error, not SIGBUS).
//
// With direct reads asked for, large reads of ranges the page cache does not hold go around it
// (O_DIRECT): a check or an extraction reads each pcluster once, so caching the image costs a
// fresh page per 4 KiB read and saves nothing. On a 2-core VM a cold read of a 181 MB image took 0.30 s of system time through
// the cache and 0.01 s around it. Ranges the cache holds (a warm image, or one a read-ahead hint
// asked for) are read from it, since that is faster still.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>

namespace erofs::reader {

class InputImage {
 public:
  // Throws IoError when the file cannot be opened or sized. `direct_reads`: whether large reads of
  // uncached ranges may go around the page cache (where the filesystem allows it).
  InputImage(const std::string& path, bool direct_reads);
  ~InputImage();
  InputImage(const InputImage&) = delete;
  InputImage& operator=(const InputImage&) = delete;

  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  int fd() const { return fd_; }

  // The one raw accessor: reads exactly buf.size() bytes at `offset`. A range outside the file is
  // a CorruptError (the image pointed there); a failing or short pread is an IoError.
  void read(uint64_t offset, std::span<uint8_t> buf) const;
  // Starts reading [offset, offset + length) into the page cache without waiting for it: reads
  // that follow find their bytes arrived or on the way. Only a hint; nothing fails.
  void will_need(uint64_t offset, uint64_t length) const;
  // pread calls so far, by every thread (for tests and profiles: what the caches save).
  uint64_t reads() const { return reads_.load(std::memory_order_relaxed); }
  // Those of them that went around the page cache.
  uint64_t direct_reads() const { return direct_reads_.load(std::memory_order_relaxed); }
  // will_need calls so far (for tests).
  uint64_t hints() const { return hints_.load(std::memory_order_relaxed); }

  // Reads at least this long may go around the page cache; shorter ones are random reads of small
  // pclusters or metadata, where the cache's read-ahead helps.
  static constexpr size_t kDirectFrom = 32 << 10;
  // Offsets, lengths and buffer addresses of reads around the cache are multiples of this: every
  // device with 512- or 4096-byte sectors takes them. A filesystem that asks more refuses the
  // first such read, and the image is read through the cache from then on.
  static constexpr uint64_t kDirectAlign = 4096;

 private:
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
  void* map_ = nullptr;           // the file mapped, never touched: mincore says what is cached
  uint64_t page_ = 4096;
  mutable std::atomic<bool> direct_works_{true};  // cleared when the filesystem refuses a read
  mutable std::atomic<uint64_t> reads_{0};
  mutable std::atomic<uint64_t> direct_reads_{0};
  mutable std::atomic<uint64_t> hints_{0};
};

}  // namespace erofs::reader
