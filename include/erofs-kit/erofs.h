/* erofs-kit's public C API: read EROFS images and build them. A thin layer over the C++ API
 * (erofs.hpp) for C and other languages.
 *
 * Conventions: functions that can fail take `erofs_error **error` last (NULL: not wanted) and
 * return 0 / a non-NULL pointer on success, -1 / NULL on failure, when *error receives an error
 * object to read with erofs_error_code/_errno/_message and release with erofs_error_free. Nothing
 * is printed. There is no global state: any number of images and builders may be used at once,
 * each by one thread at a time (an image's reading functions may be called from several threads).
 * Strings returned through `char **` are released with erofs_free. */
#ifndef EROFS_KIT_EROFS_H
#define EROFS_KIT_EROFS_H

#include <stddef.h>
#include <stdint.h>

#ifndef EROFS_KIT_API
#define EROFS_KIT_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct erofs_error erofs_error;
typedef struct erofs_image erofs_image;
typedef struct erofs_builder erofs_builder;

/* Error codes, as erofs::ErrorCode. */
enum {
  EROFS_ERR_INVALID_ARGUMENT = 1,
  EROFS_ERR_NOT_FOUND = 2,
  EROFS_ERR_IO = 3,
  EROFS_ERR_CORRUPT = 4,
  EROFS_ERR_UNSUPPORTED = 5,
  EROFS_ERR_BUILD = 6
};

EROFS_KIT_API int erofs_error_code(const erofs_error *error);
EROFS_KIT_API int erofs_error_errno(const erofs_error *error); /* the errno value for I/O errors, else 0 */
EROFS_KIT_API const char *erofs_error_message(const erofs_error *error); /* one line, valid until freed */
EROFS_KIT_API void erofs_error_free(erofs_error *error);
EROFS_KIT_API void erofs_free(void *p);

/* ---- Reading ---- */

typedef struct erofs_stat {
  uint64_t ino;
  uint32_t mode; /* st_mode: S_IFMT type and permission bits */
  uint32_t uid, gid, nlink;
  uint64_t size;
  int64_t mtime;
  uint32_t mtime_nsec;
  uint32_t rdev_major, rdev_minor;
} erofs_stat;

EROFS_KIT_API erofs_image *erofs_image_open(const char *path, erofs_error **error);
EROFS_KIT_API void erofs_image_close(erofs_image *image);
EROFS_KIT_API uint32_t erofs_image_block_size(const erofs_image *image);
/* Paths are absolute or relative to the root; the last component is not followed. */
EROFS_KIT_API int erofs_image_stat(const erofs_image *image, const char *path, erofs_stat *out, erofs_error **error);
/* Calls fn for each entry of the directory (without "." and ".."), in byte order; fn returns
 * non-zero to stop early. */
EROFS_KIT_API int erofs_image_list(const erofs_image *image, const char *path,
                     int (*fn)(void *ctx, const char *name, uint64_t ino, uint32_t type_mode), void *ctx,
                     erofs_error **error);
/* Reads up to `length` bytes at `offset` of the regular file `ino`; *done gets the byte count. */
EROFS_KIT_API int erofs_image_read(const erofs_image *image, uint64_t ino, uint64_t offset, void *buffer, size_t length,
                     size_t *done, erofs_error **error);
EROFS_KIT_API int erofs_image_readlink(const erofs_image *image, const char *path, char **target, erofs_error **error);
/* Writes the tree into `destination` (which must not hold its names yet), as root with owners. */
EROFS_KIT_API int erofs_image_extract(const erofs_image *image, const char *destination, erofs_error **error);
/* Checks every structure and, with check_data, decodes all data. *problems gets the count of
 * problems found (0: clean); on_problem, if given, receives each one. */
EROFS_KIT_API int erofs_image_check(const erofs_image *image, int check_data, size_t *problems,
                      void (*on_problem)(void *ctx, const char *line), void *ctx, erofs_error **error);

/* ---- Building ---- */

typedef struct erofs_entry_meta {
  uint32_t mode; /* permission bits (07777) */
  uint32_t uid, gid;
  int64_t mtime;
  uint32_t mtime_nsec;
} erofs_entry_meta;

typedef struct erofs_progress {
  int scanned; /* the totals are known */
  uint64_t total_files, total_bytes, files, bytes_in, bytes_out;
  /* With fragments, once the files are done: bytes of the packed inode compressed so far, of all. */
  uint64_t packed_bytes, packed_done;
} erofs_progress;

