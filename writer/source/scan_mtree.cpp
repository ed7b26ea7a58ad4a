#include "writer/source/scan_mtree.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "writer/errors.h"
#include "writer/source/tree_assembler.h"

// How libarchive is used, and why the manifest is rewritten before it sees it.
//
// libarchive (3.6) parses the manifest: /set and /unset, the classic and full-path forms, the
// escapes in names, the keyword values. Its mtree reader can also open the files the entries
// name, to read their data and to fill in what the manifest leaves out from stat() - but it opens
// them relative to the process's current directory, and lets the file's owner, mode and time
// stand in for missing keywords. The image must come from the manifest alone and the scan must
// not depend on the current directory, so that is switched off ("mtree:!checkfs"; an older
// libarchive without the option is refused). With it off, libarchive reads no data, and it keeps
// the contents= keyword to itself (the entry has no field for it); it also cannot say whether
// mode=, uid=, gid= or size= were given (absent, they read as 0).
//
// So the manifest text goes through one pass of our own first, which changes keyword values only,
// never the structure libarchive parses (lines, names, /set and /unset scoping, full-path entries
// given on several lines):
//   contents=V / content=V  ->  inode=K, K indexing the kept values (a user's inode= is dropped;
//                               "/unset content(s)" becomes "/unset inode")
//   uid=N, gid=N            ->  N + 2^32   (below 2^32: not given)
//   size=N                  ->  N + 2^62   (below 2^62: not given)
//   mode=OCTAL              ->  OCTAL with bit 18 set (libarchive keeps permission bits above
//                               07777; without the bit: not given)
// The values are checked on the way (decimal owners up to 2^32-1, octal modes up to 07777), so
// malformed ones are errors naming the line. A token is taken for one of these keywords when it
// starts with "KEY=": names with a raw '=' must escape it (\075), as libarchive and mtree(8) write
// them. Regular files' contents are then opened by us, relative to the content root.
namespace erofs::writer {
namespace {

constexpr uint64_t kOwnerGiven = uint64_t(1) << 32;
constexpr int64_t kSizeGiven = int64_t(1) << 62;
constexpr uint32_t kModeGiven = 01000000;

struct ArchiveFree {
  void operator()(archive* a) const { archive_read_free(a); }
};

struct Rewritten {
  std::string text;
  std::vector<std::string> contents;  // raw contents= values (escapes not yet decoded)
  std::vector<size_t> line_of;        // libarchive's line number - 1 -> line in the manifest (0: ours)
};

bool all_digits(const std::string& s, char max_digit) {
  if (s.empty() || s.size() > 20) return false;
  for (char c : s)
    if (c < '0' || c > max_digit) return false;
  return true;
}

class Rewriter {
 public:
  Rewriter(const std::string& manifest) : manifest_(manifest) {}

  Rewritten run(const std::string& in) {
    // A signature line, so that libarchive takes the text as mtree whatever its first lines are.
    out_.text = "#mtree\n";
    out_.line_of.push_back(0);
    size_t i = 0, physical = 1;
    while (i < in.size()) {
      std::string line;
      line_ = physical;
      // Lines end at an unescaped newline; a backslash before the newline joins the next line
      // (as libarchive reads them).
      while (i < in.size()) {
        char c = in[i];
        if (c == '\0') throw BuildError(where() + "a NUL byte (an mtree manifest is text)");
        if (c == '\\' && i + 1 < in.size()) {
          if (in[i + 1] == '\n') {
            i += 2;
            ++physical;
            continue;
          }
          line += c;
          line += in[i + 1];
          i += 2;
          continue;
        }
        ++i;
        if (c == '\n') {
          ++physical;
          break;
        }
        line += c;
      }
      out_.text += rewrite_line(line);
      out_.text += '\n';
      out_.line_of.push_back(line_);
    }
    return std::move(out_);
  }

 private:
  std::string where() const { return "mtree manifest " + manifest_ + ": line " + std::to_string(line_) + ": "; }

