#include "writer/data/compress_pipeline.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "writer/errors.h"

namespace fs = std::filesystem;

namespace erofs::writer {
namespace {

// A directory of the test's own: CTest runs the tests of this file at the same time.
struct Files {
  fs::path dir = fs::current_path() / (std::string("pipeline.") + testing::UnitTest::GetInstance()->current_test_info()->name());
  Files() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Files() { fs::remove_all(dir); }
  std::string write(const std::string& name, const std::string& content) {
    std::ofstream(dir / name, std::ios::binary) << content;
    return (dir / name).string();
  }
};

PipelineOptions options() {
  PipelineOptions o;
  o.specs.push_back(compress::parse_spec("lz4"));
  o.segment_bytes = 64 << 10;
  o.workers = 2;
  o.keep_input = true;
  return o;
}

std::string pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = char('a' + (i * 7 + i / 100) % 26);
  return s;
}

// One file given by its path.
struct OnDisk {
  FileContent content;
  uint64_t size;
  OnDisk(std::string path, uint64_t size) : content(FileContent::at_path(std::move(path))), size(size) {}
  std::vector<PipelineFile> files() const { return {{&content, size}}; }
};

// Fed from memory: the pipeline opens nothing itself.
TEST(CompressPipeline, SegmentsComeBackInOrderWithTheirBytes) {
  const std::vector<std::string> contents = {pattern(1), pattern(4096), pattern(200000), pattern(65536)};
  std::vector<FileContent> sources;
  for (size_t i = 0; i < contents.size(); ++i)
    sources.push_back(FileContent::in_memory(std::make_shared<const std::string>(contents[i]), "f" + std::to_string(i)));
  std::vector<PipelineFile> files;
  for (size_t i = 0; i < contents.size(); ++i) files.push_back({&sources[i], contents[i].size()});
  std::vector<std::string> got(contents.size());
  size_t last_file = 0;
  run_compress_pipeline(files, options(), [&](SegmentResult&& r) {
    ASSERT_GE(r.file, last_file);
    last_file = r.file;
    EXPECT_EQ(r.offset, got[r.file].size());
    got[r.file].append(r.input.begin(), r.input.end());
    EXPECT_EQ(r.last, got[r.file].size() == contents[r.file].size());
  });
  EXPECT_EQ(got, contents);
}

// A sparse file's segments that lie in holes are filled with zeros rather than read; the data
// around and between the holes, and the last segment's end-of-file check, are unchanged.
TEST(CompressPipeline, SparseFileReadsBackWithItsHolesAsZeros) {
  Files f;
  const size_t seg = 64 << 10, size = 20 * seg + 123;
  std::string expected(size, '\0');
  const std::string path = (f.dir / "sparse").string();
  {
    std::ofstream(path, std::ios::binary);
    fs::resize_file(path, size);
    std::fstream out(path, std::ios::binary | std::ios::in | std::ios::out);
    for (size_t at : {size_t(0), 5 * seg + 100, 12 * seg - 10, size - 50}) {
      const std::string data = pattern(40);
      out.seekp(std::streamoff(at));
      out.write(data.data(), std::streamsize(data.size()));
      expected.replace(at, data.size(), data);
    }
  }
  std::string got;
  run_compress_pipeline(OnDisk(path, size).files(), options(), [&](SegmentResult&& r) {
    EXPECT_EQ(r.offset, got.size());
    got.append(r.input.begin(), r.input.end());
  });
  EXPECT_EQ(got, expected);
  try {
    run_compress_pipeline(OnDisk(path, size - 1).files(), options(), [](SegmentResult&&) {});
    ADD_FAILURE() << "no error for a sparse file that grew";
  } catch (const BuildError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": file grew"), std::string::npos) << e.what();
  }
}

// The scan recorded a size; a file found longer or shorter when its data is read stops the build
// with a message naming it, whether it is one segment or several.
TEST(CompressPipeline, AFileThatGrewOrShrankIsAnError) {
  Files f;
  for (size_t size : {size_t(10), size_t(4096), size_t(65536), size_t(150000)}) {
    const std::string path = f.write("g", pattern(size + 1));
    try {
      run_compress_pipeline(OnDisk(path, size).files(), options(), [](SegmentResult&&) {});
      ADD_FAILURE() << size << ": no error for a file that grew";
    } catch (const BuildError& e) {
      EXPECT_NE(std::string(e.what()).find(path + ": file grew"), std::string::npos) << e.what();
    }
    const std::string shorter = f.write("s", pattern(size - 1));
    try {
      run_compress_pipeline(OnDisk(shorter, size).files(), options(), [](SegmentResult&&) {});
      ADD_FAILURE() << size << ": no error for a file that shrank";
    } catch (const BuildError& e) {
      EXPECT_NE(std::string(e.what()).find(shorter + ": file shrank"), std::string::npos) << e.what();
    }
  }
}

// A segment longer than a window is read by its worker a window at a time: the pclusters are the
// ones the whole segment in memory gives, byte for byte, on a sparse file (holes skipped) too, and
// its end is checked the same way.
TEST(CompressPipeline, StreamedSegmentsGiveTheSamePclusters) {
  Files f;
  // Random letters: a pcluster takes much less than the encoder's window, so windows overlap.
  std::string data(3u << 20, '\0');
  uint32_t x = 1;
  for (auto& c : data) c = char('a' + (x = x * 1103515245 + 12345) % 13);
  const std::string path = f.write("long", data);
  const std::string sparse = (f.dir / "sparse").string();
  {
    std::ofstream(sparse, std::ios::binary);
    fs::resize_file(sparse, 3u << 20);
    std::fstream out(sparse, std::ios::binary | std::ios::in | std::ios::out);
    out.seekp(std::streamoff(1u << 20));
    out << data.substr(0, 300000);
  }
  for (const std::string& file : {path, sparse}) {
    const uint64_t size = fs::file_size(file);
    auto run = [&](uint64_t window) {
      PipelineOptions o = options();
      o.segment_bytes = 1u << 20;
      o.window_bytes = window;
      o.segment.pcluster_bytes = 16384;
      o.segment.max_extent = 128 << 10;  // the encoder works on far less than a segment at a time
      std::vector<SegmentResult> out;
      run_compress_pipeline(OnDisk(file, size).files(), o, [&](SegmentResult&& r) { out.push_back(std::move(r)); });
      return out;
    };
    const auto whole = run(1u << 20), streamed = run(64 << 10);
    ASSERT_EQ(whole.size(), streamed.size()) << file;
    for (size_t i = 0; i < whole.size(); ++i) {
      EXPECT_FALSE(whole[i].input.empty());
      EXPECT_EQ(streamed[i].input.empty(), streamed[i].size > (64u << 10)) << "a streamed segment keeps no input";
      EXPECT_EQ(whole[i].z.extents.size(), streamed[i].z.extents.size()) << file << " segment " << i;
      EXPECT_TRUE(std::equal(whole[i].z.blocks.begin(), whole[i].z.blocks.end(), streamed[i].z.blocks.begin(),
                             streamed[i].z.blocks.end()))
          << file << " segment " << i;
    }
    try {
      PipelineOptions o = options();
      o.segment_bytes = 1u << 20;
      o.window_bytes = 64 << 10;
      run_compress_pipeline(OnDisk(file, size - 1).files(), o, [](SegmentResult&&) {});
      ADD_FAILURE() << file << ": no error for a file that grew";
    } catch (const BuildError& e) {
      EXPECT_NE(std::string(e.what()).find(file + ": file grew"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace erofs::writer
