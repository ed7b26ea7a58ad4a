// The data phase: file contents, symlink targets and the packed inode, appended in depth-first
// name order (reading a subtree reads the image forward), each inode's plan completed with where
// its data went. Compressed files go through CompressedFiles; flat and chunk-based files are
// copied as they are; tails that go inline wait in `tails` for the inode area.
#pragma once

#include <memory>
#include <string>

#include "writer/data/compressed_files.h"
#include "writer/data/output_image.h"
#include "writer/layout/inode_planner.h"
#include "writer/options.h"
#include "writer/spill_file.h"
#include "writer/source/tree.h"

namespace erofs::writer {

struct DataArea {
  bool uses_chunks = false;
  std::unique_ptr<CompressedFiles> compressed;  // with -z: what the superblock records about compression
  const Plan* packed = nullptr;                 // the packed inode (fragments), when there is one
};

// `target`: the image's path, beside which the fragments wait.
DataArea write_data(OutputImage& out, SpillFile& tails, Tree& tree, InodePlans& plans, const BuildOptions& options,
                    const std::string& target, BuildStats& stats);

}  // namespace erofs::writer
