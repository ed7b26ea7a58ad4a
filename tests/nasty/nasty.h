// Hostile EROFS images, one per bug class: valid images built by the writer from small trees, then
// patched through the format layer (decode a structure, change a field, encode it back) and given
// a fresh superblock checksum. Shared by the `erofs-nasty-images` tool (the corpus for the
// integration test) and the unit test that walks every image in-process under the sanitizers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace erofs::nasty {

enum class Expect : uint8_t {
  Corrupt,  // fsck must report at least one problem
  Valid,    // well-formed (a base image, or hostile but legal, e.g. exabytes of holes): fsck clean
};

struct NastyImage {
  std::string name;       // file name without ".img": the bug class and the variant, e.g. "name_slash"
  std::string bug_class;  // names, dirents, dots, loops, nids, sizes, inline, compressed, bomb, xattrs, symlinks, extract, base
  std::string what;       // one line: what was changed
  Expect expect = Expect::Corrupt;
  std::vector<uint8_t> bytes;
};

// Symlinks in the "extract" class point at this, relative to the directory the image is
// extracted into: a directory "canary" beside DEST holding a file "victim".
inline constexpr const char* kCanaryDir = "canary";
inline constexpr const char* kCanaryFile = "victim";

// Builds the base images (their source files and images go to `scratch_dir`, created if missing
// and left for the caller to remove) and returns every image, the bases first. Throws
// std::runtime_error when a base image does not have the shape a patch needs.
std::vector<NastyImage> generate(const std::string& scratch_dir);

// Writes NAME.img for each image and `manifest.tsv` (a '#' header line, then one line per image:
// file, class, expect ("corrupt" or "valid"), description, separated by tabs) into `out_dir`.
void write_corpus(const std::vector<NastyImage>& images, const std::string& out_dir);

const char* expect_name(Expect e);

}  // namespace erofs::nasty
