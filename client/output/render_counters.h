// Hardware counters (Measurement.counters, ProfileResponse) as columns and tables. Pure functions
// of the messages, like render.h. For people, the counters that answer the ladders' questions get
// a short column each (shared-load instructions, ldmatrix, bank conflicts, LSU / tensor pipe
// utilisation, occupancy, issue slots, L2 / DRAM throughput, the top stall reasons); for machines
// (CSV) every counter is a column of its own, keyed by its concept name, in its stored unit.
#pragma once

#include <string>
#include <vector>

#include "ablation/v1/ablation.pb.h"
#include "client/output/table.h"

namespace ablation::client {

// MeasurementsTable with the short counter columns of the counters any row has, and a
// "counters" column with the rows' counters_note; MeasurementsTable itself where no row has
// counters or a note.
Table MeasurementsWithCounters(const std::vector<ablation::v1::Measurement>& measurements);
// The same with every counter a column of its own (CSV).
Table MeasurementsWithAllCounters(const std::vector<ablation::v1::Measurement>& measurements);

// One row per profiled kernel (variant, dtype, shape) with the short columns, or every counter.
Table ProfileSummaryTable(const ablation::v1::ProfileResponse& response, bool all_counters);
// One row per kernel x counter: metric, value, unit, the tool's metric name, note.
Table ProfileCountersTable(const ablation::v1::ProfileResponse& response);
// The table format: each kernel's counters, then the kernels side by side.
std::string RenderProfile(const ablation::v1::ProfileResponse& response);

// "wait 2.73, short_scoreboard 1.55, barrier 1.34": the largest stall reasons with a value,
// "selected" (issuing, not stalled) left out.
std::string TopStalls(const std::vector<ablation::v1::Counter>& counters, int how_many);

// The short column title of a counter concept ("LDS inst", "LSU %"); the concept itself where it
// has none.
std::string CounterTitle(const std::string& metric);
// A counter's value as people read it ("67.11M", "60.8", "2.73"); "-" without one.
std::string CounterValue(const ablation::v1::Counter& counter);
// Whether the concept is a stall reason (read together as the top stalls).
bool IsStallCounter(const std::string& metric);

}  // namespace ablation::client
