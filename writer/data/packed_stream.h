// The packed inode's content (the fragments), gathered while files are compressed: tails and
// small whole files are appended to a spill file beside the image, and large whole-file fragments
// (-Eall-fragments) are referenced where they are in the source and read again when the packed
// inode is compressed. Copying the 10^9-byte file beside the image cost 2.4 s of a 13 s build
// before compression could start; reading it once more costs a tenth.
//
// The stream holds the fragments in the reverse of the order they were appended (the files' data
// order, which is the order `tar` and `cp -r` read them). The kernel reads a fragment through the
// packed inode's page cache one page at a time; for LZ4 it decodes the pcluster from its head up
// to that page and keeps every page before it, but none after. Forwards, each small file of a
// 64 KiB pcluster decoded the pcluster's head again; reversed, the first file read lies at the end
// of its pcluster and leaves the next files' pages cached, so each pcluster is decoded about once.
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
  // Each returns where the bytes start among those appended so far; placed() turns that into
  // where they lie in content().
  uint64_t append(std::span<const uint8_t> bytes);
  uint64_t append_source(const FileContent& content, uint64_t size);
  uint64_t placed(uint64_t appended_at, uint64_t length) const { return size_ - appended_at - length; }
  // All of it, the last piece appended first; appends after this are not in it.
  FileContent content();

 private:
  SpillFile spill_;
  // In the order appended: each a range of the spill file (source 0) or a whole file of
  // sources_ (source i + 1). One per small file, so kept to a slice's 24 bytes.
  std::vector<ContentSlice> appended_;
  std::vector<ContentPiece> sources_;
  uint64_t size_ = 0;
};

}  // namespace erofs::writer
