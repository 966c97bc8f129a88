// The History answer: stored points grouped into series (one per hardware fingerprint, variant,
// dtype, shape, regime and figures, and in a fleet's rows one per daemon too), one point per run,
// with the change points found over each series's medians. Pure: the rows come from
// db::Store::SeriesRows (the daemon) or from a fleet's PostgreSQL (db/fleet/fleet_reader.h, the
// client), so this lives where both may link it.
#pragma once

#include <vector>

#include "ablation/v1/ablation.pb.h"
#include "common/history/change_points.h"
#include "common/history/series_row.h"

namespace ablation::history {

/// `rows` ordered as SeriesRows returns them. A run with several rows of one item (rounds) is
/// one point: the median of its medians, the mean of its noise and TFLOPS.
v1::HistoryResponse BuildHistory(const std::vector<SeriesRow>& rows,
                                 const ChangePointOptions& options = {});

}  // namespace ablation::history
