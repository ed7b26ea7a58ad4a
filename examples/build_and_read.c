/* Builds a small compressed image from entries made in code, then reads it back.
 * Usage: build_and_read_c IMAGE */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <erofs-kit/erofs.h>

static int fail(const char *what, erofs_error *err) {
  fprintf(stderr, "%s: %s\n", what, err ? erofs_error_message(err) : "failed");
  erofs_error_free(err);
  return 1;
}

static int print_entry(void *ctx, const char *name, uint64_t ino, uint32_t type_mode) {
  (void)ctx;
  printf("  %s%s (inode %llu)\n", name, S_ISDIR(type_mode) ? "/" : "", (unsigned long long)ino);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s IMAGE\n", argv[0]);
    return 2;
  }
  const char *greeting = "hello from erofs-kit\n";
  erofs_error *err = NULL;
  erofs_builder *b = erofs_builder_new(&err);
  if (!b) return fail("erofs_builder_new", err);
  erofs_entry_meta meta = {0644, 0, 0, 1700000000, 0};
  if (erofs_builder_set(b, "z", "lz4hc,9", &err) || erofs_builder_set(b, "T", "1700000000", &err) ||
      erofs_builder_add_directory(b, "/etc", NULL, &err) ||
      erofs_builder_add_file(b, "/etc/motd", &meta, greeting, strlen(greeting), &err) ||
      erofs_builder_add_symlink(b, "/motd", NULL, "etc/motd", &err)) {
    erofs_builder_free(b);
    return fail("building", err);
  }
  erofs_build_summary summary;
  int rc = erofs_builder_write(b, argv[1], &summary, &err);
  erofs_builder_free(b);
  if (rc) return fail(argv[1], err);
  printf("%s: %llu inodes, %llu bytes\n", argv[1], (unsigned long long)summary.inodes,
         (unsigned long long)summary.image_bytes);

  erofs_image *img = erofs_image_open(argv[1], &err);
  if (!img) return fail(argv[1], err);
  erofs_stat st;
  char buf[64];
  size_t got = 0;
  if (erofs_image_list(img, "/", print_entry, NULL, &err) || erofs_image_stat(img, "/etc/motd", &st, &err) ||
      erofs_image_read(img, st.ino, 0, buf, sizeof buf, &got, &err)) {
    erofs_image_close(img);
    return fail("reading", err);
  }
  erofs_image_close(img);
  printf("/etc/motd: %.*s", (int)got, buf);
  return got == strlen(greeting) && memcmp(buf, greeting, got) == 0 ? 0 : 1;
}
