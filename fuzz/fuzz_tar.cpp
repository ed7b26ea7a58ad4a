// fuzz_tar: the input is a tar stream (plain or compressed, any header format libarchive reads).
//
// writer::scan_tar reads it (from a memfd reached by path, as `erofs mkfs --tar FILE` would); an
// input containing ".wh." is scanned a second time with --aufs and --ovlfs-strip. The scan may
// reject an input only with BuildError. When it accepts one, the tree is built into an image
// (512-byte blocks, or 4096 for inputs of odd length; --chunksize for every third input so holes
// are kept) and read back: lib::verify_image compares every entry with the tree and
// reader::fsck_image checks every structure and byte. A tree the scan accepted must build, and
// the image our own writer made must read back exactly: a BuildError there, a difference, an fsck
// problem, or the reader refusing the image (CorruptError, UnsupportedError) is a contract
// violation. Any other exception is a crash as well. Trees whose files add up to more than 16 MiB
// (sparse entries may claim terabytes) are scanned but not built.
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz/check.h"
#include "fuzz/input_file.h"
#include "reader/fsck.h"
#include "reader/image.h"
#include "writer/build_image.h"
#include "writer/errors.h"
#include "writer/source/scan_tar.h"
#include "lib/verify.h"

namespace {

namespace writer = erofs::writer;
namespace reader = erofs::reader;
namespace lib = erofs::lib;
using erofs::fuzz::violation;

constexpr uint64_t kMaxBuildBytes = 16u << 20;

// A private directory for the image and the scan's data file (they are created beside the image).
const std::string& work_dir() {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string d = std::string(tmp && *tmp ? tmp : "/tmp") + "/erofs-fuzz-tar.XXXXXX";
    if (!::mkdtemp(d.data())) {
      std::perror("fuzz_tar: mkdtemp");
      std::abort();
    }
    std::atexit([] { ::rmdir(work_dir().c_str()); });
    return d;
  }();
  return dir;
}

void build_and_check(writer::Tree& tree, size_t input_size) {
  uint64_t bytes = 0;
  for (auto& i : tree.inodes)
    if (i->is_reg()) bytes += i->size;
  if (bytes > kMaxBuildBytes) return;

  const std::string image = work_dir() + "/image";
  writer::BuildOptions o;
  o.block_size = input_size % 2 ? 4096 : 512;
  if (input_size % 3 == 0) o.chunk_size = o.block_size * 2;
  o.compression.reset();
  try {
    writer::build_image(tree, image, o);
  } catch (const writer::BuildError& e) {
    violation("an accepted tree does not build: {}", e.what());
  }
  try {
    auto problems = lib::verify_image(tree, image, {});
    if (!problems.empty()) violation("the image differs from its tree: {} (and {} more)", problems[0], problems.size() - 1);
    auto report = reader::fsck_image(image, {});
    if (!report.clean()) violation("fsck of our own image: {}", report.problems[0]);
  } catch (const reader::CorruptError& e) {
    violation("the reader refuses our own image: {}", e.what());
  } catch (const reader::UnsupportedError& e) {
    violation("the reader refuses our own image: {}", e.what());
  }
  ::unlink(image.c_str());
}

void scan_and_build(const std::string& path, const writer::TarOptions& t, size_t input_size) {
  writer::ScanResult scan;
  try {
    scan = writer::scan_tar(path, work_dir() + "/image", {}, t, nullptr);
  } catch (const writer::BuildError&) {
    return;  // a rejected archive: one line naming the entry is all that is promised
  }
  build_and_check(scan.tree, input_size);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static erofs::fuzz::InputFile input;
  const std::string& path = input.put(data, size);
  scan_and_build(path, {}, size);
  if (std::string_view(reinterpret_cast<const char*>(data), size).find(".wh.") != std::string_view::npos)
    scan_and_build(path, {.aufs = true, .ovlfs_strip = true}, size);
  return 0;
}
