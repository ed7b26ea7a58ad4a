// libarchive, loaded on first use. Only `--tar` and `--mtree` sources need it, but linking it
// makes every run of `erofs` load it and what it pulls in (libxml2, ICU, nettle, bz2, acl): from
// a cold page cache that was 18 of the 35 ms `erofs --version` took, paid again by every fsck,
// extract, ls and cat. So the library is opened with dlopen when a scanner first calls one of
// the functions defined here, each of which forwards to libarchive's own. The definitions are
// checked against archive.h's declarations by the compiler (a differing type would not build)
// and hidden, so no program that links liberofs-kit sees them in place of libarchive's.
#include <archive.h>
#include <archive_entry.h>
#include <dlfcn.h>

#include <string>

#include "writer/errors.h"

using Entry = struct archive_entry;
using Archive = struct archive;

// Every libarchive function the scanners call: X(return type, name, parameters, arguments).
#define EROFS_LIBARCHIVE_FUNCTIONS(X)                                                                      \
  X(const char*, archive_version_string, (void), ())                                                       \
  X(Archive*, archive_read_new, (void), ())                                                                \
  X(int, archive_read_free, (Archive * a), (a))                                                            \
  X(int, archive_read_support_filter_all, (Archive * a), (a))                                              \
  X(int, archive_read_support_format_tar, (Archive * a), (a))                                              \
  X(int, archive_read_support_format_mtree, (Archive * a), (a))                                            \
  X(int, archive_read_set_options, (Archive * a, const char* o), (a, o))                                   \
  X(int, archive_read_open_filename, (Archive * a, const char* f, size_t b), (a, f, b))                    \
  X(int, archive_read_open_memory, (Archive * a, const void* p, size_t n), (a, p, n))                      \
  X(int, archive_read_next_header, (Archive * a, Entry** e), (a, e))                                       \
  X(int, archive_read_data_block, (Archive * a, const void** p, size_t* n, la_int64_t* o), (a, p, n, o))   \
  X(const char*, archive_error_string, (Archive * a), (a))                                                 \
  X(const char*, archive_entry_pathname, (Entry * e), (e))                                                 \
  X(const char*, archive_entry_hardlink, (Entry * e), (e))                                                 \
  X(const char*, archive_entry_symlink, (Entry * e), (e))                                                  \
  X(const char*, archive_entry_uname, (Entry * e), (e))                                                    \
  X(const char*, archive_entry_gname, (Entry * e), (e))                                                    \
  X(__LA_MODE_T, archive_entry_filetype, (Entry * e), (e))                                                 \
  X(__LA_MODE_T, archive_entry_perm, (Entry * e), (e))                                                     \
  X(la_int64_t, archive_entry_uid, (Entry * e), (e))                                                       \
  X(la_int64_t, archive_entry_gid, (Entry * e), (e))                                                       \
  X(la_int64_t, archive_entry_ino, (Entry * e), (e))                                                       \
  X(int, archive_entry_ino_is_set, (Entry * e), (e))                                                       \
  X(la_int64_t, archive_entry_size, (Entry * e), (e))                                                      \
  X(int, archive_entry_size_is_set, (Entry * e), (e))                                                      \
  X(time_t, archive_entry_mtime, (Entry * e), (e))                                                         \
  X(long, archive_entry_mtime_nsec, (Entry * e), (e))                                                      \
  X(int, archive_entry_mtime_is_set, (Entry * e), (e))                                                     \
  X(dev_t, archive_entry_rdevmajor, (Entry * e), (e))                                                      \
  X(dev_t, archive_entry_rdevminor, (Entry * e), (e))                                                      \
  X(int, archive_entry_xattr_reset, (Entry * e), (e))                                                      \
  X(int, archive_entry_xattr_next, (Entry * e, const char** n, const void** v, size_t* s), (e, n, v, s))   \
  X(int, archive_entry_acl_reset, (Entry * e, int t), (e, t))                                              \
  X(int, archive_entry_acl_next, (Entry * e, int w, int* t, int* p, int* g, int* q, const char** n),       \
    (e, w, t, p, g, q, n))

namespace {

// libarchive's ABI has had this soname since 3.0 (2011).
constexpr const char* kSoname = "libarchive.so.13";

#define EROFS_LIBARCHIVE_NAME(ret, name, params, args) #name,
constexpr const char* kFunctions[] = {EROFS_LIBARCHIVE_FUNCTIONS(EROFS_LIBARCHIVE_NAME)};
#undef EROFS_LIBARCHIVE_NAME

// Opened once per process and never closed: the functions found in it stay valid for as long as
// any scanner may call them. Every function is looked up at once, so that a library without one
// fails the first call (archive_read_new), never a later one such as the archive_read_free of a
// destructor; and the reason is kept, so every later call gives it too.
struct Library {
  void* handle = nullptr;
  std::string error;  // empty when every function was found
};

const Library& library() {
  static const Library lib = [] {
    Library l;
    l.handle = ::dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
    if (!l.handle) {
      const char* why = ::dlerror();
      l.error = std::string("tar and mtree sources need ") + kSoname + ", which cannot be loaded: " +
                (why ? why : "no reason given");
      return l;
    }
    for (const char* name : kFunctions)
      if (!::dlsym(l.handle, name)) {
        l.error = std::string(kSoname) + " has no function " + name;
        break;
      }
    return l;
  }();
  return lib;
}

void* libarchive_symbol(const char* name) {
  const Library& l = library();
  if (!l.error.empty()) throw erofs::writer::BuildError(l.error);
  return ::dlsym(l.handle, name);  // found when the library was opened
}

}  // namespace

#define EROFS_LIBARCHIVE_FORWARD(ret, name, params, args)                                              \
  extern "C" __attribute__((visibility("hidden"))) ret name params {                                \
    static const auto real = reinterpret_cast<decltype(&::name)>(libarchive_symbol(#name));         \
    return real args;                                                                                \
  }

EROFS_LIBARCHIVE_FUNCTIONS(EROFS_LIBARCHIVE_FORWARD)
