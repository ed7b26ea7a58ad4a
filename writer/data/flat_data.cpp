#include "writer/data/flat_data.h"

#include <algorithm>

#include "writer/align.h"
#include "writer/errors.h"

namespace erofs::writer {
namespace {

constexpr size_t kChunk = 1 << 20;

// Copies [start, start + length) of the file to the end of `out` through `buf`.
void copy(OutputImage& out, const ContentReader& in, uint64_t start, uint64_t length, std::vector<uint8_t>& buf) {
  for (uint64_t done = 0; done < length;) {
    const auto piece = std::span(buf).first(size_t(std::min<uint64_t>(buf.size(), length - done)));
    in.read(start + done, piece);
    out.append(piece);
    done += piece.size();
  }
}

}  // namespace

FilePlacement write_file_data(OutputImage& out, SpillFile& tails, const ContentReader& in, const FileDataOptions& options,
                              uint64_t& bytes_read) {
  FilePlacement p;
  bytes_read = 0;
  const uint64_t size = in.size();
  if (size == 0) return p;
  const uint32_t bs = options.block_size;
  std::vector<uint8_t> buf(kChunk);

  if (options.chunk_bits) {
    const unsigned bits = options.chunk_bits;
    const uint64_t chunk = 1ull << bits;
    const uint64_t nchunks = (size + chunk - 1) >> bits;
    std::vector<bool> mapped(nchunks, false);
    for (auto [s, e] : in.data_ranges())
      for (uint64_t c = s >> bits; c <= (e - 1) >> bits; ++c) mapped[c] = true;
    p.layout = format::Layout::ChunkBased;
    p.chunk_format = uint16_t(bits - unsigned(__builtin_ctz(bs)));
    p.chunk_map.assign(nchunks, format::kNullAddr);
    for (uint64_t c = 0; c < nchunks; ++c) {
      if (!mapped[c]) continue;
      const uint64_t start = c << bits, len = std::min(chunk, size - start);
      const uint64_t blk = out.offset() / bs;
      if (blk >= format::kNullAddr) throw BuildError("image exceeds 2^32 blocks");
      p.chunk_map[c] = uint32_t(blk);
      copy(out, in, start, len, buf);
      bytes_read += len;
      out.pad_to(align_up(out.offset(), bs));
      p.blocks += (len + bs - 1) / bs;
    }
    return p;
  }

  const uint64_t full = options.inline_tail ? size / bs * bs : size;
  if (full) p.startblk = out.offset() / bs;
  copy(out, in, 0, full, buf);
  out.pad_to(align_up(out.offset(), bs));
  p.blocks = (full + bs - 1) / bs;
  if (options.inline_tail) {
    p.layout = format::Layout::FlatInline;
    std::vector<uint8_t> tail(size_t(size - full));
    in.read(full, tail);
    p.tail = tails.append(tail);
  }
  bytes_read = size;
  return p;
}

}  // namespace erofs::writer
