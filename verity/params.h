// The parameters of a dm-verity hash tree (hash algorithm, data and hash block sizes, salt), the
// limits the kernel's dm-verity puts on them, and their text forms for options and summaries.
// Trees are format version 1: each hash is H(salt || block).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "format/verity_superblock.h"

namespace erofs::verity {

// Parameters dm-verity would refuse, or option text that does not parse. One line.
class ParamError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Anything else that stops a build or a check: the hash library failing, data fed that does not
// add up to the declared block count, a stored tree of the wrong size. One line.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Algorithm : uint8_t { Sha256, Sha512 };

std::string_view algorithm_name(Algorithm alg);  // the kernel's crypto name: "sha256", "sha512"
Algorithm parse_algorithm(std::string_view name);
size_t digest_size(Algorithm alg);

// dm-verity's limits: block sizes are powers of two from 512 bytes to the page size (4096 on the
// machines the images are for); veritysetup's superblock holds at most 256 bytes of salt.
inline constexpr uint32_t kMinBlockSize = 512;
inline constexpr uint32_t kMaxBlockSize = 4096;
inline constexpr size_t kMaxSaltSize = format::VeritySuperblock::kMaxSalt;

struct Params {
  Algorithm algorithm = Algorithm::Sha256;
  uint32_t data_block_size = 4096;
  uint32_t hash_block_size = 4096;
  std::vector<uint8_t> salt;
};

// Throws ParamError naming the first value dm-verity would refuse.
void validate(const Params& params);

// "hash=sha512,data-block=1024,hash-block=4096": any of the three, in any order, over the
// defaults; "" gives the defaults. The result is validated. Throws ParamError.
Params parse_options(std::string_view text);
// Hex bytes ("" is none), `what` naming the value in the error ("salt", "root hash").
std::vector<uint8_t> parse_hex(std::string_view text, std::string_view what);
// A salt option: hex, or "none" for no salt (veritysetup's "-"); at most 256 bytes.
std::vector<uint8_t> parse_salt(std::string_view text);
std::string to_hex(std::span<const uint8_t> bytes);

// The superblock veritysetup writes for a tree of `data_blocks` blocks with these parameters.
format::VeritySuperblock make_superblock(const Params& params, uint64_t data_blocks,
                                         const std::array<uint8_t, 16>& uuid);
// The parameters a decoded superblock records; throws ParamError when dm-verity cannot use them.
Params params_of(const format::VeritySuperblock& sb);

}  // namespace erofs::verity
