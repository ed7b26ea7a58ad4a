// erofs-nasty-images OUTDIR: writes the hostile-image corpus (one image per bug class, and the
// valid base images they were patched from) and OUTDIR/manifest.tsv.
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

#include "tests/nasty/nasty.h"

int main(int argc, char** argv) {
  if (argc != 2 || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: erofs-nasty-images OUTDIR\n");
    return 2;
  }
  const std::string out = argv[1];
  const std::string scratch = out + "/.base." + std::to_string(::getpid());
  int rc = 0;
  try {
    const auto images = erofs::nasty::generate(scratch);
    erofs::nasty::write_corpus(images, out);
    std::printf("%zu images and manifest.tsv written to %s\n", images.size(), out.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    rc = 1;
  }
  std::error_code ec;
  std::filesystem::remove_all(scratch, ec);
  return rc;
}
