// Turns the layers' exceptions into the public Error values.
#pragma once

#include <exception>
#include <string>
#include <type_traits>
#include <utility>

#include "erofs-kit/erofs.hpp"

namespace erofs::lib {

// The exception in flight (call from a catch block) as an Error; exceptions of no more specific
// type get the code `fallback`.
Error current_error(ErrorCode fallback);

// Runs fn, returning its result or the Error its exception stands for.
template <class T, class F>
Result<T> guarded(F&& fn, ErrorCode fallback = ErrorCode::Build) {
  try {
    if constexpr (std::is_void_v<T>) {
      fn();
      return {};
    } else {
      return fn();
    }
  } catch (...) {
    return current_error(fallback);
  }
}

Error invalid_argument(std::string message);

}  // namespace erofs::lib
