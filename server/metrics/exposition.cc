#include "server/metrics/exposition.h"

#include <charconv>
#include <cmath>

namespace ablation::metrics {
namespace {

using core::metrics::FamilySnapshot;
using core::metrics::MetricType;

const char* TypeWord(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

// {a="x",b="y"} with `extra` (the le of a bucket) last; nothing at all when there are no labels.
void AppendLabels(const std::vector<std::string>& names, const std::vector<std::string>& values,
                  const std::string& extra_name, const std::string& extra_value, std::string* out) {
  if (names.empty() && extra_name.empty()) return;
  *out += '{';
  bool first = true;
  auto one = [&](const std::string& name, const std::string& value) {
    if (!first) *out += ',';
    first = false;
    *out += name;
    *out += "=\"";
    *out += EscapeLabelValue(value);
    *out += '"';
  };
  for (size_t i = 0; i < names.size() && i < values.size(); ++i) one(names[i], values[i]);
  if (!extra_name.empty()) one(extra_name, extra_value);
  *out += '}';
}

void AppendSample(const std::string& name, const FamilySnapshot& family,
                  const std::vector<std::string>& labels, const std::string& extra_name,
                  const std::string& extra_value, const std::string& value, std::string* out) {
  *out += name;
  AppendLabels(family.label_names, labels, extra_name, extra_value, out);
  *out += ' ';
  *out += value;
  *out += '\n';
}

}  // namespace

std::string EscapeHelp(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  if (ec != std::errc()) return "NaN";  // cannot happen with 64 bytes; never print garbage
  return std::string(buf, end);
}

std::string WriteText(const std::vector<FamilySnapshot>& families) {
  std::string out;
  for (const FamilySnapshot& f : families) {
    out += "# HELP " + f.name + " " + EscapeHelp(f.help) + "\n";
    out += "# TYPE " + f.name + " " + TypeWord(f.type) + "\n";
    for (const auto& s : f.series) {
      if (f.type != MetricType::kHistogram) {
        AppendSample(f.name, f, s.labels, "", "", FormatValue(s.value), &out);
        continue;
      }
      for (size_t b = 0; b < f.bounds.size() && b < s.cumulative_buckets.size(); ++b)
        AppendSample(f.name + "_bucket", f, s.labels, "le", FormatValue(f.bounds[b]),
                     std::to_string(s.cumulative_buckets[b]), &out);
      AppendSample(f.name + "_bucket", f, s.labels, "le", "+Inf", std::to_string(s.count), &out);
      AppendSample(f.name + "_sum", f, s.labels, "", "", FormatValue(s.sum), &out);
      AppendSample(f.name + "_count", f, s.labels, "", "", std::to_string(s.count), &out);
    }
  }
  return out;
}

}  // namespace ablation::metrics
