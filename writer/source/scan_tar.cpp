#include "writer/source/scan_tar.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <grp.h>
#include <locale.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <limits>
#include <map>

#include "format/xattr.h"
#include "writer/errors.h"
#include "writer/source/tree_assembler.h"

namespace erofs::writer {
namespace {

constexpr uint16_t kAclUserObj = 1, kAclUser = 2, kAclGroupObj = 4, kAclGroup = 8, kAclMask = 0x10, kAclOther = 0x20;
constexpr uint32_t kAclUndefinedId = 0xFFFFFFFF;
constexpr uint64_t kDataAlign = 4096;  // file starts in the data file: holes line up with its blocks

// The unlinked file the regular files' contents are copied into.
class DataFile {
 public:
  explicit DataFile(const std::string& beside) {
    std::string path = beside + ".tar-data.XXXXXX";
    fd = ::mkostemp(path.data(), O_CLOEXEC);
    if (fd < 0) throw BuildError(errno_message("cannot create " + path, errno));
    ::unlink(path.c_str());
  }
  ~DataFile() { ::close(fd); }
  DataFile(const DataFile&) = delete;
  DataFile& operator=(const DataFile&) = delete;

  void write(const void* p, size_t n, uint64_t off) {
    auto* b = static_cast<const uint8_t*>(p);
    while (n) {
      ssize_t w = ::pwrite(fd, b, n, off_t(off));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) throw BuildError(errno_message("writing a temporary file beside the image", errno));
      b += w;
      n -= size_t(w);
      off += uint64_t(w);
    }
    length = std::max(length, off);
  }
  // Makes the file at least `n` bytes long (a trailing hole of the last file).
  void extend(uint64_t n) {
    if (n <= length) return;
    if (::ftruncate(fd, off_t(n)) != 0) throw BuildError(errno_message("extending a temporary file beside the image", errno));
    length = n;
  }

  int fd = -1;
  uint64_t end = 0;     // where the next file's content goes (before alignment)
  uint64_t length = 0;  // the file's size
};

// Names are taken as the bytes the archive holds. libarchive converts PAX (UTF-8) names to the
// locale's character set: under a UTF-8 locale it would also normalise them (two names that
// differ only in Unicode normalisation would become one), under the C locale it keeps the bytes
// and only warns that they could not be converted. So the scan runs under the C locale and those
// warnings are dropped.
class CLocale {
 public:
  CLocale() {
    loc_ = ::newlocale(LC_CTYPE_MASK, "C", nullptr);
    if (loc_) old_ = ::uselocale(loc_);
  }
  ~CLocale() {
    if (loc_) {
      ::uselocale(old_);
      ::freelocale(loc_);
    }
  }

 private:
  locale_t loc_ = nullptr, old_ = nullptr;
};

struct ArchiveFree {
  void operator()(archive* a) const { archive_read_free(a); }
};

// "Pathname can't be converted from UTF-8 to current locale." and the like: the bytes are kept.
bool conversion_warning(archive* a) {
  const char* m = archive_error_string(a);
  return m && std::strstr(m, "can't be converted");
}

uint16_t acl_tag(int libarchive_tag) {
  switch (libarchive_tag) {
    case ARCHIVE_ENTRY_ACL_USER_OBJ: return kAclUserObj;
    case ARCHIVE_ENTRY_ACL_USER: return kAclUser;
    case ARCHIVE_ENTRY_ACL_GROUP_OBJ: return kAclGroupObj;
    case ARCHIVE_ENTRY_ACL_GROUP: return kAclGroup;
    case ARCHIVE_ENTRY_ACL_MASK: return kAclMask;
    case ARCHIVE_ENTRY_ACL_OTHER: return kAclOther;
    default: return 0;
  }
}

class TarScanner {
 public:
  TarScanner(const SourceOptions& o, const TarOptions& t, const std::function<void(const std::string&)>& warn)
      : opt_(o), topt_(t), warn_(warn) {}

