// Temporary files beside the image being built (the image itself, spill files before they are
// unlinked), named in a fixed table a signal handler can read: an interrupted build leaves
// nothing behind. The one process-wide object of the layers; only the command installs the
// handlers, never the library.
#pragma once

namespace erofs::writer {

// Removes the registered files on SIGINT/SIGTERM/SIGHUP, then lets the signal end the process.
void install_cleanup_signal_handlers();
// Names the handlers remove (at most 16 at a time); the string must live until unregistered.
void register_temp(const char* path);
void unregister_temp(const char* path);

}  // namespace erofs::writer
