// A preset as read from TOML: named sets of variants x shapes x dtypes and, for a ladder, how it
// reads as a section of the report. Plain data: presets.h keeps and resolves them,
// presets_parse.h reads them.
#pragma once

#include <string>
#include <vector>

#include "ablation/v1/ablation.pb.h"

namespace ablation::core {

/// Variants of one dtype at a set of shapes.
struct PresetGroup {
  std::string dtype = "bf16";
  std::vector<std::string> variants;  ///< selectors as written: names, short names, globs
  std::vector<v1::Shape> shapes;
};

/// One row of a preset's report section ([[name.rung]]). Text may hold "{dtype}": the dtype of
/// the rung where it is shown.
struct PresetRung {
  std::string id;       ///< "A1"
  std::string label;    ///< "ld.shared, B as [k][n]"
  std::string variant;  ///< a selector, written as one of the preset's entries or a glob of them
  std::string dtype;    ///< empty: the dtype of the block it is shown in
  std::vector<std::string>
      against;  ///< rung ids; by default the previous rung (none for the first)
  bool per_tile = false;
};

/// How a preset with rungs reads as a section of the report (presets.toml documents the keys).
struct PresetReport {
  std::string title;
  std::string scope;
  std::vector<std::string> notes;
  int order = 0;
  std::vector<std::string> dtypes;  ///< report_dtypes: one block each, preferred first
  bool per_dtype = false;
  bool per_shape = false;
  std::vector<PresetRung> rungs;
  std::vector<std::string> counters;  ///< counter concepts shown beside the rungs (sets expanded)
};

struct Preset {
  std::string name;
  std::string description;
  std::vector<PresetGroup> groups;
  std::string source;   ///< "built-in" or "file:line"
  PresetReport report;  ///< no rungs: not a report section
};

}  // namespace ablation::core
