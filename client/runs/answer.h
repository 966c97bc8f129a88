// What a run answers, printed at the end of `run` and `sweep`: the ladder sections of its report.
#pragma once

#include <cstdint>
#include <string>

#include "client/cli/options.h"

namespace ablation::client {

/// The ladder sections of run `run_id`'s report (markdown, as `report` renders them): what the
/// run answers. "" when the run matches no ladder or cannot be read (the command's own output has
/// said what happened).
std::string LadderAnswer(std::int64_t run_id, const CommandContext& context);

}  // namespace ablation::client
