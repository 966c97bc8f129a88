#include "client/validators.h"

#include "client/parse.h"

namespace ablation::client {

CLI::Validator ShapeValidator() {
  return CLI::Validator(
      [](std::string& text) {
        ablation::v1::Shape shape;
        return ParseShape(text, &shape);
      },
      "MxNxK", "shape");
}

CLI::Validator TimeValidator() {
  return CLI::Validator(
      [](std::string& text) {
        std::int64_t ms = 0;
        return ParseTimeMs(text, &ms);
      },
      "ISO8601|UNIX_MS", "time");
}

CLI::Validator RunIdValidator(bool allow_latest) {
  return CLI::Validator(
      [allow_latest](std::string& text) {
        std::int64_t id = 0;
        return ParseRunId(text, &id, allow_latest);
      },
      allow_latest ? "RUN_ID|latest" : "RUN_ID", "run id");
}

}  // namespace ablation::client
