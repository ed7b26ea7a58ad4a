// Reads files (through writer/source/file_content.h: the pipeline opens nothing itself),
// compresses their segments on a pool of workers and hands the results back in file and segment
// order, with the input in flight bounded in bytes. The output does not depend on the number of
// workers: segment boundaries are fixed by the segment size alone.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "compress/codec.h"
#include "compress/uninit_bytes.h"
#include "writer/data/zsegment.h"
#include "writer/source/file_content.h"

namespace erofs::writer {

struct PipelineOptions {
  std::vector<compress::Spec> specs;
  ZSegmentOptions segment;          // last_segment and tail are set per segment
  uint64_t segment_bytes = 16 << 20;  // input per compression job: the cuts fix where pclusters start
  // Segments up to this long are read whole by the reading thread; longer ones are read by their
  // worker a window at a time (memory per worker: a window and an extent, not a segment).
  uint64_t window_bytes = 4 << 20;
  unsigned workers = 1;
  bool keep_input = false;          // hand each segment's raw input back too
};

struct PipelineFile {
  const FileContent* content;  // kept alive by the caller until run() returns
  uint64_t size;
  unsigned algorithm = 0;       // index into PipelineOptions::specs
  uint32_t pcluster_bytes = 0;  // 0: PipelineOptions::segment.pcluster_bytes
  TailMode tail = TailMode::None;  // what the file's last piece may become
};

struct SegmentResult {
  size_t file = 0;                  // index into the files given to run()
  uint64_t offset = 0;              // first byte of the segment in the file
  uint64_t size = 0;                // bytes of the segment
  bool last = false;                // the file's last segment
  ZSegment z;
  // With keep_input: the raw bytes of a segment of one window or less, unless z.tail holds them all.
  compress::UninitHeapBytes input;
};

// Calls `sink` on the calling thread for every segment, in order. Files of size 0 produce no
// segment. Throws BuildError (naming the file) on read errors, after the workers stopped.
void run_compress_pipeline(const std::vector<PipelineFile>& files, const PipelineOptions& options,
                           const std::function<void(SegmentResult&&)>& sink);

}  // namespace erofs::writer