  ScanResult run(const std::string& path, const std::string& image_path) {
    ScanResult result;
    TreeAssembler assembler(result.tree, opt_, "tar entry");
    tree_ = &assembler;
    data_ = std::make_shared<DataFile>(image_path);
    result.tree.data_owner = data_;

    CLocale c_locale;
    std::unique_ptr<archive, ArchiveFree> a(archive_read_new());
    if (!a) throw BuildError("cannot set up libarchive");
    archive_read_support_filter_all(a.get());
    archive_read_support_format_tar(a.get());
    const std::string shown = path == "-" ? "standard input" : path;
    if (archive_read_open_filename(a.get(), path == "-" ? nullptr : path.c_str(), 1 << 16) != ARCHIVE_OK)
      throw BuildError("cannot read tar archive " + shown + ": " + libarchive_message(a.get()));
    for (;;) {
      archive_entry* e = nullptr;
      int r = archive_read_next_header(a.get(), &e);
      if (r == ARCHIVE_EOF) break;
      if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {  // ARCHIVE_RETRY (a bad checksum) is an error too
        std::string where = last_.empty() ? "at the first entry" : "after entry " + quoted(last_);
        if (e && archive_entry_pathname(e)) where = "entry " + quoted(archive_entry_pathname(e));
        throw BuildError("tar " + shown + ": " + where + ": " + libarchive_message(a.get()));
      }
      const char* pn = archive_entry_pathname(e);
      std::string name = pn ? pn : "";
      if (r == ARCHIVE_WARN && warn_ && !conversion_warning(a.get())) warn_("tar entry " + quoted(name) + ": " + libarchive_message(a.get()));
      add(a.get(), e, name);
      last_ = name;
    }
    assembler.finish();
    return result;
  }

 private:
  // The uid or gid of a named ACL entry: the archive's number, else the name as a number, else
  // the name looked up on this system (as tar does when it extracts).
  static uint32_t acl_id(bool user, int qual, const char* qname, const std::string& entry) {
    if (qual >= 0) return uint32_t(qual);
    std::string n = qname ? qname : "";
    if (!n.empty() && n.size() < 11 && n.find_first_not_of("0123456789") == std::string::npos) {
      unsigned long long v = std::stoull(n);
      if (v < kAclUndefinedId) return uint32_t(v);
    }
    if (!n.empty()) {
      std::vector<char> buf(16384);
      if (user) {
        struct passwd pw, *res = nullptr;
        if (::getpwnam_r(n.c_str(), &pw, buf.data(), buf.size(), &res) == 0 && res) return res->pw_uid;
      } else {
        struct group gr, *res = nullptr;
        if (::getgrnam_r(n.c_str(), &gr, buf.data(), buf.size(), &res) == 0 && res) return res->gr_gid;
      }
    }
    throw BuildError("tar entry " + quoted(entry) + ": ACL names unknown " + (user ? "user " : "group ") + quoted(n));
  }

