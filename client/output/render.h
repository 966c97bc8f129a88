// Renderers: pure functions from the API's messages to text, so they are unit-tested without a
// daemon. Commands build a Table (for people: table, markdown; for spreadsheets: csv) or hand the
// messages themselves to the JSON renderer, which keeps every field.
#pragma once

#include <string>
#include <vector>

#include "ablation/v1/ablation.pb.h"
#include "client/output/escape.h"
#include "client/output/format.h"
#include "client/output/json.h"
#include "client/output/table.h"

namespace ablation::client {

// ---- the API's messages as tables
Table VariantsTable(const std::vector<ablation::v1::Variant>& variants);
Table MeasurementsTable(const std::vector<ablation::v1::Measurement>& measurements,
                        bool every_column = false);
// "sustained", "burst (not settled)" where the regime's condition did not hold; "-" for a row
// stored before regimes.
std::string RegimeLabel(const ablation::v1::Measurement& m);
// What a row's verification found, in words; its outcome where the daemon gave no words.
std::string VerificationText(const ablation::v1::Measurement& m);
Table RunsTable(const std::vector<ablation::v1::Run>& runs);
Table VerifyTable(const std::vector<ablation::v1::VerifyResult>& results);
Table DeviceTable(const ablation::v1::GetDeviceResponse& device);  // field, value
std::string RunHeader(const ablation::v1::Run& run);               // "field  value" lines
/// With the run's rows: a "cost" line too, where the rows say where their wall time went (schema
/// v10): the run's duration against the GPU time sampled, and the worker's parts.
std::string RunHeader(const ablation::v1::Run& run,
                      const std::vector<ablation::v1::Measurement>& measurements);

// ---- advise and sass (render_advise.cc; the table format is prose with aligned fields)
std::string RenderAdvice(const ablation::v1::AdviseRequest& request,
                         const ablation::v1::AdviseResponse& response);
Table AdviceTable(const ablation::v1::AdviseRequest& request,
                  const ablation::v1::AdviseResponse& response);  // field, value
// The verdict, its checks, the family's compute counts and the annotated main loop.
std::string RenderSass(const ablation::v1::SassResponse& response);
Table SassFamilyTable(const ablation::v1::SassResponse& response);  // one row per kernel

// ---- RunAblation progress, one line per event (no trailing newline)
std::string ProgressLine(const ablation::v1::RunEvent& event, int measurements_seen, int total);

}  // namespace ablation::client
