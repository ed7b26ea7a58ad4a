// The image after the data: the shared xattrs, the inode area (each inode with its xattr body,
// indexes and inline data), the directory blocks, and last the superblock, whose UUID (unless
// given) is derived from everything written before it. The caller commits the image (after a
// hash tree, with --verity).
#pragma once

#include "writer/data/data_writer.h"
#include "writer/data/output_image.h"
#include "writer/layout/inode_planner.h"
#include "writer/layout/xattr_plan.h"
#include "writer/options.h"
#include "writer/spill_file.h"

namespace erofs::writer {

// Returns the filesystem's size in bytes (the superblock's block count times the block size).
uint64_t write_metadata(OutputImage& out, const SpillFile& tails, InodePlans& plans, const XattrPlan& xattrs,
                        const DataArea& data, const BuildOptions& options, BuildStats& stats);

}  // namespace erofs::writer
