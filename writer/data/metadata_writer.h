// The image after the data: the shared xattrs, the inode area (each inode with its xattr body,
// indexes and inline data), the directory blocks, and last the superblock, whose UUID (unless
// given) is derived from everything written before it; then the image is committed under its name.
#pragma once

#include "writer/data/data_writer.h"
#include "writer/data/output_image.h"
#include "writer/layout/inode_planner.h"
#include "writer/layout/xattr_plan.h"
#include "writer/options.h"
#include "writer/spill_file.h"

namespace erofs::writer {

void write_metadata_and_commit(OutputImage& out, const SpillFile& tails, InodePlans& plans, const XattrPlan& xattrs,
                               const DataArea& data, const BuildOptions& options, BuildStats& stats);

}  // namespace erofs::writer
