// erofs::ImageBuilder: the public writer over writer::build_image and the sources.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unordered_map>

#include "erofs-kit/erofs.hpp"
#include "format/inode.h"
#include "lib/build_settings.h"
#include "lib/errors.h"
#include "lib/progress_relay.h"
#include "lib/verify.h"
#include "verity/params.h"
#include "writer/build_image.h"
#include "writer/errors.h"
#include "writer/source/scan_dir.h"
#include "writer/source/scan_mtree.h"
#include "writer/source/scan_tar.h"

namespace erofs {
namespace {

BuildSummary summary(const writer::BuildStats& st) {
  BuildSummary b;
  b.inodes = st.inodes;
  b.regular_files = st.regular_files;
  b.directories = st.directories;
  b.symlinks = st.symlinks;
  b.special_files = st.specials;
  b.hard_links = st.hard_links;
  b.bytes_in = st.bytes_in;
  b.image_bytes = st.image_bytes;
  b.compressed_files = st.compressed_files;
  b.seconds = st.seconds;
  b.compact_inodes = st.compact_inodes;
  b.extended_inodes = st.extended_inodes;
  b.data_blocks = st.data_blocks;
  b.metadata_blocks = st.meta_blocks;
  b.skipped_inputs = st.skipped_inputs;
  if (const auto& v = st.verity)
    b.verity = VeritySummary{verity::to_hex(v->root_hash), verity::to_hex(v->params.salt),
                             std::string(verity::algorithm_name(v->params.algorithm)), v->hash_offset,
                             v->params.data_block_size, v->params.hash_block_size, v->data_blocks, v->tree_bytes,
                             v->seconds};
  return b;
}

// Writes the image of `tree`, reporting progress meanwhile, then reads it back when asked to.
BuildSummary build_tree(writer::Tree& tree, uint64_t skipped, const std::string& image_path,
                        const BuildSettings& settings, writer::BuildOptions& o, lib::ProgressRelay& relay) {
  writer::BuildStats stats = writer::build_image(tree, image_path, o);
  relay.finish();
  stats.skipped_inputs = skipped;
  BuildSummary out = summary(stats);
  if (!settings.verify) return out;
  lib::VerifyOptions vo;
  vo.check_mtime = o.inode_form != writer::InodeForm::Compact;  // forced compact inodes keep no time of their own
  const auto problems = lib::verify_image(tree, image_path, vo);
  if (!problems.empty()) {
    for (const auto& p : problems) o.warn("verify: " + p);
    throw writer::BuildError(image_path + " does not match the source: " + problems.front() +
                             (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more)" : ""));
  }
  out.verified = true;
  return out;
}

// Builds the tree `scan` makes (called with the options).
template <class Scan>
Result<BuildSummary> build_from(const BuildSettings& settings, const std::string& image_path, Scan&& scan) {
  return lib::guarded<BuildSummary>([&] {
    auto o = lib::build_options(settings);
    lib::ProgressRelay relay(settings.on_progress, settings.progress_interval_ms);
    o.progress = relay.counters();
    writer::ScanResult scanned = scan(o);
    return build_tree(scanned.tree, scanned.skipped, image_path, settings, o, relay);
  });
}

uint32_t type_bits(FileType type) {
  switch (type) {
    case FileType::Regular: return S_IFREG;
    case FileType::Directory: return S_IFDIR;
    case FileType::Symlink: return S_IFLNK;
    case FileType::CharDevice: return S_IFCHR;
    case FileType::BlockDevice: return S_IFBLK;
    case FileType::Fifo: return S_IFIFO;
    case FileType::Socket: return S_IFSOCK;
  }
  return 0;
}

}  // namespace

struct ImageBuilder::Impl {
  BuildSettings settings;
  writer::Tree tree;
  std::unordered_map<std::string, writer::TreeInode*> by_path;  // "a/b"; the root is ""

  // "a/b" for "/a//b/"; an error for ".", "..", empty or over-long names.
  static Result<std::string> normalize(std::string_view path) {
    std::string out;
    size_t pos = 0;
    while (pos < path.size()) {
      size_t slash = path.find('/', pos);
      auto name = path.substr(pos, slash == std::string_view::npos ? std::string_view::npos : slash - pos);
      pos = slash == std::string_view::npos ? path.size() : slash + 1;
      if (name.empty()) continue;
      if (name == "." || name == ".." || name.size() > 255 || name.find('\0') != std::string_view::npos)
        return lib::invalid_argument("invalid name '" + std::string(name) + "' in path " + std::string(path));
      if (!out.empty()) out += '/';
      out += name;
    }
    return out;
  }

