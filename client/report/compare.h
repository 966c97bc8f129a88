// `compare RUN_A RUN_B`: every variant x dtype x shape measured in both runs, tested for a real
// difference with Welch's t-test on the log sample times (stats.h). A regression is a change that
// is significant (p < 0.05) and slower than the threshold; `compare` exits 1 when there is one.
#pragma once

#include <string>
#include <vector>

#include "ablation/v1/ablation.pb.h"
#include "client/render.h"
#include "client/report/stats.h"

namespace ablation::client::report {

inline constexpr double kSignificance = 0.05;

struct CompareRow {
  std::string variant;
  std::string dtype;
  ablation::v1::Shape shape;
  double median_a_ms = 0;
  double median_b_ms = 0;
  int samples_a = 0;
  int samples_b = 0;
  WelchResult test;          ///< b against a; invalid without 2+ samples on each side
  bool significant = false;  ///< test.valid && test.p < kSignificance
  bool regression = false;   ///< significant && test.time_change > threshold
  std::string verdict;  ///< "slower", "faster", "same (within noise)", "REGRESSION", "no samples"
};

struct Comparison {
  std::int64_t run_a = 0;
  std::int64_t run_b = 0;
  double threshold = 0.03;
  std::vector<CompareRow> rows;
  std::vector<std::string> only_in_a;  ///< "variant dtype shape"
  std::vector<std::string> only_in_b;
  int regressions() const;
};

/// Matches the successful measurements of both runs (samples needed for the test).
Comparison Compare(const ablation::v1::GetRunResponse& a, const ablation::v1::GetRunResponse& b,
                   double threshold);

Table CompareTable(const Comparison& comparison);  // table, markdown, csv
std::string CompareJson(const Comparison& comparison);

/// "3%", "3" (both 3 percent) or "0.5%". Empty on success, else what is wrong.
std::string ParseThreshold(const std::string& text, double* fraction);

}  // namespace ablation::client::report
