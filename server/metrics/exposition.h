// Prometheus' text exposition format (version 0.0.4) of what a registry collects: prometheus-cpp's
// own serializer (TextSerializer: HELP and TYPE per family, escaped label values, histograms as
// cumulative _bucket{le=...} lines ending in le="+Inf", then _sum and _count).
#pragma once

#include <string>

namespace prometheus {
class Collectable;
}  // namespace prometheus

namespace ablation::metrics {

/// The content type that names this format to a scraper.
inline constexpr const char* kTextContentType = "text/plain; version=0.0.4; charset=utf-8";

/// Everything `collectable` (a prometheus::Registry) holds now, in the text format.
std::string WriteText(const prometheus::Collectable& collectable);

}  // namespace ablation::metrics
