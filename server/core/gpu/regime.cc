#include "server/core/gpu/regime.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/stats.h"
#include "server/core/gpu/nvml.h"

namespace ablation::core {

// Words of an enum by a switch, so that the compiler names a value left out (-Wswitch): such
// switches look alike across the tree (the worker's L2 methods, the client's enum words).
const char* RegimeName(Regime r) {
  switch (r) {
    case Regime::kSustained:
      return "sustained";
    case Regime::kBurst:
      return "burst";
    case Regime::kLocked:
      return "locked";
  }
  return "?";
}

// ---------------------------------------------------------------- settling

bool SettleDetector::SpanBack(double skip, Span* out) const {
  *out = {};
  double seen = 0, clocked = 0, powered = 0, mhz_sum = 0, power_sum = 0;
  for (size_t i = chunks_.size(); i-- > 0;) {
    const SettleChunk& c = chunks_[i];
    if (seen < skip - 1e-12) {
      seen += c.gpu_seconds;
      continue;
    }
    if (seen - skip >= p_.span_seconds - 1e-12) break;
    seen += c.gpu_seconds;
    out->seconds += c.gpu_seconds;
    if (c.sm_mhz > 0) {
      mhz_sum += c.sm_mhz * c.gpu_seconds;
      clocked += c.gpu_seconds;
    }
    if (c.power_w) {
      power_sum += *c.power_w * c.gpu_seconds;
      powered += c.gpu_seconds;
    }
  }
  if (out->seconds < p_.span_seconds - 1e-12) return false;
  out->mhz = clocked > 0 ? mhz_sum / clocked : 0;
  out->has_power = powered >= 0.5 * out->seconds;
  out->power = powered > 0 ? power_sum / powered : 0;
  return true;
}

void SettleDetector::Add(const SettleChunk& chunk) {
  chunks_.push_back(chunk);
  gpu_seconds_ += chunk.gpu_seconds;
  if (settled_ || gpu_seconds_ < p_.settle_min_seconds - 1e-12) return;
  // The last spans, newest first, each starting where the one after it ends.
  std::vector<Span> spans;
  double skip = 0;
  for (int i = 0; i < std::max(p_.settle_spans, 2); ++i) {
    Span span;
    if (!SpanBack(skip, &span)) return;
    // No clock from the probes: the power alone cannot say the clock has settled.
    if (!(span.mhz > 0)) return;
    spans.push_back(span);
    skip += span.seconds;
  }
  tested_ = true;
  double lo = spans[0].mhz, hi = lo, plo = spans[0].power, phi = plo;
  has_power_ = true;
  for (const Span& s : spans) {
    lo = std::min(lo, s.mhz);
    hi = std::max(hi, s.mhz);
    has_power_ = has_power_ && s.has_power && s.power > 0;
    plo = std::min(plo, s.power);
    phi = std::max(phi, s.power);
  }
  last_mhz_ = spans[0].mhz;
  last_power_ = spans[0].power;
  clock_spread_ = hi / lo - 1;
  power_spread_ = has_power_ ? phi / plo - 1 : 0;
  settled_ =
      clock_spread_ <= p_.clock_tolerance && (!has_power_ || power_spread_ <= p_.power_tolerance);
}

std::string SettleDetector::Describe() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s after %.2f s of GPU time",
                settled_ ? "settled" : "not settled", gpu_seconds_);
  std::string text = buf;
  if (!tested_) {
    return text + (chunks_.empty() ? "" : ": too few chunks with a clock to compare its spans");
  }
  std::snprintf(buf, sizeof buf, ": clock %.0f MHz (%d spans of %.2g s within %.2f%%)", last_mhz_,
                std::max(p_.settle_spans, 2), p_.span_seconds, 100 * clock_spread_);
  text += buf;
  if (has_power_) {
    std::snprintf(buf, sizeof buf, ", power %.0f W (within %.2f%%)", last_power_,
                  100 * power_spread_);
    text += buf;
  }
  return text;
}

// ---------------------------------------------------------------- cooling

void CoolDetector::Add(const CoolReading& r) {
  readings_.push_back(r);
  last_ = r;
  cool_ = false;
  if (r.idle_seconds < p_.cool_min_seconds) {
    holding_ = "idle for less than the minimum";
    return;
  }
  if (r.reasons && (*r.reasons & kThrottleReasonsMask)) {
    const auto names = ReasonNames(*r.reasons & kThrottleReasonsMask);
    holding_ = "clock held down (";
    for (size_t i = 0; i < names.size(); ++i) holding_ += (i ? ", " : "") + names[i];
    holding_ += ")";
    return;
  }
  if (r.temp_c) {
    const bool near_coolest =
        std::isfinite(coolest_c_) && *r.temp_c <= coolest_c_ + p_.cool_temp_margin_c;
    // The slope over the last half second of readings: an exponential decay towards the room's
    // equilibrium, which has flattened when the GPU is as cool as idling makes it.
    bool flat = false;
    for (size_t i = readings_.size(); i-- > 0;) {
      const CoolReading& o = readings_[i];
      const double dt = r.idle_seconds - o.idle_seconds;
      if (dt >= 0.5 && o.temp_c) {
        flat = (*o.temp_c - *r.temp_c) / dt < p_.cool_flat_c_per_s;
        break;
      }
    }
    if (!near_coolest && !flat) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "temperature %.0f C and still falling", *r.temp_c);
      holding_ = buf;
      return;
    }
  }
  cool_ = true;
  holding_.clear();
}

std::string CoolDetector::Describe() const {
  char buf[256];
  std::string text;
  if (cool_) {
    std::snprintf(buf, sizeof buf, "cooled in %.2f s", last_.idle_seconds);
    text = buf;
    if (last_.temp_c) {
      std::snprintf(buf, sizeof buf, " to %.0f C", *last_.temp_c);
      text += buf;
      if (std::isfinite(coolest_c_)) {
        std::snprintf(buf, sizeof buf, " (coolest seen %.0f C)", coolest_c_);
        text += buf;
      }
    }
    if (last_.reasons) text += ", no clock-event reason";
    if (!last_.temp_c && !last_.reasons) text += " (no NVML: by idle time alone)";
    return text;
  }
  std::snprintf(buf, sizeof buf, "not cool after %.2f s idle: ", last_.idle_seconds);
  return buf + (holding_.empty() ? std::string("no reading") : holding_);
}

std::string CheckBurstWindow(const std::vector<double>& clocks_in_order, double max_drop) {
  std::vector<double> usable;
  for (double c : clocks_in_order)
    if (std::isfinite(c) && c > 0) usable.push_back(c);
  if (usable.size() < 4) return "";
  const size_t q = usable.size() / 4;
  const double first = common::Median({usable.begin(), usable.begin() + long(q)});
  const double last = common::Median({usable.end() - long(q), usable.end()});
  const double drop = 1 - last / first;
  if (drop <= max_drop) return "";
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "the clock fell %.1f%% within the window (%.0f -> %.0f MHz): the power cap "
                "engaged before it ended",
                100 * drop, first, last);
  return buf;
}

}  // namespace ablation::core
