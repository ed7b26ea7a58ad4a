// Turns SIGBUS in a mapping of an image file into a count the reader can check. A mapped file
// raises SIGBUS where a page cannot be read: the file was truncated under the mapping, or the
// disk failed. That would end the process (a FUSE daemon: a dead mount). For a watched mapping
// the handler instead puts a page of zeros where the fault was and raises the mapping's fault
// count; a reader compares the count before and after it used the bytes, and on a change reads
// them again with pread, which reports the error in words.
//
// Signal dispositions belong to the process, so this is the reader's one process-wide table: it
// is a fixed array of atomics, which is what a signal handler may safely read. The handler is
// installed with the first watch and passes faults outside every watched mapping on to the
// handler it replaced (by default, the process ends as it would have).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace erofs::reader::mapping_faults {

// Watches [base, base + length), a mapping whose pages are multiples of the system's page size.
// Returns the count that faults in it raise, or nullptr when the table is full or the handler
// cannot be installed: then the mapping must not be read.
std::atomic<uint64_t>* watch(const void* base, size_t length);
// Stops watching the mapping at `base`, before it is unmapped.
void unwatch(const void* base);

}  // namespace erofs::reader::mapping_faults
