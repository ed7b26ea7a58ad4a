// The C API (erofs-kit/erofs.h) over the C++ one.
#include "erofs-kit/erofs.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>
#include <new>
#include <optional>
#include <string>

#include "erofs-kit/erofs.hpp"

struct erofs_error {
  erofs::Error error;
};

struct erofs_image {
  erofs::Image image;
};

struct erofs_builder {
  erofs::BuildSettings settings;
  std::optional<erofs::ImageBuilder> entries;  // made on the first entry, from the settings then
  void (*progress_fn)(void*, const erofs_progress*) = nullptr;
  void* progress_ctx = nullptr;
  void (*warning_fn)(void*, const char*) = nullptr;
  void* warning_ctx = nullptr;
};

namespace {

int fail(erofs_error** out, erofs::Error e) {
  if (out) *out = new (std::nothrow) erofs_error{std::move(e)};
  return -1;
}

int invalid(erofs_error** out, std::string message) {
  return fail(out, {erofs::ErrorCode::InvalidArgument, 0, std::move(message)});
}

template <class T>
int check(const erofs::Result<T>& r, erofs_error** out) {
  return r ? 0 : fail(out, r.error());
}

erofs::EntryMeta meta_of(const erofs_entry_meta* m, uint32_t default_mode) {
  erofs::EntryMeta meta;
  meta.mode = default_mode;
  if (m) {
    meta.mode = m->mode;
    meta.uid = m->uid;
    meta.gid = m->gid;
    meta.mtime = m->mtime;
    meta.mtime_nsec = m->mtime_nsec;
  }
  return meta;
}

// Copies `text` into a fixed C string field (the verity texts always fit: at most 128, 512 and 6
// characters).
template <size_t N>
void copy_text(const std::string& text, char (&field)[N]) {
  const size_t n = std::min(text.size(), N - 1);
  std::memcpy(field, text.data(), n);
  field[n] = 0;
}

void fill_summary(const erofs::BuildSummary& s, erofs_build_summary* out) {
  if (!out) return;
  *out = {s.inodes,         s.regular_files,   s.directories, s.symlinks,        s.special_files,
          s.hard_links,     s.bytes_in,        s.image_bytes, s.compressed_files, s.seconds,
          s.compact_inodes, s.extended_inodes, s.data_blocks, s.metadata_blocks,  s.skipped_inputs,
          s.verified ? 1 : 0,
          0, {}, {}, {}, 0, 0, 0, 0, 0, 0};  // no verity tree unless filled in below
  if (const auto& v = s.verity) {
    out->verity = 1;
    copy_text(v->root_hash, out->verity_root_hash);
    copy_text(v->salt, out->verity_salt);
    copy_text(v->hash_algorithm, out->verity_hash_algorithm);
    out->verity_hash_offset = v->hash_offset;
    out->verity_data_blocks = v->data_blocks;
    out->verity_tree_bytes = v->tree_bytes;
    out->verity_data_block_size = v->data_block_size;
    out->verity_hash_block_size = v->hash_block_size;
    out->verity_seconds = v->seconds;
  }
}

bool parse_u64(const char* text, uint64_t& out) {
  if (!text || !*text) return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (errno || *end || text[0] == '-') return false;
  out = v;
  return true;
}

bool parse_bool(const char* text, bool& out) {
  std::string t = text ? text : "";
  if (t == "1" || t == "true" || t == "yes") out = true;
  else if (t == "0" || t == "false" || t == "no") out = false;
  else return false;
  return true;
}

// The callbacks the C++ settings get, forwarding to the C ones.
erofs::BuildSettings settings_with_callbacks(const erofs_builder* b) {
  erofs::BuildSettings s = b->settings;
  if (b->progress_fn)
    s.on_progress = [fn = b->progress_fn, ctx = b->progress_ctx](const erofs::Progress& p) {
      erofs_progress c{p.scanned ? 1 : 0, p.total_files, p.total_bytes, p.files, p.bytes_in, p.bytes_out,
                       p.packed_bytes, p.packed_done};
      fn(ctx, &c);
    };
  if (b->warning_fn)
    s.on_warning = [fn = b->warning_fn, ctx = b->warning_ctx](const std::string& line) { fn(ctx, line.c_str()); };
  return s;
}

erofs::ImageBuilder& entries(erofs_builder* b) {
  if (!b->entries) b->entries.emplace(settings_with_callbacks(b));
  return *b->entries;
}

template <class Build>
int build_with(erofs_builder* b, erofs_build_summary* summary, erofs_error** error, Build&& build) {
  auto r = build(settings_with_callbacks(b));
  if (!r) return fail(error, r.error());
  fill_summary(r.value(), summary);
  return 0;
}

}  // namespace

