// Where a regular file's bytes come from, and reading them. Sources say where (a file in a
// scanned directory, a path, a region of a shared file such as a tar stream's data, bytes in
// memory, or several of these one after the other); the data phase opens each file once through
// a ContentOpener, reads it through the ContentReader it gets, and the reader closes the file. Nothing else in the writer opens source
// files, so the compression stage can be fed from memory in tests.
//
// Files of a scanned directory are opened relative to their directory, which is reopened relative
// to its parent (the opener keeps the directories it opened last), so no path is ever resolved
// whole: paths of any length work, and a rename above a directory during the build cannot
// redirect a read.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace erofs::writer {

// A directory of a scanned source tree: its name in its parent (the root: its path).
class SourceDir {
 public:
  static std::shared_ptr<const SourceDir> root(std::string path);
  static std::shared_ptr<const SourceDir> child(std::shared_ptr<const SourceDir> parent, std::string name);

  const SourceDir* parent() const { return parent_.get(); }
  const std::string& name() const { return name_; }
  std::string path() const;  // for messages

 private:
  SourceDir(std::shared_ptr<const SourceDir> parent, std::string name)
      : parent_(std::move(parent)), name_(std::move(name)) {}
  std::shared_ptr<const SourceDir> parent_;
  std::string name_;
};

struct ContentPiece;
struct ContentSlice;
struct ContentPieces;

class FileContent {
 public:
  enum class Kind { None, InDirectory, AtPath, InSharedFile, InMemory, Concatenation };

  FileContent() = default;
  static FileContent in_directory(std::shared_ptr<const SourceDir> dir, std::string name);
  // A path opened as it is (absolute, or relative to the current directory).
  static FileContent at_path(std::string path);
  // The bytes at `offset` of `fd`, an open file some owner keeps open (Tree::data_owner); holes in
  // it are holes of the file. `name` names the file in messages.
  static FileContent in_shared_file(int fd, uint64_t offset, std::string name);
  static FileContent in_memory(std::shared_ptr<const std::string> bytes, std::string name);
  // The slices one after the other, each a range of one of `sources`: the packed inode's content,
  // whose large whole-file fragments are read where they are rather than copied beside the
  // image, and whose tens of thousands of small ones in one spill file cost a slice each (24
  // bytes), not a FileContent each.
  static FileContent concatenation(std::vector<ContentPiece> sources, std::vector<ContentSlice> slices,
                                   std::string name);

  Kind kind() const { return kind_; }
  // The path in the source, for messages.
  std::string name() const;

 private:
  friend class ContentOpener;
  Kind kind_ = Kind::None;
  std::shared_ptr<const SourceDir> dir_;
  std::string name_;  // in the directory, the path, or the name for messages
  int fd_ = -1;
  uint64_t offset_ = 0;
  std::shared_ptr<const std::string> bytes_;
  std::shared_ptr<const ContentPieces> pieces_;
};

// A source of a concatenation: a file and its length.
struct ContentPiece {
  FileContent content;
  uint64_t size = 0;
};

// Bytes [offset, offset + size) of a concatenation's source number `source`.
struct ContentSlice {
  uint32_t source = 0;
  uint64_t offset = 0, size = 0;
};

// One file opened for reading; closes itself. Every read error is a BuildError naming the file,
// and so is a file of its own found shorter than the size the source gave, or, by a read that
// ends at that size, longer (it changed since the scan). A region of a shared file ends where the
// source says. A concatenation opens its pieces for each read (reads are windows of megabytes),
// so reads from several threads need no lock and no descriptor stays open per piece.
class ContentReader {
 public:
  ContentReader(ContentReader&&) noexcept;
  ContentReader& operator=(ContentReader&&) = delete;
  ~ContentReader();

  uint64_t size() const { return size_; }
  // Reads exactly out.size() bytes at `offset` (offset + out.size() <= size()).
  void read(uint64_t offset, std::span<uint8_t> out) const;
  // Fewer bytes are allocated than the file's size: it has holes worth asking about.
  bool sparse() const;
  // [offset, offset + length) lies in a hole and reads as zeros (false when unknown).
  bool in_hole(uint64_t offset, uint64_t length) const;
  // The ranges [start, end) that hold data (SEEK_DATA/SEEK_HOLE); the whole file when the
  // filesystem does not say.
  std::vector<std::pair<uint64_t, uint64_t>> data_ranges() const;

 private:
  friend class ContentOpener;
  ContentReader(std::string name, uint64_t size) : name_(std::move(name)), size_(size) {}
  std::string name_;
  uint64_t size_;
  int fd_ = -1;
  bool owns_fd_ = false;
  uint64_t base_ = 0;  // where the file's bytes start in fd_
  std::shared_ptr<const std::string> bytes_;
  std::shared_ptr<const ContentPieces> pieces_;
};

// Opens FileContent for reading. Keeps the source directories it opened last, so reading the
// files of a tree in order opens each directory about once. One per thread.
class ContentOpener {
 public:
  ContentOpener() = default;
  ~ContentOpener();
  ContentOpener(const ContentOpener&) = delete;
  ContentOpener& operator=(const ContentOpener&) = delete;

  // `size`: the file's size as the source gave it. Throws BuildError naming the file.
  ContentReader open(const FileContent& content, uint64_t size);

 private:
  int dir_fd(const SourceDir* dir);  // an open descriptor of `dir`, owned by the cache
  static constexpr size_t kCachedDirs = 16;
  std::vector<std::pair<const SourceDir*, int>> dirs_;  // most recently used last
};

}  // namespace erofs::writer
