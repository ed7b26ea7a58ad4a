// Writes the seed inputs of fuzz_decompress and fuzz_roundtrip: streams made by the project's own
// encoders from fixed sample data, so the seeds are the same on every run.
// Usage: make_seeds DECOMPRESS_DIR ROUNDTRIP_DIR   (fuzz/make-corpus runs it)
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "compress/codec.h"
#include "fuzz/decompress_input.h"

namespace {

namespace compress = erofs::compress;
using Bytes = std::vector<uint8_t>;

// A fixed pseudo-random sequence (xorshift), so the seeds do not depend on the platform.
struct Rng {
  uint32_t s = 2463534242u;
  uint32_t next() {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return s;
  }
};

Bytes text(size_t n) {
  static const char* const kWords[] = {"erofs", "block", "inode", "the", "cluster", "of", "compressed",
                                       "directory", "and", "superblock", "xattr", "a", "tail", "data"};
  Rng rng;
  Bytes out;
  while (out.size() < n) {
    const std::string w = kWords[rng.next() % std::size(kWords)];
    out.insert(out.end(), w.begin(), w.end());
    out.push_back(rng.next() % 9 == 0 ? '\n' : ' ');
  }
  out.resize(n);
  return out;
}

Bytes noise(size_t n) {
  Rng rng;
  Bytes out(n);
  for (auto& b : out) b = uint8_t(rng.next() >> 24);
  return out;
}

void write(const std::filesystem::path& file, const Bytes& bytes) {
  std::ofstream f(file, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  if (!f) {
    std::fprintf(stderr, "make_seeds: cannot write %s\n", file.c_str());
    std::exit(1);
  }
}

struct Stream {
  compress::Algorithm algorithm;
  Bytes bytes;
  size_t decoded = 0;
};

Stream encode(const char* spec_text, const Bytes& data, size_t pcluster) {
  const compress::Spec spec = compress::parse_spec(spec_text);
  auto encoder = compress::make_encoder(spec, uint32_t(pcluster));
  Bytes out(pcluster);
  const compress::FillResult r = encoder->fill(data, out);
  if (r.consumed == 0) {
    std::fprintf(stderr, "make_seeds: %s encoded nothing\n", spec_text);
    std::exit(1);
  }
  out.resize(r.produced);
  return {spec.algorithm, out, r.consumed};
}

erofs::fuzz::Record record(const Stream& s, size_t out_size, bool partial, uint8_t config = 0) {
  erofs::fuzz::Record r;
  r.algorithm = uint8_t(s.algorithm);
  r.partial = partial;
  r.config = config;
  r.out_size = uint32_t(out_size);
  r.stream = s.bytes;
  return r;
}

Bytes one(const erofs::fuzz::Record& r) {
  Bytes out;
  erofs::fuzz::append_record(out, r);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: make_seeds DECOMPRESS_DIR ROUNDTRIP_DIR\n");
    return 2;
  }
  const std::filesystem::path dec = argv[1], rt = argv[2];
  std::filesystem::create_directories(dec);
  std::filesystem::create_directories(rt);

  const Bytes words = text(6000), zeros(3000, 0), random = noise(700);
  const char* const kSpecs[][2] = {{"lz4", "lz4hc"}, {"lzma", "lzma"}, {"deflate", "deflate"}, {"zstd", "zstd"}};
  Bytes chain;
  for (const auto& [name, spec] : kSpecs) {
    const std::string n = name;
    const Stream big = encode(spec, words, 4096), small = encode(spec, words, 512), zero = encode(spec, zeros, 512);
    write(dec / (n + "-text-4096"), one(record(big, big.decoded, false)));
    write(dec / (n + "-text-512-partial"), one(record(small, small.decoded / 2 + 3, true)));
    write(dec / (n + "-zeros"), one(record(zero, zero.decoded, false)));
    erofs::fuzz::append_record(chain, record(small, small.decoded, false));
  }
  // All four algorithms through one reused decoder, and an lzma stream under a 1 MiB dictionary.
  write(dec / "chain", chain);
  const Stream lzma = encode("lzma,dictsize=65536", words, 2048);
  write(dec / "lzma-dict-config", one(record(lzma, lzma.decoded, false, 3)));
  const Stream stored = encode("lz4", random, 1024);
  write(dec / "lz4-noise", one(record(stored, stored.decoded, false)));

  // fuzz_roundtrip: encoder choice, level, pcluster size - 1 (little-endian), data.
  const char* const kChoices[] = {"lz4", "lz4hc", "lzma", "deflate", "zstd"};
  for (unsigned i = 0; i < std::size(kChoices); ++i) {
    Bytes in = {uint8_t(i), 5, 0xff, 0x0f};  // pcluster 4096
    in.insert(in.end(), words.begin(), words.begin() + 3000);
    write(rt / (std::string(kChoices[i]) + "-text-4096"), in);
    Bytes mixed = {uint8_t(i), 1, 0xff, 0x01};  // pcluster 512
    mixed.insert(mixed.end(), zeros.begin(), zeros.begin() + 600);
    mixed.insert(mixed.end(), random.begin(), random.begin() + 300);
    write(rt / (std::string(kChoices[i]) + "-mixed-512"), mixed);
  }
  return 0;
}