  Result<void> set_meta(writer::TreeInode& ino, const EntryMeta& meta, uint32_t type) {
    if (meta.mode & ~07777u) return lib::invalid_argument("mode holds more than permission bits");
    ino.mode = type | meta.mode;
    ino.uid = meta.uid;
    ino.gid = meta.gid;
    writer::SourceOptions owners;
    owners.all_root = settings.all_root;
    owners.force_uid = settings.force_uid;
    owners.force_gid = settings.force_gid;
    writer::apply_owner_overrides(owners, ino);
    // -T is applied by the writer, as for every source.
    ino.mtime = meta.mtime;
    ino.mtime_nsec = meta.mtime_nsec;
    if (meta.mtime_nsec >= 1000000000) return lib::invalid_argument("mtime_nsec must be below 10^9");
    ino.xattrs.clear();
    for (auto& x : meta.xattrs) ino.xattrs.emplace_back(x.name, x.value);
    std::sort(ino.xattrs.begin(), ino.xattrs.end());
    for (size_t i = 1; i < ino.xattrs.size(); ++i)
      if (ino.xattrs[i].first == ino.xattrs[i - 1].first)
        return lib::invalid_argument("xattr " + ino.xattrs[i].first + " given twice");
    return {};
  }

  // Links a new entry under its parent; `make` fills the inode.
  template <class Make>
  Result<void> add(std::string_view path, const EntryMeta& meta, uint32_t type, Make&& make) {
    auto norm = normalize(path);
    if (!norm) return norm.error();
    const std::string& p = norm.value();
    if (p.empty()) return lib::invalid_argument("the root exists already (use set_root for its metadata)");
    if (by_path.count(p)) return lib::invalid_argument(p + " was added already");
    size_t slash = p.rfind('/');
    std::string parent_path = slash == std::string::npos ? "" : p.substr(0, slash);
    auto parent = by_path.find(parent_path);
    if (parent == by_path.end() || !parent->second->is_dir())
      return Error{ErrorCode::NotFound, ENOENT, p + ": parent directory /" + parent_path + " was not added"};
    auto ino = std::make_unique<writer::TreeInode>();
    if (auto r = set_meta(*ino, meta, type); !r) return r;
    if (auto r = make(*ino, p); !r) return r;
    writer::TreeInode* raw = tree.add(std::move(ino));
    parent->second->children.push_back({p.substr(slash + 1), raw});
    by_path.emplace(p, raw);
    return {};
  }
};

ImageBuilder::ImageBuilder(BuildSettings settings) : impl_(std::make_unique<Impl>()) {
  impl_->settings = std::move(settings);
  auto root = std::make_unique<writer::TreeInode>();
  EntryMeta meta;
  meta.mode = 0755;
  (void)impl_->set_meta(*root, meta, S_IFDIR);
  impl_->tree.root = impl_->tree.add(std::move(root));
  impl_->by_path.emplace("", impl_->tree.root);
}
ImageBuilder::ImageBuilder(ImageBuilder&&) noexcept = default;
ImageBuilder& ImageBuilder::operator=(ImageBuilder&&) noexcept = default;
ImageBuilder::~ImageBuilder() = default;

Result<void> ImageBuilder::set_root(const EntryMeta& meta) {
  return impl_->set_meta(*impl_->tree.root, meta, S_IFDIR);
}

Result<void> ImageBuilder::add_directory(std::string_view path, const EntryMeta& meta) {
  return impl_->add(path, meta, S_IFDIR, [](writer::TreeInode&, const std::string&) { return Result<void>(); });
}

Result<void> ImageBuilder::add_file(std::string_view path, const EntryMeta& meta, std::string_view content) {
  return impl_->add(path, meta, S_IFREG, [&](writer::TreeInode& ino, const std::string& p) {
    ino.size = content.size();
    ino.image_path = p;
    ino.content = writer::FileContent::in_memory(std::make_shared<const std::string>(content), p);
    return Result<void>();
  });
}

Result<void> ImageBuilder::add_file_from(std::string_view path, const EntryMeta& meta, const std::string& source) {
  return impl_->add(path, meta, S_IFREG, [&](writer::TreeInode& ino, const std::string& p) -> Result<void> {
    struct stat st;
    if (::stat(source.c_str(), &st) != 0)
      return Error{errno == ENOENT ? ErrorCode::NotFound : ErrorCode::Io, errno, source + ": " + std::strerror(errno)};
    if (!S_ISREG(st.st_mode)) return lib::invalid_argument(source + ": not a regular file");
    ino.size = uint64_t(st.st_size);
    ino.content = writer::FileContent::at_path(source);
    ino.image_path = p;
    return {};
  });
}

Result<void> ImageBuilder::add_symlink(std::string_view path, const EntryMeta& meta, std::string_view target) {
  return impl_->add(path, meta, S_IFLNK, [&](writer::TreeInode& ino, const std::string&) -> Result<void> {
    if (target.empty() || target.size() > 4095) return lib::invalid_argument("symlink target must be 1 to 4095 bytes");
    ino.symlink_target = std::string(target);
    ino.size = target.size();
    return {};
  });
}

Result<void> ImageBuilder::add_special(std::string_view path, const EntryMeta& meta, FileType type,
                                       uint32_t rdev_major, uint32_t rdev_minor) {
  if (type != FileType::CharDevice && type != FileType::BlockDevice && type != FileType::Fifo &&
      type != FileType::Socket)
    return lib::invalid_argument("add_special takes a device, FIFO or socket type");
  uint32_t major = 0, minor = 0;
  format::decode_rdev(format::encode_rdev(rdev_major, rdev_minor), major, minor);
  if (major != rdev_major || minor != rdev_minor)
    return lib::invalid_argument("device number does not fit (major at most 4095, minor at most 1048575)");
  return impl_->add(path, meta, type_bits(type), [&](writer::TreeInode& ino, const std::string&) {
    ino.rdev_major = rdev_major;
    ino.rdev_minor = rdev_minor;
    return Result<void>();
  });
}

Result<void> ImageBuilder::add_hard_link(std::string_view path, std::string_view target) {
  auto t = Impl::normalize(target);
  if (!t) return t.error();
  auto it = impl_->by_path.find(t.value());
  if (it == impl_->by_path.end())
    return Error{ErrorCode::NotFound, ENOENT, "hard link target " + std::string(target) + " was not added"};
  writer::TreeInode* existing = it->second;
  if (existing->is_dir()) return lib::invalid_argument("cannot hard-link directory " + std::string(target));
  auto norm = Impl::normalize(path);
  if (!norm) return norm.error();
  const std::string& p = norm.value();
  if (p.empty() || impl_->by_path.count(p)) return lib::invalid_argument(p + " was added already");
  size_t slash = p.rfind('/');
  auto parent = impl_->by_path.find(slash == std::string::npos ? "" : p.substr(0, slash));
  if (parent == impl_->by_path.end() || !parent->second->is_dir())
    return Error{ErrorCode::NotFound, ENOENT, p + ": parent directory was not added"};
  parent->second->children.push_back({p.substr(slash + 1), existing});
  impl_->by_path.emplace(p, existing);
  return {};
}

Result<void> ImageBuilder::add_xattr(std::string_view path, const Xattr& xattr) {
  auto norm = Impl::normalize(path);
  if (!norm) return norm.error();
  auto it = impl_->by_path.find(norm.value());
  if (it == impl_->by_path.end()) return Error{ErrorCode::NotFound, ENOENT, std::string(path) + " was not added"};
  if (xattr.name.empty()) return lib::invalid_argument("empty xattr name");
  auto& list = it->second->xattrs;
  auto pos = std::lower_bound(list.begin(), list.end(), xattr.name,
                              [](const auto& entry, const std::string& name) { return entry.first < name; });
  if (pos != list.end() && pos->first == xattr.name) pos->second = xattr.value;
  else list.insert(pos, {xattr.name, xattr.value});
  return {};
}

Result<BuildSummary> ImageBuilder::write(const std::string& image_path) {
  return lib::guarded<BuildSummary>([&] {
    auto o = lib::build_options(impl_->settings);
    lib::ProgressRelay relay(impl_->settings.on_progress, impl_->settings.progress_interval_ms);
    o.progress = relay.counters();
    impl_->tree.finish();
    return build_tree(impl_->tree, 0, image_path, impl_->settings, o, relay);
  });
}

Result<BuildSummary> ImageBuilder::from_directory(const std::string& source_dir, const std::string& image_path,
                                                  const BuildSettings& settings) {
  return build_from(settings, image_path, [&](const writer::BuildOptions& o) {
    return writer::scan_directory(source_dir, o.source, o.warn);
  });
}

Result<BuildSummary> ImageBuilder::from_tar(const std::string& archive, const std::string& image_path,
                                            const BuildSettings& settings) {
  return build_from(settings, image_path, [&](const writer::BuildOptions& o) {
    return writer::scan_tar(archive, image_path, o.source, {settings.aufs, settings.ovlfs_strip}, o.warn);
  });
}

Result<BuildSummary> ImageBuilder::from_mtree(const std::string& manifest, const std::string& content_root,
                                              const std::string& image_path, const BuildSettings& settings) {
  return build_from(settings, image_path, [&](const writer::BuildOptions& o) {
    return writer::scan_mtree(manifest, content_root, o.source, o.warn);
  });
}

}  // namespace erofs
