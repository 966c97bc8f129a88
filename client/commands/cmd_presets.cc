#include "client/commands/cmd_presets.h"

#include "client/cli/calls.h"
#include "client/cli/exit_codes.h"
#include "client/output/format.h"
#include "client/output/render_presets.h"

namespace ablation::client {

CLI::App* SetupPresets(CLI::App& app, PresetsOptions& options) {
  CLI::App* sub = app.add_subcommand(
      "presets", "List the daemon's presets (named variant x shape sets that sweep runs)");
  sub->add_option("name", options.name, "Show this preset's entries and what they resolve to")
      ->type_name("PRESET");
  return sub;
}

int ExecutePresets(const PresetsOptions& options, const CommandContext& context) {
  v1::ListPresetsRequest request;
  request.set_name(options.name);
  v1::ListPresetsResponse response;
  grpc::ClientContext call;
  SetDeadline(call, context.global, kDefaultQueryTimeoutS);
  grpc::Status status = context.stub.ListPresets(&call, request, &response);
  if (!status.ok()) return ReportRpcError(status, context);
  const std::vector<v1::Preset> presets(response.presets().begin(), response.presets().end());
  if (context.global.format == Format::kJson) {
    context.out << JsonEnvelope("presets", presets);
  } else if (options.name.empty()) {
    context.out << RenderTableAs(context.global.format, PresetsTable(presets));
  } else if (!presets.empty()) {
    const v1::Preset& p = presets.front();
    if (context.global.format == Format::kTable) {
      context.out << "preset       " << p.name() << "\ndescription  " << p.description()
                  << "\nsource       " << p.source() << "\nplanned      " << p.planned()
                  << " measurements\n";
      if (p.has_report() && p.report().blocks_size() > 0) {
        std::vector<std::string> rungs;
        for (const v1::PresetRung& r : p.report().blocks(0).rungs()) rungs.push_back(r.id());
        context.out << "report       " << p.report().title() << " (rungs " << Join(rungs, ", ")
                    << ")\n";
      }
      context.out << '\n';
    }
    context.out << RenderTableAs(context.global.format, PresetEntriesTable(p));
  }
  // Missing entries are said plainly, whatever the format, on stderr.
  for (const v1::Preset& p : presets) {
    std::vector<std::string> missing = MissingEntries(p);
    if (missing.empty()) continue;
    context.err << "preset " << p.name() << ": " << missing.size()
                << (missing.size() == 1 ? " entry does" : " entries do")
                << " not resolve in this daemon: " << Join(missing, ", ") << "; sweep --preset "
                << p.name() << " needs --allow-missing\n";
  }
  return kExitOk;
}

}  // namespace ablation::client
