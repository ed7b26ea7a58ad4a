// The input format of fuzz_decompress, shared with the seed generator (make_decompress_seeds).
//
// An input is a run of records, each a 7-byte header and a stream:
//   byte 0     bits 0-2: algorithm id (0 lz4, 1 lzma, 2 deflate, 3 zstd; 4-7 must be refused)
//              bit 3:    partial (the stream may hold more than the declared size)
//              bits 4-7: decoder configuration (first record only; see decoder_config)
//   bytes 1-3  declared output size, little-endian (up to 16 MiB, beyond the 12 MiB limit)
//   bytes 4-6  stream length, little-endian, clamped to the bytes that are left
//   then the stream.
// Bytes after the last complete header are ignored; at most kMaxRecords records are decoded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "compress/codec.h"

namespace erofs::fuzz {

inline constexpr size_t kRecordHeader = 7;
inline constexpr size_t kMaxRecords = 4;

struct Record {
  uint8_t algorithm = 0;  // 0..7
  bool partial = false;
  uint8_t config = 0;  // 0..15
  uint32_t out_size = 0;  // < 2^24
  std::span<const uint8_t> stream;
};

// Configuration 0 is the codec's default; the others mix small and largest-allowed windows and
// dictionaries with out-of-range ones, which the decoder must refuse on first use.
inline compress::DecoderConfig decoder_config(uint8_t index) {
  compress::DecoderConfig c;
  if (index == 0) return c;
  static constexpr uint32_t kLzmaDict[6] = {8u << 20, 4096, 64u << 10, 1u << 20, 0, (8u << 20) + 1};
  static constexpr uint8_t kDeflateBits[4] = {15, 12, 9, 16};
  static constexpr uint8_t kZstdWindowLog[4] = {10, 0, 5, 11};
  c.lzma_dict_size = kLzmaDict[index % 6];
  c.deflate_window_bits = kDeflateBits[index % 4];
  c.zstd_window_log = kZstdWindowLog[(index / 4) % 4];
  return c;
}

inline std::vector<Record> parse_records(std::span<const uint8_t> in) {
  std::vector<Record> out;
  while (in.size() >= kRecordHeader && out.size() < kMaxRecords) {
    Record r;
    r.algorithm = in[0] & 7;
    r.partial = in[0] & 8;
    r.config = in[0] >> 4;
    r.out_size = uint32_t(in[1]) | uint32_t(in[2]) << 8 | uint32_t(in[3]) << 16;
    size_t length = size_t(in[4]) | size_t(in[5]) << 8 | size_t(in[6]) << 16;
    in = in.subspan(kRecordHeader);
    if (length > in.size()) length = in.size();
    r.stream = in.first(length);
    in = in.subspan(length);
    out.push_back(r);
  }
  return out;
}

inline void append_record(std::vector<uint8_t>& out, const Record& r) {
  out.push_back(uint8_t((r.algorithm & 7) | (r.partial ? 8 : 0) | (r.config << 4)));
  for (int i = 0; i < 3; ++i) out.push_back(uint8_t(r.out_size >> (8 * i)));
  for (int i = 0; i < 3; ++i) out.push_back(uint8_t(r.stream.size() >> (8 * i)));
  out.insert(out.end(), r.stream.begin(), r.stream.end());
}

}  // namespace erofs::fuzz
