#include "client/runs/answer.h"

#include <algorithm>
#include <sstream>

#include "client/cli/exit_codes.h"
#include "client/report/report.h"
#include "client/report/text.h"
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
  return AnswerOfReport(report::RenderReportMarkdown(report::BuildReport(run, presets, variants)));
}

std::string AnswerOfReport(const std::string& md) {
  // Every ladder section ("## N. Title" up to the next "## "), not the run's header nor the
  // table of all its measurements (which the command has just printed); from that table's
  // section, its rounds-apart list where no ladder section names those items already.
  std::string out, apart;
  size_t at = md.find("\n## ");
  while (at != std::string::npos) {
    const size_t start = at + 1;
    const size_t next = md.find("\n## ", start);
    const std::string section =
        md.substr(start, next == std::string::npos ? std::string::npos : next + 1 - start);
    if (section.find("All measurements of the run") == std::string::npos) {
      out += section;
    } else if (const size_t p = section.find(report::kRoundsApartNote); p != std::string::npos) {
      // The note, a blank line, then its "- " lines up to the first line that is not one.
      size_t end = std::min(section.find("\n\n", p), section.size() - 2) + 2;
      while (end < section.size() && section.compare(end, 2, "- ") == 0)
        end = std::min(section.find('\n', end), section.size() - 1) + 1;
      apart = section.substr(p, end - p);
    }
    at = next;
  }
  if (!apart.empty() && out.find(report::kRoundsApartNote) == std::string::npos)
    out += (out.empty() ? "" : "\n") + apart;
  return out;
}

}  // namespace ablation::client
