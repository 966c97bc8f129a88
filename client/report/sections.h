// The sections of the report: a preset's rungs (ListPresets, PresetReport) looked up in the run,
// each row compared with the rung the preset names; and every measurement of the run.
#pragma once

#include "ablation/v1/report.pb.h"
#include "client/report/run_index.h"

namespace ablation::client::report {

// The section of a preset with rungs; `reference` is the shape of a table that is not per shape.
v1::ReportSection PresetSection(const v1::Preset& preset, const RunIndex& index,
                                const v1::Shape& reference);

// "all": every measurement of the run, in run order.
v1::ReportSection AllSection(const RunIndex& index);

}  // namespace ablation::client::report
