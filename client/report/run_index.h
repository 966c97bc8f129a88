// What the report and compare look up in a run: its items (variant x dtype x shape, one row per
// round) and what the daemon's variant list says of a variant (its tile, and which variant is the
// cuBLAS of a dtype); and the run's noise floors (stats.h).
#pragma once

#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "ablation/v1/ablation.pb.h"
#include "ablation/v1/report.pb.h"
#include "client/report/stats.h"

namespace ablation::client::report {

namespace v1 = ::ablation::v1;

// One item of a run with its rows of every round.
struct Item {
  std::vector<const v1::Measurement*> rows;                     // every row, in run order
  std::vector<const v1::Measurement*> ok;                       // the successful ones, by round
  double median_ms = std::numeric_limits<double>::quiet_NaN();  // ItemMedian(Times(item))
  double tflops = 0;                                            // at median_ms
  const v1::Measurement& first() const { return *rows.front(); }
  bool measured() const { return !ok.empty(); }
};

// The item's successful rounds: samples (ms) and median; samples absent on old rows.
ItemRounds Times(const Item& item);
// Its rounds with SM cycles: sample_cycles and their median, or the stored median_cycles; empty
// when no round has cycles.
ItemRounds Cycles(const Item& item);
// Its rounds' effective SM clocks (MHz): sample_sm_mhz, or the stored median_sm_mhz.
ItemRounds Clocks(const Item& item);
// Its successful rounds' solo spans (Measurement.solo: the variant alone at the cap): their
// samples (solo_sample_ms; a window of one variant's own samples) and solo_median_ms; rounds
// without a solo span are left out.
ItemRounds SoloTimes(const Item& item);
// Those rounds' solo clocks (solo_sm_mhz), medians only.
ItemRounds SoloClocks(const Item& item);
// Every successful round has a solo span (and there is one).
bool AllSolo(const Item& item);
// The item's solo TFLOPS at a solo median time (a row's solo_tflops moved to it); 0: no solo span.
double SoloTflops(const Item& item, double median_ms);
// low_clock_samples / samples over the successful rounds that count them; < 0 when none does.
double LowClockShare(const Item& item);

// The windows `self` and `vs` were interleaved in (successful rows of each with the same nonzero
// window id), one PairedRound each in self's round order: per-sample ms, SM cycles, and SM
// clocks (the stored median_sm_mhz where a row has it, else its samples). Empty when the two
// shared no window: old rows, other dtypes or shapes, an unpaired run.
std::vector<PairedRound> PairedTimes(const Item& self, const Item& vs);
std::vector<PairedRound> PairedCycles(const Item& self, const Item& vs);
std::vector<PairedRound> PairedClocks(const Item& self, const Item& vs);

class RunIndex {
 public:
  RunIndex(const v1::GetRunResponse& run, const std::vector<v1::Variant>& variants);
  RunIndex(const RunIndex&) = delete;  // items_ point into the run; by_key_ into items_
  RunIndex& operator=(const RunIndex&) = delete;

  // The item of a variant in a dtype at a shape, measured or not; null when the run has none.
  const Item* Find(const std::string& variant, const std::string& dtype,
                   const v1::Shape& shape) const;
  // The fastest measured item of any of `variants` (the first of equals).
  const Item* Fastest(const std::vector<std::string>& variants, const std::string& dtype,
                      const v1::Shape& shape) const;
  // The rows of the run (any status) that are of a (variant, dtype) in `keys`.
  int Count(const std::vector<std::pair<std::string, std::string>>& keys) const;
  // The shapes at which the run measured a (variant, dtype) of `keys`.
  std::vector<v1::Shape> ShapesOf(
      const std::vector<std::pair<std::string, std::string>>& keys) const;
  // 4096^3 when the run has it, else its most frequent shape.
  v1::Shape ReferenceShape() const;

  // "128x128x32", the variant's tile as the daemon lists it; "" for one without (cuBLAS).
  std::string Tile(const std::string& variant) const;
  // The variant of the cuBLAS family that takes `dtype`, the first listed; "" if none. With
  // `best`: its cublas_<dtype>_best (the fastest of cuBLASLt's candidates), where listed.
  std::string Cublas(const std::string& dtype, bool best = false) const;
  // The measured micro-benchmark (family smem2reg) of `variant` at a dtype and shape: the one
  // whose every parameter (read_mode, b_layout, swizzle) the variant has with the same value,
  // i.e. the same shared memory -> register path without the rest of the GEMM. Null if none.
  const Item* MicroBenchmark(const std::string& variant, const std::string& dtype,
                             const v1::Shape& shape) const;

  // Every item, in the order of its first row.
  const std::vector<Item>& items() const { return items_; }
  // Run.rounds, or the most rounds a row shows (old runs: 1).
  int rounds() const { return rounds_; }
  // NoiseFloor of the measured items' RoundSpread, of times and of cycles; 0: unknown.
  double floor() const { return floor_; }
  double cycles_floor() const { return cycles_floor_; }
  // The same of the items' solo spans (SoloTimes); 0: unknown.
  double solo_floor() const { return solo_floor_; }
  // The paired floors (stats.h): of times and of cycles; 0: unknown.
  double paired_floor() const { return paired_floor_; }
  double paired_cycles_floor() const { return paired_cycles_floor_; }
  // Whether two items of the run shared a window.
  bool paired() const { return paired_; }

 private:
  using Key = std::tuple<std::string, std::string, std::int64_t, std::int64_t, std::int64_t>;
  std::vector<Item> items_;
  std::map<Key, std::size_t> by_key_;
  std::vector<const v1::Measurement*> rows_;
  std::map<std::string, const v1::Variant*> variants_;
  std::vector<const v1::Variant*> cublas_;
  int rounds_ = 0;
  double floor_ = 0;
  double cycles_floor_ = 0;
  double solo_floor_ = 0;
  double paired_floor_ = 0;
  double paired_cycles_floor_ = 0;
  bool paired_ = false;

  void SetPairedFloors();
};

v1::Shape MakeShape(std::int64_t m, std::int64_t n, std::int64_t k);
bool SameShape(const v1::Shape& a, const v1::Shape& b);
// "variant dtype MxNxK"
std::string ItemName(const v1::Measurement& m);
// The model's Change of a computed one, with the note its basis calls for.
v1::Change ChangeMessage(const Change& change);

}  // namespace ablation::client::report