typedef struct erofs_build_summary {
  uint64_t inodes, regular_files, directories, symlinks, special_files, hard_links;
  uint64_t bytes_in, image_bytes, compressed_files;
  double seconds;
  uint64_t compact_inodes, extended_inodes, data_blocks, metadata_blocks;
  uint64_t skipped_inputs; /* with "ignore-unreadable" */
  int verified;            /* with "verify": 1, the image matched the source */
  /* With "verity": the tree written (verity 1), as erofs::VeritySummary; strings in hex. */
  int verity;
  char verity_root_hash[129];
  char verity_salt[513];
  char verity_hash_algorithm[8];
  uint64_t verity_hash_offset, verity_data_blocks, verity_tree_bytes;
  uint32_t verity_data_block_size, verity_hash_block_size;
  double verity_seconds; /* of seconds, the tree's part */
} erofs_build_summary;

EROFS_KIT_API erofs_builder *erofs_builder_new(erofs_error **error);
EROFS_KIT_API void erofs_builder_free(erofs_builder *builder);
/* Settings, spelled as erofs mkfs's options without dashes; before any entry is added:
 *   "z" ("lz4hc,12"), "C" (pcluster bytes), "E" ("ztailpacking,dedupe"), "b" (block size),
 *   "T" (UNIX time), "U", "L", "workers", "chunksize", "compress-hints" (a file), "hot-list"
 *   (a file), "all-root" ("1"), "force-uid", "force-gid", "exclude-path", "exclude-regex" (both repeatable),
 *   "aufs" ("1"), "ovlfs-strip" ("1"), "mkfs-time" ("1"), "ignore-unreadable" ("1"),
 *   "verify" ("1"), "verity" (the text of --verity=: "" for the defaults, "hash=sha512,..."),
 *   "verity-salt" (hex or "none"), "verity-file", "root-hash-file" (each also turns verity on). */
EROFS_KIT_API int erofs_builder_set(erofs_builder *builder, const char *key, const char *value, erofs_error **error);
/* fn is called from another thread about every interval_ms while building, and once at the end. */
EROFS_KIT_API void erofs_builder_on_progress(erofs_builder *builder, void (*fn)(void *ctx, const erofs_progress *progress),
                               void *ctx, unsigned interval_ms);
EROFS_KIT_API void erofs_builder_on_warning(erofs_builder *builder, void (*fn)(void *ctx, const char *line), void *ctx);

/* Entries added from code; the parent must be added first ("/" always exists). meta NULL: mode
 * 0644 (0755 for directories), owner 0:0, mtime 0. */
EROFS_KIT_API int erofs_builder_set_root(erofs_builder *builder, const erofs_entry_meta *meta, erofs_error **error);
EROFS_KIT_API int erofs_builder_add_directory(erofs_builder *builder, const char *path, const erofs_entry_meta *meta,
                                erofs_error **error);
EROFS_KIT_API int erofs_builder_add_file(erofs_builder *builder, const char *path, const erofs_entry_meta *meta,
                           const void *data, size_t length, erofs_error **error);
EROFS_KIT_API int erofs_builder_add_file_from(erofs_builder *builder, const char *path, const erofs_entry_meta *meta,
                                const char *source, erofs_error **error);
EROFS_KIT_API int erofs_builder_add_symlink(erofs_builder *builder, const char *path, const erofs_entry_meta *meta,
                              const char *target, erofs_error **error);
/* type_mode: S_IFCHR, S_IFBLK, S_IFIFO or S_IFSOCK. */
EROFS_KIT_API int erofs_builder_add_special(erofs_builder *builder, const char *path, const erofs_entry_meta *meta,
                              uint32_t type_mode, uint32_t rdev_major, uint32_t rdev_minor, erofs_error **error);
EROFS_KIT_API int erofs_builder_add_hard_link(erofs_builder *builder, const char *path, const char *target, erofs_error **error);
EROFS_KIT_API int erofs_builder_add_xattr(erofs_builder *builder, const char *path, const char *name, const void *value,
                            size_t length, erofs_error **error);
/* Writes the entries added so far. summary may be NULL. */
EROFS_KIT_API int erofs_builder_write(erofs_builder *builder, const char *image_path, erofs_build_summary *summary,
                        erofs_error **error);

/* Whole-source builds with the builder's settings (its entries are not used). */
EROFS_KIT_API int erofs_build_directory(erofs_builder *builder, const char *source_dir, const char *image_path,
                          erofs_build_summary *summary, erofs_error **error);
/* archive: a tar file, plain or compressed, or "-" for standard input. */
EROFS_KIT_API int erofs_build_tar(erofs_builder *builder, const char *archive, const char *image_path,
                    erofs_build_summary *summary, erofs_error **error);
/* content_root NULL: the manifest's directory. */
EROFS_KIT_API int erofs_build_mtree(erofs_builder *builder, const char *manifest, const char *content_root,
                      const char *image_path, erofs_build_summary *summary, erofs_error **error);

#ifdef __cplusplus
}
#endif

#endif
