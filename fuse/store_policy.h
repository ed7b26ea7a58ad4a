// When the page store (fuse/page_store.h) hands a decoded extent to the kernel's page cache. A
// store spares the daemon the requests for the extent's other pages, but costs a decode and a
// copy that hold up the reader the daemon serves meanwhile; it pays only where a reader comes
// back for those pages. Two signs say it will:
// - it came back already: a read ended inside the same extent before (a second read for an
//   extent of up to 64 KiB, a fourth for a larger one, whose store costs more);
// - it reads much of the file: reads of at least an eighth of its bytes reached the daemon, and
//   then an extent of up to 64 KiB is stored on the first read that ends inside it.
// A few random reads in a large file show neither, and store nothing: 9 MiB of random 4 KiB
// reads of the 10^9-byte file's 4 KiB-pcluster image took 105-130 us a read storing each
// extent on its first read (about 16 KiB), 90-107 us with these rules (cold, 5 alternating
// runs), while reading every block at random took as long as before.
// A large extent's fourth read counts only once the reads of its file add up to a 64th of it:
// before that, a reader spread over a large file comes back to its longest extents by chance.
// 9 MiB of random 4 KiB reads of the 10^9-byte file's 64 KiB-pcluster image stored about 60
// extents of 730 KB on average, for about 30 later reads (a simulation over the file's extents);
// with this rule, fio's latency per read was 144-164 us against 164-176 us, the daemon's CPU
// 200-240 ms against 250-270 ms (cold, 5 alternating runs). Reading every block in random order
// sends 3% more reads to the daemon (the same simulation: 11,419 against 11,061 of 244,140;
// measured cold, 2.51-2.56 s against 2.41-2.57 s).
// Kept apart from the store itself so that the decision is tested without a mount.
#pragma once

#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace erofs::fuse {

class StorePolicy {
 public:
  // Extents up to this size are stored on their second read, or their first in a file read
  // densely; larger ones on their fourth.
  static constexpr uint64_t kSmallExtent = 65536;
  static constexpr uint8_t kSmallTouches = 2;
  static constexpr uint8_t kLargeTouches = 4;
  // A file whose reads that reached the daemon add up to this share of it is read densely.
  static constexpr uint64_t kDenseShare = 8;  // one eighth
  // Large extents are stored once reads of their file add up to this share of it.
  static constexpr uint64_t kLargeShare = 64;

  // A read of `length` bytes of file `nid` (`file_size` bytes) was answered, and it ended inside
  // the extent [extent_offset, extent_offset + extent_length) before that extent's end. True
  // when the extent is to be stored now. Thread-safe.
  bool store_after(uint64_t nid, uint64_t file_size, uint64_t length, uint64_t extent_offset, uint64_t extent_length);
  // One extent of one file, as a key: the store's record of extents stored lately uses it too.
  static uint64_t extent_key(uint64_t nid, uint64_t extent_offset);

 private:
  std::mutex mutex_;
  std::unordered_map<uint64_t, uint8_t> touched_;    // reads that ended inside an extent, by (nid, extent start) hash
  std::unordered_map<uint64_t, uint64_t> read_bytes_;  // bytes read by the daemon, by nid
};

}  // namespace erofs::fuse
