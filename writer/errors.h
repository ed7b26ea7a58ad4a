#pragma once

#include <stdexcept>
#include <string>

namespace erofs::writer {

// A build failed; the message is one line naming the path and the cause.
class BuildError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "PATH: strerror(err)"
std::string errno_message(const std::string& what, int err);

}  // namespace erofs::writer