  std::string rewrite_line(const std::string& line) {
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') return line;
    enum { Keywords, Unset } mode = Keywords;
    size_t pos = start;
    if (line[start] == '/') {
      // "/set k=v ..." rewrites like an entry's keywords, "/unset k ..." names keywords; any other
      // line starting with '/' is libarchive's to refuse.
      if (line.compare(start, 4, "/set") == 0) pos = start + 4;
      else if (line.compare(start, 6, "/unset") == 0) pos = start + 6, mode = Unset;
      else return line;
    }
    std::string out = line.substr(0, pos);
    while (pos < line.size()) {
      size_t end = line.find_first_of(" \t\r\n", pos);
      if (end == std::string::npos) end = line.size();
      if (end == pos) {
        out += line[pos++];
        continue;
      }
      const std::string token = line.substr(pos, end - pos);
      out += mode == Unset ? rewrite_unset(token) : rewrite_keyword(token);
      pos = end;
    }
    return out;
  }

  std::string rewrite_unset(const std::string& token) {
    if (token == "content" || token == "contents") return "inode";
    if (token == "inode") return "";
    return token;
  }

  std::string rewrite_keyword(const std::string& token) {
    size_t eq = token.find('=');
    if (eq == std::string::npos) return token;
    const std::string key = token.substr(0, eq), value = token.substr(eq + 1);
    if (key == "content" || key == "contents") {
      out_.contents.push_back(value);
      return "inode=" + std::to_string(out_.contents.size() - 1);
    }
    if (key == "inode") return "";
    if (key == "uid" || key == "gid") {
      if (!all_digits(value, '9') || std::stoull(value) > UINT32_MAX)
        throw BuildError(where() + quoted(token) + ": not a number from 0 to 4294967295");
      return key + "=" + std::to_string(std::stoull(value) + kOwnerGiven);
    }
    if (key == "size") {
      if (!all_digits(value, '9') || std::stoull(value) >= uint64_t(kSizeGiven))
        throw BuildError(where() + quoted(token) + ": not a size in bytes");
      return key + "=" + std::to_string(std::stoull(value) + uint64_t(kSizeGiven));
    }
    if (key == "mode") {
      if (!all_digits(value, '7') || std::stoull(value, nullptr, 8) > 07777)
        throw BuildError(where() + quoted(token) + ": not an octal mode from 0 to 07777");
      return key + "=" + fmt::format("{:o}", std::stoull(value, nullptr, 8) | kModeGiven);
    }
    return token;
  }

  const std::string& manifest_;
  Rewritten out_;
  size_t line_ = 0;
};

// mtree's escapes (as libarchive decodes names): \NNN octal (first digit 0-3), \0 alone (NUL),
// \a \b \f \n \r \s (space) \t \v \\; a backslash before anything else stays.
std::string unescape(const std::string& s) {
  std::string out;
  auto octal = [](char c) { return c >= '0' && c <= '7'; };
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\\' && i + 1 < s.size()) {
      char n = s[i + 1];
      if (n >= '0' && n <= '3' && i + 3 < s.size() && octal(s[i + 2]) && octal(s[i + 3])) {
        c = char((n - '0') << 6 | (s[i + 2] - '0') << 3 | (s[i + 3] - '0'));
        i += 3;
      } else if (n == '0' && !(i + 2 < s.size() && octal(s[i + 2]))) {
        c = '\0';
        i += 1;
      } else {
        static const std::string from = "abfnrstv\\", to = "\a\b\f\n\r \t\v\\";
        size_t k = from.find(n);
        if (k != std::string::npos) {
          c = to[k];
          i += 1;
        }
      }
    }
    out += c;
  }
  return out;
}

class MtreeScanner {
 public:
  MtreeScanner(const SourceOptions& o, const std::function<void(const std::string&)>& warn) : opt_(o), warn_(warn) {}

