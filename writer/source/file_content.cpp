#include "writer/source/file_content.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "writer/errors.h"

namespace erofs::writer {

std::shared_ptr<const SourceDir> SourceDir::root(std::string path) {
  return std::shared_ptr<const SourceDir>(new SourceDir(nullptr, std::move(path)));
}

std::shared_ptr<const SourceDir> SourceDir::child(std::shared_ptr<const SourceDir> parent, std::string name) {
  return std::shared_ptr<const SourceDir>(new SourceDir(std::move(parent), std::move(name)));
}

std::string SourceDir::path() const { return parent_ ? parent_->path() + "/" + name_ : name_; }

FileContent FileContent::in_directory(std::shared_ptr<const SourceDir> dir, std::string name) {
  FileContent c;
  c.kind_ = Kind::InDirectory;
  c.dir_ = std::move(dir);
  c.name_ = std::move(name);
  return c;
}

FileContent FileContent::at_path(std::string path) {
  FileContent c;
  c.kind_ = Kind::AtPath;
  c.name_ = std::move(path);
  return c;
}

FileContent FileContent::in_shared_file(int fd, uint64_t offset, std::string name) {
  FileContent c;
  c.kind_ = Kind::InSharedFile;
  c.fd_ = fd;
  c.offset_ = offset;
  c.name_ = std::move(name);
  return c;
}

FileContent FileContent::in_memory(std::shared_ptr<const std::string> bytes, std::string name) {
  FileContent c;
  c.kind_ = Kind::InMemory;
  c.bytes_ = std::move(bytes);
  c.name_ = std::move(name);
  return c;
}

struct ContentPieces {
  std::vector<ContentPiece> sources;
  std::vector<ContentSlice> slices;
  std::vector<uint64_t> starts;  // where each slice starts in the concatenation
  uint64_t size = 0;             // the concatenation's length
};

FileContent FileContent::concatenation(std::vector<ContentPiece> sources, std::vector<ContentSlice> slices,
                                       std::string name) {
  auto all = std::make_shared<ContentPieces>();
  uint64_t at = 0;
  all->starts.reserve(slices.size());
  for (const ContentSlice& s : slices) {
    if (s.source >= sources.size() || s.offset > sources[s.source].size || s.size > sources[s.source].size - s.offset)
      throw BuildError("internal error: a slice of " + name + " lies outside its source");
    all->starts.push_back(at);
    at += s.size;
  }
  all->size = at;
  all->sources = std::move(sources);
  all->slices = std::move(slices);
  FileContent c;
  c.kind_ = Kind::Concatenation;
  c.pieces_ = std::move(all);
  c.name_ = std::move(name);
  return c;
}

std::string FileContent::name() const { return kind_ == Kind::InDirectory ? dir_->path() + "/" + name_ : name_; }

ContentReader::ContentReader(ContentReader&& o) noexcept
    : name_(std::move(o.name_)), size_(o.size_), fd_(o.fd_), owns_fd_(o.owns_fd_), base_(o.base_),
      bytes_(std::move(o.bytes_)), pieces_(std::move(o.pieces_)) {
  o.owns_fd_ = false;
}

ContentReader::~ContentReader() {
  if (owns_fd_) ::close(fd_);
}

void ContentReader::read(uint64_t offset, std::span<uint8_t> out) const {
  if (bytes_) {
    std::memcpy(out.data(), bytes_->data() + offset, out.size());
    return;
  }
  if (pieces_) {
    const auto& starts = pieces_->starts;
    size_t i = size_t(std::upper_bound(starts.begin(), starts.end(), offset) - starts.begin()) - 1;
    ContentOpener opener;
    for (size_t done = 0; done < out.size(); ++i) {
      const ContentSlice& slice = pieces_->slices[i];
      const ContentPiece& source = pieces_->sources[slice.source];
      const uint64_t at = offset + done - starts[i];
      const size_t n = size_t(std::min<uint64_t>(out.size() - done, slice.size - at));
      opener.open(source.content, source.size).read(slice.offset + at, out.subspan(done, n));
      done += n;
    }
    return;
  }
  // The read that ends the file asks for one byte more (a second iovec): a file that grew is
  // noticed without a call of its own.
  const bool at_end = owns_fd_ && offset + out.size() == size_;
  uint8_t probe;
  size_t done = 0;
  while (done < out.size()) {
    struct iovec iov[2] = {{out.data() + done, out.size() - done}, {&probe, 1}};
    const ssize_t n = ::preadv(fd_, iov, at_end ? 2 : 1, off_t(base_ + offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw BuildError(errno_message("cannot read " + name_, errno));
    if (n == 0) break;
    done += size_t(n);
  }
  if (done > out.size()) throw BuildError(name_ + ": file grew while the image was being built");
  if (done < out.size()) throw BuildError(name_ + ": file shrank while the image was being built");
}

bool ContentReader::sparse() const {
  struct stat st;
  return owns_fd_ && ::fstat(fd_, &st) == 0 && uint64_t(st.st_blocks) * 512 < size_;
}

bool ContentReader::in_hole(uint64_t offset, uint64_t length) const {
  if (bytes_ || pieces_) return false;
  const off_t data = ::lseek(fd_, off_t(base_ + offset), SEEK_DATA);
  if (data < 0) return errno == ENXIO;  // no data after offset; any other error: just read
  return uint64_t(data) >= base_ + offset + length;
}

std::vector<std::pair<uint64_t, uint64_t>> ContentReader::data_ranges() const {
  if (bytes_ || pieces_) return {{0, size_}};
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (uint64_t pos = 0; pos < size_;) {
    const off_t d = ::lseek(fd_, off_t(base_ + pos), SEEK_DATA);
    if (d < 0) {
      if (errno == ENXIO) break;
      return {{0, size_}};
    }
    if (uint64_t(d) >= base_ + size_) break;
    const off_t h = ::lseek(fd_, d, SEEK_HOLE);
    if (h < 0) return {{0, size_}};
    out.emplace_back(uint64_t(d) - base_, std::min<uint64_t>(uint64_t(h) - base_, size_));
    pos = uint64_t(h) - base_;
  }
  return out;
}

ContentOpener::~ContentOpener() {
  for (auto& [dir, fd] : dirs_) ::close(fd);
}

int ContentOpener::dir_fd(const SourceDir* dir) {
  for (size_t i = dirs_.size(); i-- > 0;)
    if (dirs_[i].first == dir) {
      std::rotate(dirs_.begin() + i, dirs_.begin() + i + 1, dirs_.end());
      return dirs_.back().second;
    }
  const int fd = dir->parent() ? ::openat(dir_fd(dir->parent()), dir->name().c_str(),
                                          O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                               : ::open(dir->name().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -1;
  if (dirs_.size() == kCachedDirs) {
    ::close(dirs_.front().second);
    dirs_.erase(dirs_.begin());
  }
  dirs_.emplace_back(dir, fd);
  return fd;
}

ContentReader ContentOpener::open(const FileContent& c, uint64_t size) {
  ContentReader r(c.name(), size);
  switch (c.kind_) {
    case FileContent::Kind::None: throw BuildError("internal error: " + r.name_ + " has no content source");
    case FileContent::Kind::InMemory:
      if (c.bytes_->size() != size) throw BuildError("internal error: " + r.name_ + " changed size in memory");
      r.bytes_ = c.bytes_;
      return r;
    case FileContent::Kind::Concatenation: {
      if (c.pieces_->size != size)
        throw BuildError("internal error: " + r.name_ + " is not as long as its pieces");
      r.pieces_ = c.pieces_;
      return r;
    }
    case FileContent::Kind::InSharedFile:
      r.fd_ = c.fd_;
      r.base_ = c.offset_;
      return r;
    case FileContent::Kind::AtPath: r.fd_ = ::open(c.name_.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC); break;
    case FileContent::Kind::InDirectory: {
      const int dir = dir_fd(c.dir_.get());
      r.fd_ = dir < 0 ? -1 : ::openat(dir, c.name_.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      break;
    }
  }
  if (r.fd_ < 0) throw BuildError(errno_message("cannot read " + r.name_, errno));
  r.owns_fd_ = true;
  return r;
}

}  // namespace erofs::writer
