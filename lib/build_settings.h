// The one conversion from the public build settings (erofs mkfs's option text: "-zlz4hc,12",
// "-Eztailpacking", "-U random", ...) to the writer's build options. Every way to build goes
// through it: the erofs command, the C++ API and the C API all fill a BuildSettings and build
// through erofs::ImageBuilder, so they cannot disagree about what an option means.
#pragma once

#include "erofs-kit/erofs.hpp"
#include "writer/options.h"

namespace erofs::lib {

// Throws writer::OptionError naming the part of the text that is malformed.
writer::BuildOptions build_options(const BuildSettings& settings);

}  // namespace erofs::lib