  void read_xattrs(archive_entry* e, TreeInode& ino, const std::string& entry) {
    std::map<std::string, std::string> x;
    archive_entry_xattr_reset(e);
    const char* name;
    const void* value;
    size_t size;
    while (archive_entry_xattr_next(e, &name, &value, &size) == ARCHIVE_OK) {
      if (!name || !*name) continue;
      x[name].assign(static_cast<const char*>(value), size);
    }
    // POSIX ACLs (SCHILY.acl.* records) become the xattrs the kernel keeps them in. An archive
    // that also carries the xattr itself (GNU tar --xattrs) keeps that exact value.
    for (int type : {ARCHIVE_ENTRY_ACL_TYPE_ACCESS, ARCHIVE_ENTRY_ACL_TYPE_DEFAULT}) {
      if (archive_entry_acl_reset(e, type) <= 0) continue;
      std::vector<std::tuple<uint16_t, uint16_t, uint32_t>> entries;
      int got_type, perm, tag, qual;
      const char* qname;
      while (archive_entry_acl_next(e, type, &got_type, &perm, &tag, &qual, &qname) == ARCHIVE_OK) {
        if (got_type != type) continue;
        uint16_t t = acl_tag(tag);
        if (!t) continue;
        uint32_t id = kAclUndefinedId;
        if (t == kAclUser || t == kAclGroup) id = acl_id(t == kAclUser, qual, qname, entry);
        // With a mask, the group permission bits of the mode are the mask (libarchive puts the
        // owning group's permissions there).
        if (t == kAclMask && type == ARCHIVE_ENTRY_ACL_TYPE_ACCESS) ino.mode = (ino.mode & ~070u) | uint32_t(perm & 7) << 3;
        entries.emplace_back(t, uint16_t(perm & 7), id);
      }
      if (entries.empty()) continue;
      const char* name = type == ARCHIVE_ENTRY_ACL_TYPE_ACCESS ? "system.posix_acl_access" : "system.posix_acl_default";
      if (!x.count(name)) x[name] = posix_acl_xattr(std::move(entries));
    }
    if (topt_.ovlfs_strip) std::erase_if(x, [](auto& kv) { return kv.first.starts_with("trusted.overlay."); });
    // Left out here rather than by the builder, so that the tree describes the image (--verify).
    std::erase_if(x, [&](auto& kv) {
      if (format::storable_xattr(kv.first, kv.second.size())) return false;
      if (warn_) warn_(tree_->prefix(entry) + "xattr " + kv.first + " cannot be stored in EROFS (dropped)");
      return true;
    });
    ino.xattrs.assign(x.begin(), x.end());
  }

  std::unique_ptr<TreeInode> make_inode(archive_entry* e, const std::string& entry) {
    auto ino = std::make_unique<TreeInode>();
    ino->mode = uint32_t(archive_entry_filetype(e)) | (uint32_t(archive_entry_perm(e)) & 07777);
    int64_t uid = archive_entry_uid(e), gid = archive_entry_gid(e);
    if (uid < 0 || uid > int64_t(UINT32_MAX) || gid < 0 || gid > int64_t(UINT32_MAX))
      throw BuildError("tar entry " + quoted(entry) + ": owner out of range");
    ino->uid = uint32_t(uid);
    ino->gid = uint32_t(gid);
    apply_owner_overrides(opt_, *ino);
    if (archive_entry_mtime_is_set(e)) {
      ino->mtime = archive_entry_mtime(e);
      long ns = archive_entry_mtime_nsec(e);
      ino->mtime_nsec = ns >= 0 && ns < 1000000000 ? uint32_t(ns) : 0;
      tree_->note_mtime(ino->mtime);
    }
    read_xattrs(e, *ino, entry);
    return ino;
  }

  void read_data(archive* a, TreeInode& ino, const std::string& entry) {
    const uint64_t base = (data_->end + kDataAlign - 1) / kDataAlign * kDataAlign;
    const void* buf;
    size_t len;
    la_int64_t off;
    for (;;) {
      int r = archive_read_data_block(a, &buf, &len, &off);
      if (r == ARCHIVE_EOF) break;
      if (r != ARCHIVE_OK && r != ARCHIVE_WARN) throw BuildError("tar entry " + quoted(entry) + ": " + libarchive_message(a));
      if (r == ARCHIVE_WARN && warn_ && !conversion_warning(a)) warn_("tar entry " + quoted(entry) + ": " + libarchive_message(a));
      if (off < 0 || uint64_t(off) + len > ino.size)
        throw BuildError("tar entry " + quoted(entry) + ": data beyond the entry's size");
      if (len) data_->write(buf, len, base + uint64_t(off));
    }
    data_->extend(base + ino.size);
    ino.content = FileContent::in_shared_file(data_->fd, base, entry);
    data_->end = base + ino.size;
  }

