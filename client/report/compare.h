// `compare RUN_A RUN_B`: every item (variant x dtype x shape) both runs measured, each over all
// its rounds: the time change of B against A, median(b) / median(a) - 1, with a 95% interval from
// a bootstrap that resamples each run's rounds on their own (stats.h); the same on SM cycles;
// and how each run's rows ran (effective and NVML SM clocks, throttled and low-clock shares,
// power, temperature). The model, ablation.v1.Comparison (report.proto), is what every format
// prints.
//
// Verdicts. T: the time change, C: the cycles change; "within noise": the interval contains 0 or
// |change| < the larger of the two runs' floors (stats.h).
//  - T without an interval and not within noise: "no samples" (nothing can be claimed).
//  - T within noise: "same (within noise)". |T| under kSmallestChange, however tight the noise
//    (a test double's identical samples, two runs of one cached answer): "same (under 0.1%)",
//    not significant: nothing measured here repeats to better than that.
//  - T < 0: "faster".
//  - T > 0, slower. The clocks explain it when they moved (the SM clock down by kClockDrop or
//    more, or the throttled or the low-clock share up by kThrottleRise or more) AND C is within
//    noise, i.e. the kernel took the same cycles at a lower clock: "slower with the clock down
//    9%: throttling, not the kernel" (`explained`). Otherwise "slower", saying in parentheses
//    what the clocks did where they moved and what the cycles did.
//  - A regression: slower beyond the threshold and not explained; under --strict (`strict`)
//    explained ones count too: "REGRESSION", "REGRESSION (--strict; the clock down 9%, ...)".
// The SM clock compared is the effective one (the per-sample probes, median over rounds) where
// both runs have it, else NVML's mean.
//
// `compare` exits 1 on a regression or when a side is not a complete run (Incomplete), and
// refuses (exit 2) runs whose setups differ (SetupDifferences) unless --allow-different-device,
// and runs of different power regimes (RegimeDifference) unless --allow-different-regime: a
// kernel's time in a sustained window and in a burst differ by what power lets the clock do, not
// by the kernel. Rows within a run are matched as ever, whatever windows they were measured in.
#pragma once

#include <string>
#include <vector>

#include "ablation/v1/ablation.pb.h"
#include "ablation/v1/report.pb.h"
#include "client/output/table.h"

namespace ablation::client::report {

inline constexpr int kComparisonSchemaVersion = 1;
inline constexpr double kClockDrop = 0.02;     // an SM clock 2% or more lower
inline constexpr double kThrottleRise = 0.05;  // 5 points more of the samples throttled
// The smallest time change a comparison calls a change: paired changes repeat to about a tenth
// of a point on the H200 (notes/gpu-runs.md), so a smaller one is no finding.
inline constexpr double kSmallestChange = 0.001;

ablation::v1::Comparison Compare(const ablation::v1::GetRunResponse& a,
                                 const ablation::v1::GetRunResponse& b, double threshold,
                                 bool strict = false);

// How the runs' setups differ, a line each: device (UUID where both have one, and name), driver,
// cuBLAS version. Empty: the same setup.
std::vector<std::string> SetupDifferences(const ablation::v1::Run& a, const ablation::v1::Run& b);
// How the runs' regimes differ: "different regimes: run 1 sustained, run 2 burst" (a run
// stored before regimes: "none"); "" for the same regime.
std::string RegimeDifference(const ablation::v1::Run& a, const ablation::v1::Run& b);
// Why compare refuses the runs, a line each: their setups differ and not `allow_device`, their
// regimes differ and not `allow_regime`. Empty: it compares them.
std::vector<std::string> Refusals(const ablation::v1::Run& a, const ablation::v1::Run& b,
                                  bool allow_device, bool allow_regime);
// Why a run is not a complete run to compare ("run 2 is partial: 1 of 12 measurements failed"),
// or "" for a succeeded one.
std::string Incomplete(const ablation::v1::Run& run);

// For people (table, markdown): a column "A -> B" per condition, those no row has left out. With
// `one_value_per_column` (CSV): every column, each run's value in its own.
Table CompareTable(const ablation::v1::Comparison& comparison, bool one_value_per_column = false);

// "3%", "3" (both 3 percent) or "0.5%". Empty on success, else what is wrong.
std::string ParseThreshold(const std::string& text, double* fraction);

}  // namespace ablation::client::report
