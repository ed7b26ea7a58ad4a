#include "lib/errors.h"

#include <cerrno>
#include <new>
#include <system_error>

#include "compress/codec.h"
#include "reader/image.h"
#include "verity/params.h"
#include "writer/errors.h"
#include "writer/option_text.h"

namespace erofs::lib {

Error invalid_argument(std::string message) { return {ErrorCode::InvalidArgument, 0, std::move(message)}; }

Error current_error(ErrorCode fallback) {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    throw;  // the one exception the API lets through
  } catch (const reader::IoError& e) {
    return {e.error == ENOENT ? ErrorCode::NotFound : ErrorCode::Io, e.error, e.what()};
  } catch (const reader::CorruptError& e) {
    return {ErrorCode::Corrupt, 0, e.what()};
  } catch (const compress::DecodeError& e) {
    return {ErrorCode::Corrupt, 0, e.what()};
  } catch (const reader::UnsupportedError& e) {
    return {ErrorCode::Unsupported, 0, e.what()};
  } catch (const writer::OptionError& e) {
    return invalid_argument(e.what());
  } catch (const verity::ParamError& e) {
    return invalid_argument(e.what());  // verity::Error (the hash library failing) takes the fallback
  } catch (const writer::BuildError& e) {
    return {ErrorCode::Build, 0, e.what()};
  } catch (const std::system_error& e) {
    return {ErrorCode::Io, e.code().value(), e.what()};
  } catch (const std::exception& e) {
    return {fallback, 0, e.what()};
  } catch (...) {
    return {fallback, 0, "unknown error"};
  }
}

}  // namespace erofs::lib
