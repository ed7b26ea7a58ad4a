#include "writer/data/packed_stream.h"

namespace erofs::writer {

uint64_t PackedStream::append(std::span<const uint8_t> bytes) {
  const uint64_t at = size_;
  spill_.append(bytes);
  size_ += bytes.size();
  return at;
}

uint64_t PackedStream::append_source(const FileContent& content, uint64_t size) {
  close_spill_piece();
  const uint64_t at = size_;
  if (size) pieces_.push_back({content, size});
  size_ += size;
  return at;
}

FileContent PackedStream::content() {
  close_spill_piece();
  return FileContent::concatenation(pieces_, "the fragments");
}

// Spill bytes appended between two referenced files read as one piece.
void PackedStream::close_spill_piece() {
  const uint64_t end = spill_.size();
  if (end == spill_open_) return;
  pieces_.push_back({FileContent::in_shared_file(spill_.fd(), spill_open_, "the fragments beside the image"),
                     end - spill_open_});
  spill_open_ = end;
}

}  // namespace erofs::writer