  ScanResult run(const std::string& manifest, const std::string& content_root) {
    manifest_ = manifest;
    namespace fs = std::filesystem;
    std::string root = content_root;
    if (root.empty()) {
      root = fs::path(manifest).parent_path().string();
      if (root.empty()) root = ".";
    }
    std::error_code ec;
    root_ = fs::absolute(root, ec).lexically_normal().string();
    if (ec) throw BuildError(errno_message("cannot resolve the content root " + root, ec.value()));
    while (root_.size() > 1 && root_.ends_with("/")) root_.pop_back();

    Rewritten text = Rewriter(manifest).run(read_manifest());
    ScanResult result;
    TreeAssembler assembler(result.tree, opt_, "mtree entry");
    tree_ = &assembler;
    result_ = &result;

    std::unique_ptr<archive, ArchiveFree> a(archive_read_new());
    if (!a) throw BuildError("cannot set up libarchive");
    archive_read_support_format_mtree(a.get());
    if (archive_read_set_options(a.get(), "mtree:!checkfs") != ARCHIVE_OK)
      throw BuildError("libarchive " + std::string(archive_version_string()) +
                       " cannot read mtree manifests without opening the files they name (3.5 or later is needed)");
    if (archive_read_open_memory(a.get(), text.text.data(), text.text.size()) != ARCHIVE_OK)
      throw BuildError("cannot read mtree manifest " + manifest + ": " + libarchive_message(a.get()));
    for (;;) {
      archive_entry* e = nullptr;
      int r = archive_read_next_header(a.get(), &e);
      if (r == ARCHIVE_EOF) break;
      const char* pn = e ? archive_entry_pathname(e) : nullptr;
      std::string name = pn ? pn : "";
      if (r != ARCHIVE_OK && r != ARCHIVE_WARN) throw BuildError(fatal_message(a.get(), text));
      bool socket = false;
      if (r == ARCHIVE_WARN) {
        const std::string m = libarchive_message(a.get());
        // libarchive assumes "file" for a missing type= (our default too) and for a type it does
        // not know: "socket" is mtree(8)'s word for sockets.
        if (m.starts_with("Unrecognized file type \"socket\"")) socket = archive_entry_filetype(e) == AE_IFREG;
        else if (!m.starts_with("Missing type keyword")) throw BuildError(tree_->prefix(name) + m);
      }
      add(e, name, socket, text.contents);
    }
    assembler.finish();
    return result;
  }

