// The power regimes (docs/methodology.md, "Regimes"): what the GPU is brought to before a window is
// measured, and the pure rules that decide when it is there, so that the CPU tests pin them down on
// synthetic series.
//
// Why. A GPU at its power cap runs a kernel back to back well below the clock it starts it at:
// on an H200, cuBLAS bf16 at 4096^3 begins at ~800 TFLOPS, meets the 700 W cap some 50 ms in,
// and then swings +-2% from one half-second to the next around ~665 TFLOPS. A window of 0.2 s
// lands anywhere in between, and its figure depends on what ran before it. So a window is only
// taken in a named state:
//  - sustained: the window's variants run back to back, in chunks, until the effective SM clock
//    (the probes', per chunk) and the board power (NVML) have settled; then one window long
//    enough to average the power controller's oscillation (its period is about a second);
//  - burst: the GPU idles until it has cooled (no clock-event reason holds the clock down, the
//    temperature is back near the coolest seen or has stopped falling); then a short window that
//    ends before the cap engages, checked afterwards from the probes' clocks; repeated;
//  - locked: the daemon's clock lock, then as sustained (the settle detector sees a flat clock).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ablation::core {

enum class Regime { kSustained, kBurst, kLocked };

/// "sustained", "burst", "locked".
const char* RegimeName(Regime r);

/// The knobs of the regimes. The defaults come from the H200 (GPU_HOST.md; notes/gpu-runs.md,
/// "regimes"), where cuBLAS bf16 4096^3 back to back reaches the cap within 0.1 s, oscillates with
/// a period of about 1 s, and is back at its maximum clock after half a second idle.
struct RegimeParams {
  // Sustained and locked.
  double chunk_seconds = 0.25;       ///< GPU time of one settling chunk
  double span_seconds = 1.0;         ///< the settle test compares the means of such spans
  int settle_spans = 3;              ///< the last this many spans must agree
  double settle_min_seconds = 2.0;   ///< GPU time before settling may be declared
  double settle_max_seconds = 30.0;  ///< wall time after which the window is taken anyway
  double clock_tolerance = 0.004;    ///< max / min - 1 of the last spans' mean clocks
  double power_tolerance = 0.02;     ///< the same of the board power, where NVML reads it
  double window_seconds = 3.0;       ///< GPU time of the measured window
  /// GPU time of a variant's solo span: after the paired window each variant runs alone, from the
  /// state the GPU is in, until the settle test passes on its own chunks; the last this many
  /// seconds (whose spans agreed) are its figures at the cap.
  double solo_seconds = 3.0;
  // Burst.
  double burst_seconds = 0.02;      ///< GPU time of one short window
  double cool_min_seconds = 0.3;    ///< idle at least this long before a short window
  double cool_max_seconds = 10.0;   ///< then go on anyway, the rows saying so
  double cool_temp_margin_c = 5.0;  ///< cool when within this of the coolest temperature seen
  double cool_flat_c_per_s = 1.0;   ///< or when it falls more slowly than this
  double burst_clock_drop = 0.015;  ///< a window whose clock fell by more: the cap engaged
  int burst_max_windows = 200;      ///< short windows per round at most
};

// ---------------------------------------------------------------- settling

/// One settling chunk: the window's variants run back to back for chunk_seconds of GPU time.
struct SettleChunk {
  double gpu_seconds = 0;         ///< the chunk's summed sample time
  double sm_mhz = 0;              ///< its GPU-time-weighted effective clock (probes); 0: none
  std::optional<double> power_w;  ///< NVML's mean board power over the chunk
};

/// Decides from the chunks when the GPU has settled: at least settle_min_seconds of GPU time, and
/// the mean clocks (GPU-time-weighted) of the last settle_spans spans of span_seconds each within
/// clock_tolerance of one another (max / min - 1), and their mean powers likewise within
/// power_tolerance (where every span has power). Spans are cut from the chunk ends backwards,
/// whole chunks only. Why several spans and not two: under an oscillation of about a second, two
/// adjacent spans can agree by the phase alone while the level still moves (seen on the H200's
/// synthetic twin in tests/core/gpu/regime_test.cc); three spans agreeing is a level.
class SettleDetector {
 public:
  explicit SettleDetector(const RegimeParams& p) : p_(p) {}

  void Add(const SettleChunk& chunk);
  bool settled() const { return settled_; }
  double gpu_seconds() const { return gpu_seconds_; }
  size_t chunks() const { return chunks_.size(); }
  /// The last test's spreads (max / min - 1 of the spans' means); 0 before any.
  double clock_spread() const { return clock_spread_; }
  double power_spread() const { return power_spread_; }
  double last_span_mhz() const { return last_mhz_; }
  /// "settled after 5.50 s of GPU time: clock 1487 MHz (3 spans of 1.0 s within 0.34%), power
  /// 691 W (within 0.10%)", or with "not settled after ..." when it has not.
  std::string Describe() const;

 private:
  struct Span {
    double seconds = 0, mhz = 0, power = 0;
    bool has_power = false;
  };
  /// The span of whole chunks ending `skip` seconds before the last chunk's end; false when the
  /// chunks do not reach back that far.
  bool SpanBack(double skip, Span* out) const;

  RegimeParams p_;
  std::vector<SettleChunk> chunks_;
  double gpu_seconds_ = 0;
  bool settled_ = false;
  double clock_spread_ = 0, power_spread_ = 0, last_mhz_ = 0, last_power_ = 0;
  bool tested_ = false, has_power_ = false;
};

// ---------------------------------------------------------------- cooling

/// One NVML reading during a cool-down.
struct CoolReading {
  double idle_seconds = 0;  ///< since the GPU's last work
  std::optional<double> temp_c;
  std::optional<uint64_t> reasons;  ///< clock-event reason bits
};

/// Decides when an idle GPU is cool enough for a burst: idle at least cool_min_seconds, no
/// clock-event reason that holds the clock down (power cap, slowdowns, thermal), and the
/// temperature within cool_temp_margin_c of `coolest_c` (the coolest seen on this GPU at rest;
/// NaN: unknown) or falling more slowly than cool_flat_c_per_s over the last half second. Without
/// NVML (no readings carry anything) the idle time alone decides.
class CoolDetector {
 public:
  CoolDetector(const RegimeParams& p, double coolest_c) : p_(p), coolest_c_(coolest_c) {}

  void Add(const CoolReading& reading);
  bool cool() const { return cool_; }
  bool gave_up() const { return !cool_ && last_.idle_seconds >= p_.cool_max_seconds; }
  /// "cooled in 0.62 s to 44 C (coolest 40 C), no clock-event reason", or what still held.
  std::string Describe() const;

 private:
  RegimeParams p_;
  double coolest_c_;
  std::vector<CoolReading> readings_;
  CoolReading last_;
  bool cool_ = false;
  std::string holding_;  ///< what kept it from being cool at the last reading
};

/// Whether a short window ended before the cap engaged: the median effective clock of its last
/// quarter of samples (time order; NaN entries skipped) is within burst_clock_drop of its first
/// quarter's. "" when it did, else why not ("the clock fell 4.1% within the window: ...").
/// Windows of fewer than 4 usable samples pass (nothing to tell).
std::string CheckBurstWindow(const std::vector<double>& clocks_in_order, double max_drop);

}  // namespace ablation::core
