#include "client/cli/validators.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "client/cli/options.h"
#include "client/cli/parse.h"

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
        // NODE:ID: a daemon's run in a fleet database (--fleet-db), which the source checks.
        std::string node;
        if (text.find(':') != std::string::npos) return ParseNodeRun(text, &node, &id);
        return ParseRunId(text, &id, allow_latest);
      },
      allow_latest ? "RUN_ID|latest|NODE:RUN_ID" : "RUN_ID|NODE:RUN_ID", "run id");
}

CLI::Validator FormatTransformer() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        static const std::map<std::string, Format> kFormats = {
            {"table", Format::kTable},       {"json", Format::kJson},   {"csv", Format::kCsv},
            {"markdown", Format::kMarkdown}, {"md", Format::kMarkdown}, {"html", Format::kHtml}};
        std::string name = text;
        std::transform(name.begin(), name.end(), name.begin(),
                       [](unsigned char c) { return std::tolower(c); });
        auto it = kFormats.find(name);
        if (it == kFormats.end()) {
          return "'" + text + "' is not a format; use table, json, csv, markdown (md) or html";
        }
        // CLI11 reads enums through their underlying integer.
        text = std::to_string(static_cast<int>(it->second));
        return {};
      },
      "table|json|csv|markdown|md|html", "format");
}

CLI::Validator FractionValidator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value) || !(value > 0 && value < 1)) {
          return "'" + text + "': expected a fraction between 0 and 1 (0.005 for 0.5%)";
        }
        return {};
      },
      "0<X<1", "fraction");
}

CLI::Validator WholeNumber(std::int64_t low, std::int64_t high) {
  std::string description = "INT";
  if (high != std::numeric_limits<std::int64_t>::max())
    description = std::to_string(low) + ".." + std::to_string(high);
  else if (low >= 0)
    description = ">=" + std::to_string(low);
  return CLI::Validator(
      [low, high](std::string& text) { return CheckWholeNumber(text, low, high); }, description,
      "whole number");
}

CLI::Validator RealNumber(bool zero_ok) {
  return CLI::Validator([zero_ok](std::string& text) { return CheckRealNumber(text, zero_ok); },
                        zero_ok ? ">=0" : ">0", "number");
}

}  // namespace ablation::client
