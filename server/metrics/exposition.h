// Prometheus' text exposition format (version 0.0.4) of a registry snapshot: for each family a
// HELP and a TYPE line, then its samples; histograms as cumulative _bucket{le=...} lines with a
// final le="+Inf", then _sum and _count. Only formatting: the numbers come from registry.h.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "server/metrics/registry.h"

namespace ablation::metrics {

/// The content type that names this format to a scraper.
inline constexpr const char* kTextContentType = "text/plain; version=0.0.4; charset=utf-8";

/// A HELP text with backslash and line feed escaped (\\, \n), as the format requires.
std::string EscapeHelp(std::string_view help);
/// A label value with backslash, double quote and line feed escaped (\\, \", \n).
std::string EscapeLabelValue(std::string_view value);
/// A sample value as Go's ParseFloat reads it: the shortest text that reads back the same
/// double, and +Inf, -Inf, NaN.
std::string FormatValue(double value);

std::string WriteText(const std::vector<core::metrics::FamilySnapshot>& families);

}  // namespace ablation::metrics
