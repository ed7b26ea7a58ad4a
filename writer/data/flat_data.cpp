#include "writer/data/flat_data.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "writer/errors.h"
#include "writer/source/scan_dir.h"

namespace erofs::writer {
namespace {

constexpr size_t kChunk = 1 << 20;

struct SourceFile {
  int fd;
  const std::string& path;
  uint64_t base = 0;
  bool owned = true;
  ~SourceFile() {
    if (owned) ::close(fd);
  }

  void read_exact(uint64_t offset, uint8_t* buf, size_t len) const { read_source(fd, path, base + offset, buf, len); }
};

// Data ranges [start, end) of the `size` bytes at `base` of the file, relative to `base`, from
// SEEK_DATA/SEEK_HOLE; one range when the filesystem does not report holes.
std::vector<std::pair<uint64_t, uint64_t>> data_ranges(int fd, uint64_t base, uint64_t size) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  uint64_t pos = 0;
  while (pos < size) {
    off_t d = ::lseek(fd, off_t(base + pos), SEEK_DATA);
    if (d < 0) {
      if (errno == ENXIO) break;
      return {{0, size}};
    }
    if (uint64_t(d) >= base + size) break;
    off_t h = ::lseek(fd, d, SEEK_HOLE);
    if (h < 0) return {{0, size}};
    out.emplace_back(uint64_t(d) - base, std::min<uint64_t>(uint64_t(h) - base, size));
    pos = uint64_t(h) - base;
  }
  return out;
}

}  // namespace

FilePlacement write_file_data(OutputImage& out, SpillFile& tails, const std::string& path, uint64_t size,
                              const FileDataOptions& options, uint64_t& bytes_read, int shared_fd, uint64_t base) {
  FilePlacement p;
  bytes_read = 0;
  if (size == 0) return p;
  const bool shared = shared_fd >= 0;
  int fd = shared ? shared_fd : open_source_file(path);
  if (fd < 0) throw BuildError(errno_message("cannot read " + path, errno));
  SourceFile src{fd, path, shared ? base : 0, !shared};
  const uint32_t bs = options.block_size;
  std::vector<uint8_t> buf(kChunk);

  if (options.chunk_bits) {
    auto ranges = data_ranges(fd, src.base, size);
    unsigned bits = options.chunk_bits;
    uint64_t chunk = 1ull << bits;
    uint64_t nchunks = (size + chunk - 1) >> bits;
    std::vector<bool> mapped(nchunks, false);
    for (auto [s, e] : ranges)
      for (uint64_t c = s >> bits; c <= (e - 1) >> bits; ++c) mapped[c] = true;
    p.layout = format::Layout::ChunkBased;
    p.chunk_format = uint16_t(bits - unsigned(__builtin_ctz(bs)));
    p.chunk_map.assign(nchunks, format::kNullAddr);
    for (uint64_t c = 0; c < nchunks; ++c) {
      if (!mapped[c]) continue;
      uint64_t start = c << bits, len = std::min(chunk, size - start);
      uint64_t blk = out.offset() / bs;
      if (blk >= format::kNullAddr) throw BuildError("image exceeds 2^32 blocks");
      p.chunk_map[c] = uint32_t(blk);
      for (uint64_t done = 0; done < len;) {
        size_t n = size_t(std::min<uint64_t>(kChunk, len - done));
        src.read_exact(start + done, buf.data(), n);
        out.append({buf.data(), n});
        done += n;
      }
      bytes_read += len;
      out.pad_to((out.offset() + bs - 1) / bs * bs);
      p.blocks += (len + bs - 1) / bs;
    }
    return p;
  }

  uint64_t full = options.inline_tail ? size / bs * bs : size;
  if (full) p.startblk = out.offset() / bs;
  for (uint64_t done = 0; done < full;) {
    size_t n = size_t(std::min<uint64_t>(kChunk, full - done));
    src.read_exact(done, buf.data(), n);
    out.append({buf.data(), n});
    done += n;
  }
  out.pad_to((out.offset() + bs - 1) / bs * bs);
  p.blocks = (full + bs - 1) / bs;
  if (options.inline_tail) {
    p.layout = format::Layout::FlatInline;
    std::vector<uint8_t> tail(size_t(size - full));
    src.read_exact(full, tail.data(), tail.size());
    p.tail = tails.append(tail);
  }
  bytes_read = size;
  uint8_t probe;
  if (!shared && ::pread(fd, &probe, 1, off_t(size)) > 0) throw BuildError(path + ": file grew while the image was being built");
  return p;
}

}  // namespace erofs::writer
