// Path resolution from the root, and symlink targets.
#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "format/constants.h"
#include "reader/image_impl.h"

namespace erofs::reader {

namespace {

constexpr int kMaxSymlinkFollows = 40;  // the kernel's MAXSYMLINKS

[[noreturn]] void fail(std::string_view path, int err) {
  throw IoError(fmt::format("{}: {}", path, std::strerror(err)), err);
}

// Components of `path` pushed in reverse, so that popping from the back walks it in order.
// Empty components (from "//" or a trailing '/') are kept: they mean "must be a directory".
void push_components(std::string_view path, std::vector<std::string>& stack) {
  std::vector<std::string_view> parts;
  for (size_t start = 0; start <= path.size();) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) stack.emplace_back(*it);
}

}  // namespace

Inode ImageImpl::resolve(std::string_view path, bool follow_last) const {
  const Inode root = inode(root_nid());
  Inode cur = root;
  std::vector<std::string> stack;
  push_components(path, stack);
  int follows = 0;
  while (!stack.empty()) {
    const std::string name = std::move(stack.back());
    stack.pop_back();
    if (!cur.is_dir()) fail(path, ENOTDIR);
    if (name.empty() || name == ".") continue;
    if (name.size() > format::kNameMax) fail(path, ENAMETOOLONG);
    const auto entry = lookup(cur, name);
    if (!entry) fail(path, ENOENT);
    Inode next = inode(entry->nid);
    if (next.is_symlink() && (!stack.empty() || follow_last)) {
      if (++follows > kMaxSymlinkFollows) fail(path, ELOOP);
      const std::string target = readlink(next);
      push_components(target, stack);
      if (target.front() == '/') cur = root;
      continue;  // the target resolves relative to the directory holding the link
    }
    cur = std::move(next);
  }
  return cur;
}

std::string ImageImpl::readlink(const Inode& link) const {
  if (!link.is_symlink()) throw IoError(fmt::format("nid {}: not a symlink", link.nid), EINVAL);
  std::string target(size_t(link.size), '\0');  // inode() bounded the size to 4095
  if (read(link, 0, std::span(reinterpret_cast<uint8_t*>(target.data()), target.size())) != target.size())
    throw CorruptError(fmt::format("nid {}: short read of the symlink target", link.nid));
  if (target.find('\0') != std::string::npos)
    throw CorruptError(fmt::format("nid {}: symlink target contains NUL", link.nid));
  return target;
}

}  // namespace erofs::reader
