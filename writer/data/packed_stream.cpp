#include "writer/data/packed_stream.h"

namespace erofs::writer {

uint64_t PackedStream::append(std::span<const uint8_t> bytes) {
  const uint64_t at = size_;
  if (bytes.empty()) return at;
  appended_.push_back({bytes.size(), spill_.size(), std::nullopt});
  spill_.append(bytes);
  size_ += bytes.size();
  return at;
}

uint64_t PackedStream::append_source(const FileContent& content, uint64_t size) {
  const uint64_t at = size_;
  if (size == 0) return at;
  appended_.push_back({size, 0, content});
  size_ += size;
  return at;
}

FileContent PackedStream::content() {
  const int spill_fd = spill_.fd();
  std::vector<ContentPiece> pieces;
  pieces.reserve(appended_.size());
  for (auto a = appended_.rbegin(); a != appended_.rend(); ++a)
    pieces.push_back({a->source ? *a->source : FileContent::in_shared_file(spill_fd, a->spill_at, "the fragments beside the image"),
                      a->size});
  return FileContent::concatenation(std::move(pieces), "the fragments");
}

}  // namespace erofs::writer
