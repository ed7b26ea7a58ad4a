// erofs::Image: the public reader over reader::Image.
#include <sys/stat.h>

#include <fmt/format.h>

#include "erofs-kit/erofs.hpp"
#include "lib/errors.h"
#include "reader/extract.h"
#include "reader/fsck.h"
#include "reader/image.h"

namespace erofs {

struct Image::Impl {
  std::string path;
  std::unique_ptr<reader::Image> image;
};

namespace {

FileType file_type(uint32_t mode) {
  switch (mode & S_IFMT) {
    case S_IFDIR: return FileType::Directory;
    case S_IFLNK: return FileType::Symlink;
    case S_IFCHR: return FileType::CharDevice;
    case S_IFBLK: return FileType::BlockDevice;
    case S_IFIFO: return FileType::Fifo;
    case S_IFSOCK: return FileType::Socket;
    default: return FileType::Regular;
  }
}

FileInfo file_info(const reader::Inode& i) {
  FileInfo f;
  f.ino = i.nid;
  f.type = file_type(i.mode);
  f.mode = i.mode;
  f.uid = i.uid;
  f.gid = i.gid;
  f.size = i.size;
  f.mtime = i.mtime;
  f.mtime_nsec = i.mtime_nsec;
  f.nlink = i.nlink;
  f.rdev_major = i.rdev_major;
  f.rdev_minor = i.rdev_minor;
  return f;
}

}  // namespace

Image::Image(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Image::Image(Image&&) noexcept = default;
Image& Image::operator=(Image&&) noexcept = default;
Image::~Image() = default;

Result<Image> Image::open(const std::string& path, const OpenSettings& settings) {
  return lib::guarded<Image>([&] {
    auto impl = std::make_unique<Impl>();
    impl->path = path;
    reader::OpenOptions o;
    o.verify_checksum = settings.verify_checksum;
    o.pcluster_cache_bytes = settings.cache_bytes;
    impl->image = reader::Image::open(path, o);
    return Image(std::move(impl));
  });
}

ImageInfo Image::info() const {
  const auto& sb = impl_->image->superblock();
  ImageInfo info;
  info.block_size = impl_->image->block_size();
  info.image_bytes = impl_->image->image_size();
  info.inodes = sb.inos;
  info.root_ino = impl_->image->root_nid();
  info.uuid = sb.uuid_text();
  info.label = sb.label();
  return info;
}

Result<FileInfo> Image::stat(std::string_view path) const {
  return lib::guarded<FileInfo>([&] { return file_info(impl_->image->resolve(path)); });
}

Result<FileInfo> Image::stat(uint64_t ino) const {
  return lib::guarded<FileInfo>([&] { return file_info(impl_->image->inode(ino)); });
}

Result<std::vector<DirEntry>> Image::list(std::string_view path) const {
  return lib::guarded<std::vector<DirEntry>>([&] {
    auto dir = impl_->image->resolve(path);
    if (!dir.is_dir()) throw reader::IoError(std::string(path) + ": not a directory", ENOTDIR);
    std::vector<DirEntry> entries;
    impl_->image->read_dir(dir, [&](const reader::DirEntry& e) {
      if (e.name != "." && e.name != "..")
        entries.push_back({e.name, e.nid, file_type(impl_->image->inode(e.nid).mode)});
      return true;
    });
    return entries;
  });
}

Result<size_t> Image::read(uint64_t ino, uint64_t offset, void* buffer, size_t length) const {
  return lib::guarded<size_t>([&] {
    auto file = impl_->image->inode(ino);
    if (!file.is_reg()) throw reader::IoError(fmt::format("inode {}: not a regular file", ino), EINVAL);
    return impl_->image->read(file, offset, {static_cast<uint8_t*>(buffer), length});
  });
}

Result<std::string> Image::read_file(std::string_view path) const {
  return lib::guarded<std::string>([&] {
    auto file = impl_->image->resolve(path);
    if (!file.is_reg()) throw reader::IoError(std::string(path) + ": not a regular file", EINVAL);
    std::string content(file.size, '\0');
    size_t got = impl_->image->read(file, 0, {reinterpret_cast<uint8_t*>(content.data()), content.size()});
    if (got != content.size()) throw reader::CorruptError(std::string(path) + ": shorter than its size");
    return content;
  });
}

Result<std::string> Image::readlink(std::string_view path) const {
  return lib::guarded<std::string>([&] {
    auto link = impl_->image->resolve(path);
    if (!link.is_symlink()) throw reader::IoError(std::string(path) + ": not a symbolic link", EINVAL);
    return impl_->image->readlink(link);
  });
}

Result<std::vector<Xattr>> Image::xattrs(std::string_view path) const {
  return lib::guarded<std::vector<Xattr>>([&] {
    std::vector<Xattr> out;
    for (auto& x : impl_->image->xattrs(impl_->image->resolve(path))) out.push_back({x.name, x.value});
    return out;
  });
}

Result<ExtractSummary> Image::extract(const std::string& destination, const ExtractSettings& settings) const {
  return lib::guarded<ExtractSummary>([&] {
    reader::ExtractOptions o;
    o.subtree = settings.path;
    o.owners = settings.owners;
    o.xattrs = settings.xattrs;
    o.workers = settings.workers;
    o.warn = settings.on_warning;
    o.error = settings.on_error;
    if (settings.on_progress)
      o.progress = [&](const reader::ExtractProgress& p) { settings.on_progress({p.entries, p.total_inodes, p.bytes}); };
    o.progress_interval_ms = settings.progress_interval_ms;
    const reader::ExtractStats s = reader::extract_image(*impl_->image, destination, o);
    return ExtractSummary{s.directories, s.files, s.symlinks, s.specials, s.hard_links, s.bytes, s.errors, s.warnings};
  }, ErrorCode::Corrupt);
}

Result<void> Image::extract(const std::string& destination, std::string_view path, bool owners) const {
  ExtractSettings settings;
  settings.path = std::string(path);
  settings.owners = owners;
  std::string first;
  settings.on_error = [&](const std::string& m) {
    if (first.empty()) first = m;
  };
  auto r = extract(destination, settings);
  if (!r) return r.error();
  if (r.value().errors)
    return Error{ErrorCode::Corrupt, 0,
                 r.value().errors == 1 ? first : fmt::format("{} (and {} more entries)", first, r.value().errors - 1)};
  return {};
}

Result<CheckReport> Image::check(const CheckSettings& settings) const {
  return lib::guarded<CheckReport>([&] {
    reader::FsckOptions o;
    o.check_data = settings.data;
    o.workers = settings.workers;
    auto r = reader::fsck_image(impl_->path, o);
    return CheckReport{std::move(r.problems), r.inodes, r.directories, r.files, r.data_bytes};
  });
}

Result<CheckReport> Image::check(bool data) const { return check(CheckSettings{data, 0}); }

}  // namespace erofs
