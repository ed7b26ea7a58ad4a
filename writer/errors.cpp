#include "writer/errors.h"

#include <cstring>

namespace erofs::writer {

std::string errno_message(const std::string& what, int err) { return what + ": " + std::strerror(err); }

}  // namespace erofs::writer
