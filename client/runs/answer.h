// What a run answers, printed at the end of `run` and `sweep`: the ladder sections of its report.
#pragma once

#include <cstdint>
#include <string>

#include "client/cli/options.h"

namespace ablation::client {

/// What run `run_id` answers (report::RenderAnswerMarkdown: its ladder sections as `report`
/// renders them, and the items whose rounds are apart). "" when the run matches no ladder and
/// has no such item, or cannot be read (the command's own output has said what happened).
std::string LadderAnswer(std::int64_t run_id, const CommandContext& context);

}  // namespace ablation::client
