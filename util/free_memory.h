// Hands memory the allocator holds but no one uses back to the system, between phases of work
// whose buffers were allocated on other threads. glibc gives each thread an arena and returns a
// freed block to the arena it came from, where it stays resident; a phase that follows a
// different pattern (the packed inode after the files) then adds its peak to the one before.
#pragma once

namespace erofs::util {

void release_free_memory();

}  // namespace erofs::util
