#include "reader/input_image.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "reader/checked.h"
#include "reader/image.h"
#include "reader/mapping_faults.h"

namespace erofs::reader {

namespace {

// Pages of the mapping that read_mapped used stay in the process's page tables, and count in its
// resident memory (RssFile) until they are let go. They are, every time this many bytes were
// used: the page cache keeps them, so a later use maps them again without reading the disk.
constexpr uint64_t kMappedKept = 64 << 20;

}  // namespace

InputImage::InputImage(const std::string& path, Access access) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    int err = errno;
    throw IoError(fmt::format("{}: {}", path, std::strerror(err)), err);
  }
  // lseek rather than fstat so that block devices report their size too.
  off_t end = ::lseek(fd_, 0, SEEK_END);
  if (end < 0) {
    int err = errno;
    ::close(fd_);
    throw IoError(fmt::format("{}: {}", path, std::strerror(err)), err);
  }
  size_ = uint64_t(end);
  if (access.direct) open_direct();
  if (access.mapped && map_file()) {
    map_faults_ = mapping_faults::watch(map_, size_t(size_));
    // A fault on a page not in the cache reads that page alone, not the pages around it:
    // read_mapped asks for its range first, and a pcluster is all that a decode needs.
    if (map_faults_) ::madvise(map_, size_t(size_), MADV_RANDOM);
  }
}

bool InputImage::map_file() {
  if (map_) return true;
  if (size_ == 0 || size_ > uint64_t(SIZE_MAX)) return false;
  const long page = ::sysconf(_SC_PAGESIZE);
  if (page <= 0) return false;
  void* map = ::mmap(nullptr, size_t(size_), PROT_READ, MAP_SHARED, fd_, 0);
  if (map == MAP_FAILED) return false;
  page_ = uint64_t(page);
  map_ = map;
  return true;
}

// Both the O_DIRECT descriptor and the mapping that tells what the cache holds, or no direct
// reads: an image whose cached state is unknown is read through the cache, as it always could be.
void InputImage::open_direct() {
  if (!map_file()) return;
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
  if (fd >= 0) direct_fd_ = fd;
}

InputImage::~InputImage() {
  if (map_faults_) mapping_faults::unwatch(map_);
  if (map_) ::munmap(map_, size_t(size_));
  if (direct_fd_ >= 0) ::close(direct_fd_);
  ::close(fd_);
}

void InputImage::read(uint64_t offset, std::span<uint8_t> buf) const {
  uint64_t end = checked::add(offset, buf.size());
  if (end > size_)
    throw CorruptError(fmt::format("read of {} bytes at offset {} is beyond the end of the image ({} bytes)",
                                   buf.size(), offset, size_));
  if (read_direct(offset, buf)) return;
  size_t done = 0;
  while (done < buf.size()) {
    ssize_t n = ::pread(fd_, buf.data() + done, buf.size() - done, off_t(offset + done));
    reads_.fetch_add(1, std::memory_order_relaxed);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      throw IoError(fmt::format("{}: read at offset {}: {}", path_, offset + done, std::strerror(err)), err);
    }
    if (n == 0) throw IoError(fmt::format("{}: image shrank while reading at offset {}", path_, offset + done), EIO);
    done += size_t(n);
  }
}

bool InputImage::read_direct(uint64_t offset, std::span<uint8_t> buf) const {
  if (direct_fd_ < 0 || buf.size() < kDirectFrom || !direct_works_.load(std::memory_order_relaxed)) return false;
  if ((offset | buf.size() | reinterpret_cast<uintptr_t>(buf.data())) % kDirectAlign) return false;
  if (cached(offset, buf.size())) return false;
  ssize_t n;
  do n = ::pread(direct_fd_, buf.data(), buf.size(), off_t(offset));
  while (n < 0 && errno == EINTR);
  if (n == ssize_t(buf.size())) {
    reads_.fetch_add(1, std::memory_order_relaxed);
    direct_reads_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  // Refused (alignment the filesystem wants larger, or no O_DIRECT reads after all): never again.
  // A failing or short read is made again through the cache, which says what went wrong.
  if (n < 0 && errno == EINVAL) direct_works_.store(false, std::memory_order_relaxed);
  return false;
}

bool InputImage::cached(uint64_t offset, uint64_t length) const {
  const uint64_t first = offset / page_ * page_;
  const uint64_t pages = (offset + length - first + page_ - 1) / page_;
  unsigned char resident[256];
  for (uint64_t done = 0; done < pages;) {
    const uint64_t n = std::min<uint64_t>(pages - done, sizeof resident);
    if (::mincore(static_cast<char*>(map_) + first + done * page_, size_t(n * page_), resident) != 0) return true;
    if (std::any_of(resident, resident + n, [](unsigned char r) { return !(r & 1); })) return false;
    done += n;
  }
  return true;
}

bool InputImage::read_mapped(uint64_t offset, size_t length,
                             const std::function<void(std::span<const uint8_t>)>& use) const {
  // One fault ever, and the mapping holds zeros where it was: it serves nobody from then on.
  if (!map_faults_ || map_faults_->load(std::memory_order_acquire) != 0) return false;
  if (length < kMappedFrom || offset > size_ || length > size_ - offset) return false;
  // The range's pages from the disk in one request, before the first access waits for them.
  const uint64_t first = offset / page_ * page_;
  ::posix_fadvise(fd_, off_t(first), off_t(offset + length - first), POSIX_FADV_WILLNEED);
  try {
    use(std::span<const uint8_t>(static_cast<const uint8_t*>(map_) + offset, length));
  } catch (...) {
    if (map_faults_->load(std::memory_order_seq_cst) != 0) return false;  // it may have read zeros
    throw;
  }
  if (map_faults_->load(std::memory_order_seq_cst) != 0) return false;
  mapped_reads_.fetch_add(1, std::memory_order_relaxed);
  if (mapped_since_drop_.fetch_add(length, std::memory_order_relaxed) + length >= kMappedKept) {
    mapped_since_drop_.store(0, std::memory_order_relaxed);
    ::madvise(map_, size_t(size_), MADV_DONTNEED);  // a shared file mapping: only the page tables go
  }
  return true;
}

void InputImage::will_need(uint64_t offset, uint64_t length) const {
  if (offset >= size_ || !length) return;
  hints_.fetch_add(1, std::memory_order_relaxed);
  ::posix_fadvise(fd_, off_t(offset), off_t(std::min(length, size_ - offset)), POSIX_FADV_WILLNEED);
}

}  // namespace erofs::reader
