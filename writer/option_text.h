// mkfs.erofs's spellings of build options (-z, -C, -E, -U, --compress-hints), turned into
// BuildOptions. Shared by the command line and the library so both accept the same text.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "writer/options.h"

namespace erofs::writer {

// The text names something unknown or malformed; the message says which part.
class OptionError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// -U: "random", "clear" or a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx); empty keeps the default.
void apply_uuid(const std::string& text, BuildOptions& options);

// -E: a comma-separated list (force-inode-compact, force-inode-extended, legacy-compress,
// ztailpacking, fragments, all-fragments, dedupe).
void apply_extended_options(const std::string& list, BuildOptions& options);

// -z: "ALG[,LEVEL...]" or two of them joined by ':' (the second one is for compress hints).
void apply_algorithms(const std::string& text, BuildOptions& options);

// mkfs.erofs's hint file: one "PCLUSTER_BYTES REGEX [ALGORITHM_INDEX]" per line, '#' comments.
std::vector<CompressHint> read_compress_hints(const std::string& path);

// --hot-list: one path in the image per line ("usr/bin/sh" or "/usr/bin/sh"), '#' comments.
std::vector<std::string> read_hot_list(const std::string& path);

// Called once the text options are applied: checks that -E and -C come with -z and sets the
// pcluster size, the worker count and the hints.
void finish_compression_options(BuildOptions& options, uint32_t pcluster_bytes, unsigned workers,
                                std::vector<CompressHint> hints);

}  // namespace erofs::writer