extern "C" {

int erofs_error_code(const erofs_error* e) { return int(e->error.code); }
int erofs_error_errno(const erofs_error* e) { return e->error.sys_errno; }
const char* erofs_error_message(const erofs_error* e) { return e->error.message.c_str(); }
void erofs_error_free(erofs_error* e) { delete e; }
void erofs_free(void* p) { std::free(p); }

erofs_image* erofs_image_open(const char* path, erofs_error** error) {
  auto r = erofs::Image::open(path);
  if (!r) {
    fail(error, r.error());
    return nullptr;
  }
  return new erofs_image{std::move(r).value()};
}

void erofs_image_close(erofs_image* image) { delete image; }

uint32_t erofs_image_block_size(const erofs_image* image) { return image->image.info().block_size; }

int erofs_image_stat(const erofs_image* image, const char* path, erofs_stat* out, erofs_error** error) {
  auto r = image->image.stat(path);
  if (!r) return fail(error, r.error());
  const auto& f = r.value();
  *out = {f.ino, f.mode, f.uid, f.gid, f.nlink, f.size, f.mtime, f.mtime_nsec, f.rdev_major, f.rdev_minor};
  return 0;
}

int erofs_image_list(const erofs_image* image, const char* path,
                     int (*fn)(void*, const char*, uint64_t, uint32_t), void* ctx, erofs_error** error) {
  auto r = image->image.list(path);
  if (!r) return fail(error, r.error());
  for (const auto& e : r.value()) {
    auto st = image->image.stat(e.ino);
    if (!st) return fail(error, st.error());
    if (fn(ctx, e.name.c_str(), e.ino, st.value().mode & 0170000u)) break;
  }
  return 0;
}

int erofs_image_read(const erofs_image* image, uint64_t ino, uint64_t offset, void* buffer, size_t length,
                     size_t* done, erofs_error** error) {
  auto r = image->image.read(ino, offset, buffer, length);
  if (!r) return fail(error, r.error());
  if (done) *done = r.value();
  return 0;
}

int erofs_image_readlink(const erofs_image* image, const char* path, char** target, erofs_error** error) {
  auto r = image->image.readlink(path);
  if (!r) return fail(error, r.error());
  *target = strdup(r.value().c_str());
  return *target ? 0 : fail(error, {erofs::ErrorCode::Io, ENOMEM, "out of memory"});
}

int erofs_image_extract(const erofs_image* image, const char* destination, erofs_error** error) {
  return check(image->image.extract(destination), error);
}

int erofs_image_check(const erofs_image* image, int check_data, size_t* problems,
                      void (*on_problem)(void*, const char*), void* ctx, erofs_error** error) {
  auto r = image->image.check(check_data != 0);
  if (!r) return fail(error, r.error());
  if (problems) *problems = r.value().problems.size();
  if (on_problem)
    for (const auto& line : r.value().problems) on_problem(ctx, line.c_str());
  return 0;
}

erofs_builder* erofs_builder_new(erofs_error** error) {
  auto* b = new (std::nothrow) erofs_builder;
  if (!b) fail(error, {erofs::ErrorCode::Io, ENOMEM, "out of memory"});
  return b;
}

void erofs_builder_free(erofs_builder* builder) { delete builder; }

int erofs_builder_set(erofs_builder* b, const char* key_text, const char* value, erofs_error** error) {
  if (b->entries) return invalid(error, "settings must come before the first entry");
  std::string key = key_text ? key_text : "", v = value ? value : "";
  auto& s = b->settings;
  uint64_t n = 0;
  bool flag = false;
  auto number = [&](auto& field) {
    if (!parse_u64(value, n) || n > std::numeric_limits<std::remove_reference_t<decltype(field)>>::max())
      return invalid(error, "setting " + key + ": '" + v + "' is not a number in range");
    field = decltype(field)(n);
    return 0;
  };
  auto boolean = [&](bool& field) {
    if (!parse_bool(value, flag)) return invalid(error, "setting " + key + ": '" + v + "' is not 1 or 0");
    field = flag;
    return 0;
  };
  if (key == "z") s.compression = v;
  else if (key == "E") s.extended = v;
  else if (key == "U") s.uuid = v;
  else if (key == "L") s.label = v;
  else if (key == "compress-hints") s.compress_hints = v;
  else if (key == "hot-list") s.hot_list = v;
  else if (key == "exclude-path") s.exclude_paths.push_back(v);
  else if (key == "exclude-regex") s.exclude_regexes.push_back(v);
  else if (key == "C") return number(s.pcluster_bytes);
  else if (key == "b") return number(s.block_size);
  else if (key == "workers") return number(s.workers);
  else if (key == "chunksize") return number(s.chunk_size);
  else if (key == "T") {
    int64_t t = 0;
    if (number(t)) return -1;
    s.timestamp = t;
  } else if (key == "force-uid" || key == "force-gid") {
    uint32_t id = 0;
    if (number(id)) return -1;
    (key == "force-uid" ? s.force_uid : s.force_gid) = id;
  } else if (key == "all-root") return boolean(s.all_root);
  else if (key == "aufs") return boolean(s.aufs);
  else if (key == "ovlfs-strip") return boolean(s.ovlfs_strip);
  else if (key == "mkfs-time") return boolean(s.mkfs_time);
  else if (key == "ignore-unreadable") return boolean(s.ignore_unreadable);
  else if (key == "verify") return boolean(s.verify);
  else if (key == "verity") s.verity = v;
  else if (key == "verity-salt") s.verity_salt = v;
  else if (key == "verity-file") s.verity_file = v;
  else if (key == "root-hash-file") s.root_hash_file = v;
  else return invalid(error, "unknown setting '" + key + "'");
  return 0;
}

void erofs_builder_on_progress(erofs_builder* b, void (*fn)(void*, const erofs_progress*), void* ctx,
                               unsigned interval_ms) {
  b->progress_fn = fn;
  b->progress_ctx = ctx;
  b->settings.progress_interval_ms = interval_ms;
}

void erofs_builder_on_warning(erofs_builder* b, void (*fn)(void*, const char*), void* ctx) {
  b->warning_fn = fn;
  b->warning_ctx = ctx;
}

int erofs_builder_set_root(erofs_builder* b, const erofs_entry_meta* meta, erofs_error** error) {
  return check(entries(b).set_root(meta_of(meta, 0755)), error);
}

int erofs_builder_add_directory(erofs_builder* b, const char* path, const erofs_entry_meta* meta,
                                erofs_error** error) {
  return check(entries(b).add_directory(path, meta_of(meta, 0755)), error);
}

int erofs_builder_add_file(erofs_builder* b, const char* path, const erofs_entry_meta* meta, const void* data,
                           size_t length, erofs_error** error) {
  return check(entries(b).add_file(path, meta_of(meta, 0644), {static_cast<const char*>(data), length}), error);
}

int erofs_builder_add_file_from(erofs_builder* b, const char* path, const erofs_entry_meta* meta,
                                const char* source, erofs_error** error) {
  return check(entries(b).add_file_from(path, meta_of(meta, 0644), source), error);
}

int erofs_builder_add_symlink(erofs_builder* b, const char* path, const erofs_entry_meta* meta, const char* target,
                              erofs_error** error) {
  return check(entries(b).add_symlink(path, meta_of(meta, 0777), target), error);
}

int erofs_builder_add_special(erofs_builder* b, const char* path, const erofs_entry_meta* meta, uint32_t type_mode,
                              uint32_t rdev_major, uint32_t rdev_minor, erofs_error** error) {
  erofs::FileType type;
  switch (type_mode & 0170000u) {
    case 0020000u: type = erofs::FileType::CharDevice; break;
    case 0060000u: type = erofs::FileType::BlockDevice; break;
    case 0010000u: type = erofs::FileType::Fifo; break;
    case 0140000u: type = erofs::FileType::Socket; break;
    default: return invalid(error, "type_mode must be S_IFCHR, S_IFBLK, S_IFIFO or S_IFSOCK");
  }
  return check(entries(b).add_special(path, meta_of(meta, 0644), type, rdev_major, rdev_minor), error);
}

int erofs_builder_add_hard_link(erofs_builder* b, const char* path, const char* target, erofs_error** error) {
  return check(entries(b).add_hard_link(path, target), error);
}

int erofs_builder_add_xattr(erofs_builder* b, const char* path, const char* name, const void* value, size_t length,
                            erofs_error** error) {
  return check(entries(b).add_xattr(path, {name, std::string(static_cast<const char*>(value), length)}), error);
}

int erofs_builder_write(erofs_builder* b, const char* image_path, erofs_build_summary* summary, erofs_error** error) {
  auto r = entries(b).write(image_path);
  if (!r) return fail(error, r.error());
  fill_summary(r.value(), summary);
  return 0;
}

int erofs_build_directory(erofs_builder* b, const char* source_dir, const char* image_path,
                          erofs_build_summary* summary, erofs_error** error) {
  return build_with(b, summary, error, [&](const erofs::BuildSettings& s) {
    return erofs::ImageBuilder::from_directory(source_dir, image_path, s);
  });
}

int erofs_build_tar(erofs_builder* b, const char* archive, const char* image_path, erofs_build_summary* summary,
                    erofs_error** error) {
  return build_with(b, summary, error, [&](const erofs::BuildSettings& s) {
    return erofs::ImageBuilder::from_tar(archive, image_path, s);
  });
}

int erofs_build_mtree(erofs_builder* b, const char* manifest, const char* content_root, const char* image_path,
                      erofs_build_summary* summary, erofs_error** error) {
  return build_with(b, summary, error, [&](const erofs::BuildSettings& s) {
    return erofs::ImageBuilder::from_mtree(manifest, content_root ? content_root : "", image_path, s);
  });
}

}  // extern "C"
