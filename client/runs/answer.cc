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
  const std::string md = report::RenderReportMarkdown(report::BuildReport(run, presets, variants));
  // Every ladder section ("## N. Title" up to the next "## "), not the run's header nor the
  // table of all its measurements (which the command has just printed).
  std::string out;
  size_t at = md.find("\n## ");
  while (at != std::string::npos) {
    const size_t start = at + 1;
    const size_t next = md.find("\n## ", start);
    const std::string section =
        md.substr(start, next == std::string::npos ? std::string::npos : next + 1 - start);
    if (section.find("All measurements of the run") == std::string::npos) out += section;
    at = next;
  }
  return out;
}

}  // namespace ablation::client
