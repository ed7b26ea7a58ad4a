#include "compress/huffman.h"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace erofs::compress::detail {
namespace {

constexpr unsigned kMaxCodeBits = 15;

// Moffat and Katajainen's in-place minimum-redundancy lengths: `a` holds n >= 2 weights in
// ascending order and gets back the code length of each, longest first. Three passes over one
// array: build the tree's internal nodes (weights, then parent links), turn parent links into
// depths, then count leaves per depth.
void minimum_redundancy(uint32_t* a, int n) {
  a[0] += a[1];
  int root = 0, leaf = 2;
  for (int next = 1; next < n - 1; ++next) {
    // The lighter of the next leaf and the next unused internal node, twice.
    if (leaf >= n || a[root] < a[leaf]) {
      a[next] = a[root];
      a[root++] = uint32_t(next);
    } else {
      a[next] = a[leaf++];
    }
    if (leaf >= n || (root < next && a[root] < a[leaf])) {
      a[next] += a[root];
      a[root++] = uint32_t(next);
    } else {
      a[next] += a[leaf++];
    }
  }
  a[n - 2] = 0;
  for (int next = n - 3; next >= 0; --next) a[next] = a[a[next]] + 1;
  int available = 1, used = 0, root_at = n - 2, next = n - 1;
  uint32_t depth = 0;
  while (available > 0) {
    while (root_at >= 0 && a[root_at] == depth) {
      ++used;
      --root_at;
    }
    while (available > used) {
      a[next--] = depth;
      --available;
    }
    available = 2 * used;
    ++depth;
    used = 0;
  }
}

unsigned reverse_bits(unsigned code, unsigned bits) {
  unsigned r = 0;
  for (unsigned i = 0; i < bits; ++i, code >>= 1) r = (r << 1) | (code & 1);
  return r;
}

}  // namespace

void huffman_lengths(std::span<const uint32_t> freqs, unsigned max_len, std::span<uint8_t> lens) {
  if (freqs.size() > kHuffmanMaxSymbols || lens.size() < freqs.size() || freqs.size() < 2 || max_len > kMaxCodeBits ||
      (1u << max_len) < freqs.size())
    throw std::logic_error("huffman_lengths: alphabet or length limit out of range");
  std::fill(lens.begin(), lens.end(), uint8_t(0));
  std::array<uint16_t, kHuffmanMaxSymbols> order;
  unsigned used = 0;
  for (unsigned i = 0; i < freqs.size(); ++i)
    if (freqs[i]) order[used++] = uint16_t(i);
  if (used < 2) {
    const unsigned a = used ? order[0] : 0;
    lens[a] = 1;
    lens[a == 0 ? 1 : 0] = 1;
    return;
  }
  std::sort(order.begin(), order.begin() + used,
            [&](uint16_t x, uint16_t y) { return freqs[x] != freqs[y] ? freqs[x] < freqs[y] : x < y; });
  std::array<uint32_t, kHuffmanMaxSymbols> w;
  for (unsigned k = 0; k < used; ++k) w[k] = freqs[order[k]];
  minimum_redundancy(w.data(), int(used));

  // Leaves per length, those deeper than max_len moved up to it; each round then takes one leaf
  // off the deepest level and splits a shallower leaf in two, lowering the Kraft sum by one unit.
  std::array<uint32_t, kMaxCodeBits + 1> count{};
  for (unsigned k = 0; k < used; ++k) ++count[std::min<uint32_t>(w[k], max_len)];
  uint32_t kraft = 0;
  for (unsigned l = 1; l <= max_len; ++l) kraft += count[l] << (max_len - l);
  while (kraft > (1u << max_len)) {
    --count[max_len];
    for (unsigned l = max_len - 1; l > 0; --l)
      if (count[l]) {
        --count[l];
        count[l + 1] += 2;
        break;
      }
    --kraft;
  }
  unsigned k = 0;
  for (unsigned l = max_len; l >= 1; --l)
    for (uint32_t c = count[l]; c; --c) lens[order[k++]] = uint8_t(l);
}

void huffman_codes(std::span<const uint8_t> lens, std::span<uint16_t> codes) {
  std::array<unsigned, kMaxCodeBits + 1> count{};
  for (uint8_t l : lens) ++count[l];
  count[0] = 0;
  std::array<unsigned, kMaxCodeBits + 1> next{};
  unsigned code = 0;
  for (unsigned l = 1; l <= kMaxCodeBits; ++l) {
    code = (code + count[l - 1]) << 1;
    next[l] = code;
  }
  for (size_t i = 0; i < lens.size(); ++i)
    codes[i] = lens[i] ? uint16_t(reverse_bits(next[lens[i]]++, lens[i])) : 0;
}

}  // namespace erofs::compress::detail
