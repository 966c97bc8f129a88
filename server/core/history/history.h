// The History answer: stored points grouped into series (one per hardware fingerprint, variant,
// dtype, shape and regime), one point per run, with the change points found over each series's
// medians. Pure: the rows come from db::Store::SeriesRows.
#pragma once

#include <vector>

#include "ablation/v1/ablation.pb.h"
#include "db/records.h"
#include "server/core/history/change_points.h"

namespace ablation::core {

/// `rows` ordered as SeriesRows returns them. A run with several rows of one item (rounds) is
/// one point: the median of its medians, the mean of its noise and TFLOPS.
v1::HistoryResponse BuildHistory(const std::vector<db::SeriesRow>& rows,
                                 const ChangePointOptions& options = {});

}  // namespace ablation::core
