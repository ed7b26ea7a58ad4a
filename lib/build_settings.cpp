#include "lib/build_settings.h"

#include "verity/params.h"
#include "writer/option_text.h"

namespace erofs::lib {

writer::BuildOptions build_options(const BuildSettings& s) {
  writer::BuildOptions o;
  o.block_size = s.block_size;
  o.chunk_size = s.chunk_size;
  o.label = s.label;
  o.fixed_time = s.timestamp;
  o.mkfs_time_only = s.mkfs_time;
  writer::apply_uuid(s.uuid, o);
  writer::apply_extended_options(s.extended, o);
  writer::apply_algorithms(s.compression, o);
  writer::finish_compression_options(o, s.pcluster_bytes, s.workers,
                                     s.compress_hints.empty() ? std::vector<writer::CompressHint>{}
                                                              : writer::read_compress_hints(s.compress_hints));
  if (!s.hot_list.empty()) o.hot_files = writer::read_hot_list(s.hot_list);
  if (s.verity || s.verity_salt || !s.verity_file.empty() || !s.root_hash_file.empty()) {
    writer::VerityOptions& v = o.verity.emplace();
    v.params = verity::parse_options(s.verity.value_or(""));
    if (s.verity_salt) {
      v.params.salt = verity::parse_salt(*s.verity_salt);
      v.derive_salt = false;
    }
    v.hash_file = s.verity_file;
    v.root_hash_file = s.root_hash_file;
    v.threads = s.workers;
  }
  o.source.all_root = s.all_root;
  o.source.force_uid = s.force_uid;
  o.source.force_gid = s.force_gid;
  o.source.exclude_paths = s.exclude_paths;
  o.source.exclude_regexes = s.exclude_regexes;
  o.source.ignore_unreadable = s.ignore_unreadable;
  o.warn = s.on_warning ? s.on_warning : [](const std::string&) {};
  return o;
}

}  // namespace erofs::lib
