// The packed inode's content (the fragments), gathered in order while files are compressed:
// tails and small whole files are appended to a spill file beside the image, and large
// whole-file fragments (-Eall-fragments) are referenced where they are in the source and read
// again when the packed inode is compressed. Copying the 10^9-byte file beside the image cost
// 2.4 s of a 13 s build before compression could start; reading it once more costs a tenth.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "writer/source/file_content.h"
#include "writer/spill_file.h"

namespace erofs::writer {

class PackedStream {
 public:
  explicit PackedStream(const std::string& beside) : spill_(beside) {}

  uint64_t size() const { return size_; }
  // Each returns where the bytes start in the stream.
  uint64_t append(std::span<const uint8_t> bytes);
  uint64_t append_source(const FileContent& content, uint64_t size);
  // All of it, one piece after the other; appends after this are not in it.
  FileContent content();

 private:
  void close_spill_piece();

  SpillFile spill_;
  std::vector<ContentPiece> pieces_;
  uint64_t size_ = 0;
  uint64_t spill_open_ = 0;  // spill bytes from here on belong to no piece yet
};

}  // namespace erofs::writer
