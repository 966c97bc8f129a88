#include "client/runs/answer.h"

#include <sstream>

#include "client/cli/exit_codes.h"
#include "client/report/report.h"
#include "client/sources/source.h"

namespace ablation::client {

std::string LadderAnswer(std::int64_t run_id, const CommandContext& context) {
  v1::GetRunResponse run;
  std::ostringstream quiet;
  const CommandContext silent{context.global, context.stub, quiet, quiet, context.interrupted};
  const std::unique_ptr<ResultSource> daemon = DaemonResults(silent);
  if (daemon->Run(std::to_string(run_id), {.samples = true}, &run) != kExitOk) return "";
  std::vector<v1::Preset> presets;
  std::vector<v1::Variant> variants;
  if (daemon->Catalog(&presets, &variants) != kExitOk) return "";
  return report::RenderAnswerMarkdown(report::BuildReport(run, presets, variants));
}

}  // namespace ablation::client
