#include "writer/data/packed_stream.h"

namespace erofs::writer {

uint64_t PackedStream::append(std::span<const uint8_t> bytes) {
  const uint64_t at = size_;
  if (bytes.empty()) return at;
  appended_.push_back({0, spill_.size(), bytes.size()});
  spill_.append(bytes);
  size_ += bytes.size();
  return at;
}

uint64_t PackedStream::append_source(const FileContent& content, uint64_t size) {
  const uint64_t at = size_;
  if (size == 0) return at;
  sources_.push_back({content, size});
  appended_.push_back({uint32_t(sources_.size()), 0, size});
  size_ += size;
  return at;
}

FileContent PackedStream::content() {
  std::vector<ContentPiece> sources{{FileContent::in_shared_file(spill_.fd(), 0, "the fragments beside the image"), spill_.size()}};
  sources.insert(sources.end(), sources_.begin(), sources_.end());
  return FileContent::concatenation(std::move(sources), {appended_.rbegin(), appended_.rend()}, "the fragments");
}

}  // namespace erofs::writer
