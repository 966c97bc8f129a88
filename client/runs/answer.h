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

/// What LadderAnswer takes from a report's markdown: every section but the table of all
/// measurements, and that table's list of items whose rounds are apart (report::kRoundsApartNote
/// and its lines) where no other section has one, so that a run of variants outside any ladder
/// still says when its figures mix levels.
std::string AnswerOfReport(const std::string& report_markdown);

}  // namespace ablation::client