 private:
  std::string read_manifest() {
    int fd = ::open(manifest_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw BuildError(errno_message("cannot open mtree manifest " + manifest_, errno));
    std::string text;
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        int err = errno;
        ::close(fd);
        throw BuildError(errno_message("cannot read mtree manifest " + manifest_, err));
      }
      if (n == 0) break;
      text.append(buf, size_t(n));
    }
    ::close(fd);
    return text;
  }

  // libarchive counts the lines it reads (after joining continued lines); say which line of the
  // manifest that is.
  std::string fatal_message(archive* a, const Rewritten& text) const {
    std::string m = libarchive_message(a);
    const std::string lead = "Can't parse line ";
    if (m.starts_with(lead)) {
      size_t n = std::strtoull(m.c_str() + lead.size(), nullptr, 10);
      if (n >= 1 && n <= text.line_of.size() && text.line_of[n - 1])
        return "mtree manifest " + manifest_ + ": line " + std::to_string(text.line_of[n - 1]) + ": cannot parse it";
    }
    return "mtree manifest " + manifest_ + ": " + m;
  }

  static uint32_t lookup_owner(bool user, const std::string& name, const std::string& what) {
    std::vector<char> buf(16384);
    if (user) {
      struct passwd pw, *res = nullptr;
      if (::getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &res) == 0 && res) return res->pw_uid;
    } else {
      struct group gr, *res = nullptr;
      if (::getgrnam_r(name.c_str(), &gr, buf.data(), buf.size(), &res) == 0 && res) return res->gr_gid;
    }
    throw BuildError(what + (user ? "unknown user uname=" : "unknown group gname=") + name +
                     (user ? " (give uid=)" : " (give gid=)"));
  }

  uint32_t owner(int64_t biased, const char* name, bool user, const std::string& entry) const {
    if (biased >= int64_t(kOwnerGiven)) return uint32_t(biased - int64_t(kOwnerGiven));
    if (name && *name) return lookup_owner(user, name, tree_->prefix(entry));
    return 0;
  }

  std::unique_ptr<TreeInode> make_inode(archive_entry* e, uint32_t type, const std::string& entry) {
    auto ino = std::make_unique<TreeInode>();
    uint32_t perm = uint32_t(archive_entry_perm(e));
    if (perm & kModeGiven) perm &= 07777;
    else perm = type == S_IFDIR ? 0755 : type == S_IFLNK ? 0777 : 0644;
    ino->mode = type | perm;
    ino->uid = owner(archive_entry_uid(e), archive_entry_uname(e), true, entry);
    ino->gid = owner(archive_entry_gid(e), archive_entry_gname(e), false, entry);
    apply_owner_overrides(opt_, *ino);
    if (archive_entry_mtime_is_set(e)) {
      ino->mtime = archive_entry_mtime(e);
      long ns = archive_entry_mtime_nsec(e);
      ino->mtime_nsec = ns >= 0 && ns < 1000000000 ? uint32_t(ns) : 0;
      tree_->note_mtime(ino->mtime);
    }
    return ino;
  }

  // Where a regular file's contents are: contents= (escapes decoded) or the entry's own path,
  // relative to the content root unless absolute.
  std::string content_path(archive_entry* e, const std::string& entry, const std::vector<std::string>& contents) const {
    std::string path = entry;
    if (archive_entry_ino_is_set(e)) {
      int64_t k = archive_entry_ino(e);
      if (k < 0 || uint64_t(k) >= contents.size()) throw BuildError(tree_->prefix(entry) + "bad contents= keyword");
      path = unescape(contents[size_t(k)]);
      if (path.empty()) throw BuildError(tree_->prefix(entry) + "empty contents=");
    }
    if (path.find('\0') != std::string::npos) throw BuildError(tree_->prefix(entry) + "contents path with a NUL byte");
    if (path.starts_with("/")) return path;
    while (path.starts_with("./")) path.erase(0, 2);
    return root_ == "/" ? "/" + path : root_ + "/" + path;
  }

  // Checks the regular file's contents; false when it is skipped (ignore_unreadable).
  bool attach_contents(TreeInode& ino, archive_entry* e, const std::string& entry, const std::string& path) {
    // The data phase opens the path without following a final symlink; resolve it here, so
    // contents= may name a link to the file.
    std::string real = path;
    if (char* rp = ::realpath(path.c_str(), nullptr)) {
      real = rp;
      std::free(rp);
    }
    int fd = ::open(real.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      std::string m = errno_message(tree_->prefix(entry) + "cannot open its contents " + path, errno);
      if (!opt_.ignore_unreadable) throw BuildError(m);
      ++result_->skipped;
      if (warn_) warn_(m + " (skipped)");
      return false;
    }
    struct stat st;
    int rc = ::fstat(fd, &st), err = errno;
    ::close(fd);
    if (rc != 0) throw BuildError(errno_message(tree_->prefix(entry) + "cannot stat its contents " + path, err));
    if (!S_ISREG(st.st_mode)) throw BuildError(tree_->prefix(entry) + "its contents " + path + " is not a regular file");
    int64_t size = archive_entry_size(e);
    if (size >= kSizeGiven && uint64_t(size - kSizeGiven) != uint64_t(st.st_size))
      throw BuildError(tree_->prefix(entry) + "size=" + std::to_string(size - kSizeGiven) + " but its contents " + path +
                       " has " + std::to_string(st.st_size) + " bytes");
    ino.size = uint64_t(st.st_size);
    ino.content = FileContent::at_path(real);
    return true;
  }

  void add(archive_entry* e, const std::string& entry, bool socket, const std::vector<std::string>& contents) {
    auto parts = tree_->split(entry, entry);
    if (tree_->excluded(parts)) return;
    const uint32_t type = socket ? S_IFSOCK : uint32_t(archive_entry_filetype(e));
    if (parts.empty()) {  // the root itself (".")
      if (type != S_IFDIR) throw BuildError(tree_->prefix(entry) + "the root must be a directory");
      tree_->set_root(*make_inode(e, type, entry));
      return;
    }
    TreeInode* dir = tree_->parent_dir(parts, parts.size() - 1, entry);
    auto ino = make_inode(e, type, entry);
    switch (type) {
      case S_IFREG:
        ino->image_path = TreeAssembler::join(parts, parts.size());
        if (!attach_contents(*ino, e, entry, content_path(e, entry, contents))) return;
        break;
      case S_IFDIR: break;
      case S_IFLNK: tree_->set_symlink(*ino, archive_entry_symlink(e), entry); break;
      case S_IFCHR:
      case S_IFBLK:
        tree_->set_device(*ino, archive_entry_rdevmajor(e), archive_entry_rdevminor(e), entry);
        break;
      case S_IFIFO:
      case S_IFSOCK: break;
      default: throw BuildError(tree_->prefix(entry) + "unsupported type");
    }
    tree_->add(dir, parts.back(), std::move(ino), entry);
  }

  const SourceOptions& opt_;
  const std::function<void(const std::string&)>& warn_;
  std::string manifest_, root_;
  TreeAssembler* tree_ = nullptr;
  ScanResult* result_ = nullptr;
};

}  // namespace

ScanResult scan_mtree(const std::string& manifest, const std::string& content_root, const SourceOptions& options,
                      const std::function<void(const std::string&)>& warn) {
  return MtreeScanner(options, warn).run(manifest, content_root);
}

}  // namespace erofs::writer
