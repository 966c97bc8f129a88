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
      case db::Error::Code::kFull:
        // The path and SQL stay in the log; the caller hears what happened and what to do.
        spdlog::error("the results database has no room: {}", e.what());
        return {Code::kResourceExhausted,
                "the results database could not be written: no room (a full disk, a quota or a "
                "file-size limit): results from here on could not be stored, what was stored "
                "before is kept; free space and run again"};
      case db::Error::Code::kStorage:
        break;
    }
  }
  spdlog::error("internal error: {}", e.what());
  return {Code::kInternal, "internal error (the daemon's log has the details)"};
}

}  // namespace ablation::core
