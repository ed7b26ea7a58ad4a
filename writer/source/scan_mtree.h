// Builds a Tree from an mtree manifest: the text format libarchive reads (bsdtar --format=mtree
// and mtree(8) write it), in the classic form (names relative to the current directory, ".." to go
// up) and the full-path form (names with a '/'), with /set and /unset. Owners, modes, times, types,
// symlink targets and device numbers come from the manifest, never from the files on disk; only
// regular files' contents are read from disk, from the path in their contents= keyword or else from
// the entry's own path, resolved against a content root. The accepted keywords and the defaults
// for missing ones are listed in README.md ("Manifest input (mtree)").
//
// Names follow the rules of writer/source/tree_assembler.h (no "..", no absolute names; implicit parent
// directories; a later entry for a path replaces an earlier one). Nothing depends on the process's
// current directory unless a relative manifest or content root is given (which is resolved once,
// at the start).
#pragma once

#include <functional>
#include <string>

#include "writer/options.h"
#include "writer/source/scan_dir.h"

namespace erofs::writer {

// Reads the mtree manifest at `manifest`; regular files' contents come from the path in their
// contents= keyword, else from the entry's own path, either resolved against `content_root`
// (empty: the manifest's own directory) unless absolute.
ScanResult scan_mtree(const std::string& manifest, const std::string& content_root,
                      const SourceOptions& options, const std::function<void(const std::string&)>& warn);

}  // namespace erofs::writer
