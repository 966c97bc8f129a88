// `compare RUN_A RUN_B`: every variant x dtype x shape measured in both runs, tested for a real
// difference with Welch's t-test on the log sample times (stats.h). A regression is a change that
// is significant (p < 0.05) and slower than the threshold; `compare` exits 1 when there is one.
// The result is one model, ablation.v1.Comparison (report.proto), that the formats print.
#pragma once

#include <string>

#include "ablation/v1/ablation.pb.h"
#include "ablation/v1/report.pb.h"
#include "client/table.h"

namespace ablation::client::report {

inline constexpr double kSignificance = 0.05;
inline constexpr int kComparisonSchemaVersion = 1;

// Matches the successful measurements of both runs (samples needed for the test).
ablation::v1::Comparison Compare(const ablation::v1::GetRunResponse& a,
                                 const ablation::v1::GetRunResponse& b, double threshold);

Table CompareTable(const ablation::v1::Comparison& comparison);  // table, markdown, csv

// "3%", "3" (both 3 percent) or "0.5%". Empty on success, else what is wrong.
std::string ParseThreshold(const std::string& text, double* fraction);

}  // namespace ablation::client::report