  void add(archive* a, archive_entry* e, const std::string& entry) {
    auto parts = tree_->split(entry, entry);
    if (tree_->excluded(parts)) return;
    std::string image_path = TreeAssembler::join(parts, parts.size());
    const char* hardlink = archive_entry_hardlink(e);
    const unsigned type = archive_entry_filetype(e);

    if (parts.empty()) {  // the root itself ("." or "./")
      if (hardlink || type != AE_IFDIR) throw BuildError("tar entry " + quoted(entry) + ": the root must be a directory");
      auto ino = make_inode(e, entry);
      tree_->set_root(*ino);
      return;
    }
    if (topt_.aufs)
      for (size_t i = 0; i < parts.size(); ++i)
        if (parts[i].starts_with(".wh..wh.") && !(i + 1 == parts.size() && parts[i] == ".wh..wh..opq")) return;

    TreeInode* dir = tree_->parent_dir(parts, parts.size() - 1, entry);
    std::string name = parts.back();

    if (topt_.aufs && name.starts_with(".wh.")) {
      if (name == ".wh..wh..opq") {
        auto& x = dir->xattrs;
        std::erase_if(x, [](auto& kv) { return kv.first == "trusted.overlay.opaque"; });
        x.emplace_back("trusted.overlay.opaque", "y");
        std::sort(x.begin(), x.end());
        return;
      }
      name.erase(0, 4);
      if (name.empty() || name == "." || name == "..")
        throw BuildError("tar entry " + quoted(entry) + ": whiteout without a name");
      auto ino = make_inode(e, entry);
      ino->mode = S_IFCHR | (ino->mode & 07777);
      ino->rdev_major = ino->rdev_minor = 0;
      ino->size = 0;
      ino->xattrs.clear();
      tree_->add(dir, name, std::move(ino), entry);
      return;
    }

    if (hardlink) {
      auto target_parts = tree_->split(hardlink, entry);
      TreeInode* target = tree_->root();
      for (auto& p : target_parts) {
        target = target->is_dir() ? tree_->lookup(target, p) : nullptr;
        if (!target) break;
      }
      if (!target || target_parts.empty())
        throw BuildError("tar entry " + quoted(entry) + ": hard link to " + quoted(hardlink) + ", which is not in the archive before it");
      if (target->is_dir()) throw BuildError("tar entry " + quoted(entry) + ": hard link to a directory");
      tree_->place(dir, name, target, entry);
      return;
    }

    if (archive_entry_size_is_set(e) && archive_entry_size(e) < 0)
      throw BuildError("tar entry " + quoted(entry) + ": negative size");
    auto ino = make_inode(e, entry);
    switch (type) {
      case AE_IFREG:
        ino->size = uint64_t(archive_entry_size(e));
        ino->image_path = image_path;
        read_data(a, *ino, entry);
        break;
      case AE_IFDIR: break;
      case AE_IFLNK: tree_->set_symlink(*ino, archive_entry_symlink(e), entry); break;
      case AE_IFCHR:
      case AE_IFBLK:
        tree_->set_device(*ino, archive_entry_rdevmajor(e), archive_entry_rdevminor(e), entry);
        break;
      case AE_IFIFO:
      case AE_IFSOCK: break;
      default: throw BuildError("tar entry " + quoted(entry) + ": unsupported file type");
    }
    tree_->add(dir, name, std::move(ino), entry);
  }

  const SourceOptions& opt_;
  const TarOptions& topt_;
  const std::function<void(const std::string&)>& warn_;
  TreeAssembler* tree_ = nullptr;
  std::shared_ptr<DataFile> data_;
  std::string last_;
};

}  // namespace

std::string posix_acl_xattr(std::vector<std::tuple<uint16_t, uint16_t, uint32_t>> entries) {
  std::sort(entries.begin(), entries.end(), [](auto& a, auto& b) {
    return std::pair(std::get<0>(a), std::get<2>(a)) < std::pair(std::get<0>(b), std::get<2>(b));
  });
  std::string out;
  auto put = [&](uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out += char((v >> (8 * i)) & 0xFF);
  };
  put(2, 4);
  for (auto& [tag, perm, id] : entries) {
    put(tag, 2);
    put(perm, 2);
    put(id, 4);
  }
  return out;
}

ScanResult scan_tar(const std::string& archive, const std::string& image_path, const SourceOptions& options,
                    const TarOptions& tar_options, const std::function<void(const std::string&)>& warn) {
  return TarScanner(options, tar_options, warn).run(archive, image_path);
}

}  // namespace erofs::writer
