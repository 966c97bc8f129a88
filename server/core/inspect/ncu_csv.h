// What Nsight Compute's CSV says: `ncu --csv --page raw` prints one header row of column names
// (launch fields, then one column per metric), a row of units, and one row per profiled launch;
// its own messages (==PROF==, ==WARNING==, ==ERROR==) and anything the program printed sit among
// them. The older `--page details` layout (one row per metric, "Metric Name" / "Metric Unit" /
// "Metric Value") is read too. Pure functions, tested on real output (tests/core/testdata/ncu).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ablation::core {

/// One metric of one launch as ncu printed it.
struct NcuValue {
  std::string unit;  ///< "byte/s", "%", "inst", "" for a plain count
  std::string text;  ///< "4,118,558,814,953.05", "n/a"
};

/// One profiled launch.
struct NcuLaunch {
  std::string id;           ///< ncu's launch id ("0")
  std::string kernel_name;  ///< demangled, as ncu prints it
  std::string cc;           ///< "9.0"
  std::map<std::string, NcuValue> metrics;
};

struct NcuOutput {
  std::vector<NcuLaunch> launches;
  /// ncu's ==ERROR== and ==WARNING== lines, in order, without the marker ("ERR_NVGPUCTRPERM -
  /// ...").
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
};

/// Parses ncu's output (stdout, or stdout and stderr together).
NcuOutput ParseNcuCsv(std::string_view text);

/// A value as ncu prints it: thousands separators dropped ("1,234.5" -> 1234.5); "n/a", "" and
/// anything else that is not a number -> nullopt.
std::optional<double> ParseNcuNumber(std::string_view text);

/// The fields of one CSV record (RFC 4180 quoting, as ncu writes it).
std::vector<std::string> SplitCsvRecord(std::string_view line);

}  // namespace ablation::core
