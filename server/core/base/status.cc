#include "server/core/base/status.h"

#include <spdlog/spdlog.h>

#include "db/error.h"

namespace ablation::core {

Status StatusFromException(const std::exception& e) {
  if (const auto* d = dynamic_cast<const db::Error*>(&e)) {
    switch (d->code()) {
      case db::Error::Code::kInvalidArgument:
        return InvalidArgument(d->what());
      case db::Error::Code::kNotFound:
        return NotFound(d->what());
      case db::Error::Code::kIncompatible:
        return FailedPrecondition(d->what());
      case db::Error::Code::kStorage:
        break;
    }
  }
  spdlog::error("internal error: {}", e.what());
  return {Code::kInternal, "internal error (the daemon's log has the details)"};
}

}  // namespace ablation::core
