// Renderers: pure functions from the API's messages to text, so they are unit-tested without a
// daemon. Commands build a Table (for people: table, markdown; for spreadsheets: csv) or hand the
// messages themselves to the JSON renderer, which keeps every field.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/message.h>

#include "ablation/v1/ablation.pb.h"
#include "client/options.h"

namespace ablation::client {

enum class Align { kLeft, kRight };

struct Column {
  std::string key;    // CSV header and JSON-like name: snake_case, stable
  std::string title;  // table and markdown header, for people
  Align align = Align::kLeft;
};

// One value, as people read it and as machines want it: "1.235" ms in a table, full precision in
// CSV; "-" for a missing value in a table, an empty field in CSV.
struct Cell {
  std::string text;
  std::optional<std::string> exact;  // unset: the text is exact already

  Cell() = default;
  Cell(std::string t) : text(std::move(t)) {}  // NOLINT: strings are cells
  Cell(const char* t) : text(t) {}             // NOLINT
  Cell(std::string t, std::string e) : text(std::move(t)), exact(std::move(e)) {}
  const std::string& Exact() const { return exact ? *exact : text; }
};

struct Table {
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;
};

// ---- generic renderers
std::string RenderText(const Table& table);      // aligned columns; numbers right-aligned
std::string RenderMarkdown(const Table& table);  // GitHub-flavoured pipe table
std::string RenderCsv(const Table& table);       // RFC 4180: CRLF, quoted where needed
std::string CsvField(std::string_view value);
// The table in a non-JSON format (kJson is the caller's business: it renders messages).
std::string RenderTableAs(Format format, const Table& table);

// ---- JSON: protobuf's canonical mapping, field names as in the .proto, defaults included so
// the keys are stable whatever the values (int64 fields are strings, as that mapping says).
std::string JsonObject(const google::protobuf::Message& message);
std::string JsonArray(const std::vector<const google::protobuf::Message*>& messages);
template <class M>
std::string JsonArray(const std::vector<M>& messages) {
  std::vector<const google::protobuf::Message*> pointers;
  pointers.reserve(messages.size());
  for (const M& m : messages) pointers.push_back(&m);
  return JsonArray(pointers);
}

// Renders items as JSON from the messages, or in any other format through `to_table`.
template <class M>
std::string RenderList(Format format, const std::vector<M>& items,
                       Table (*to_table)(const std::vector<M>&)) {
  if (format == Format::kJson) return JsonArray(items);
  return RenderTableAs(format, to_table(items));
}

// ---- values
std::string FormatSignificant(double value, int digits);  // 4 -> 1.235, 12.35, 1235, 12346
std::string FormatFixed(double value, int decimals);
std::string FormatExact(double value);  // shortest text that reads back to the same double
std::string FormatShape(const ablation::v1::Shape& shape);  // 4096x4096x4096
std::string FormatTimeMs(std::int64_t unix_ms);             // 2026-11-30T12:00:00Z, "-" for 0
std::string FormatBytes(std::int64_t bytes);                // 48 KiB, 99.5 KiB, 512 B
std::string Join(const std::vector<std::string>& items, std::string_view separator);

// ---- the API's messages as tables
Table VariantsTable(const std::vector<ablation::v1::Variant>& variants);
Table MeasurementsTable(const std::vector<ablation::v1::Measurement>& measurements);
Table RunsTable(const std::vector<ablation::v1::Run>& runs);
Table VerifyTable(const std::vector<ablation::v1::VerifyResult>& results);
Table DeviceTable(const ablation::v1::GetDeviceResponse& device);  // field, value
std::string RunHeader(const ablation::v1::Run& run);               // "field  value" lines

// ---- advise and sass (the table format is prose with aligned fields, not a grid)
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
