#include "client/cmd_presets.h"

#include <algorithm>

#include "client/exit_codes.h"
#include "client/render.h"
#include "client/rpc.h"

namespace ablation::client {

CLI::App* SetupPresets(CLI::App& app, PresetsOptions& options) {
  CLI::App* sub = app.add_subcommand(
      "presets", "List the daemon's presets (named variant x shape sets that sweep runs)");
  sub->add_option("name", options.name, "Show this preset's entries and what they resolve to")
      ->type_name("PRESET");
  return sub;
}

std::vector<std::string> MissingEntries(const v1::Preset& preset) {
  std::vector<std::string> out;
  for (const v1::PresetGroup& g : preset.groups())
    for (const std::string& m : g.missing()) out.push_back(m + " (" + g.dtype() + ")");
  return out;
}

Table PresetsTable(const std::vector<v1::Preset>& presets) {
  Table table;
  table.columns = {{"name", "name"},
                   {"dtypes", "dtypes"},
                   {"variants", "variants", Align::kRight},
                   {"shapes", "shapes", Align::kRight},
                   {"planned", "planned", Align::kRight},
                   {"missing", "missing", Align::kRight},
                   {"description", "description"}};
  for (const v1::Preset& p : presets) {
    std::vector<std::string> dtypes;
    int variants = 0, shapes = 0;
    for (const v1::PresetGroup& g : p.groups()) {
      if (std::find(dtypes.begin(), dtypes.end(), g.dtype()) == dtypes.end())
        dtypes.push_back(g.dtype());
      variants += g.resolved_size();
      shapes = std::max(shapes, g.shapes_size());
    }
    table.rows.push_back({p.name(), Join(dtypes, ","), std::to_string(variants),
                          std::to_string(shapes), std::to_string(p.planned()),
                          std::to_string(MissingEntries(p).size()), p.description()});
  }
  return table;
}

Table PresetEntriesTable(const v1::Preset& preset) {
  Table table;
  table.columns = {{"group", "group", Align::kRight},
                   {"dtype", "dtype"},
                   {"shapes", "shapes"},
                   {"entry", "entry"},
                   {"status", "status"}};
  for (int i = 0; i < preset.groups_size(); ++i) {
    const v1::PresetGroup& g = preset.groups(i);
    std::vector<std::string> shapes;
    for (const auto& s : g.shapes()) shapes.push_back(FormatShape(s));
    for (const std::string& entry : g.variants()) {
      const bool missing =
          std::find(g.missing().begin(), g.missing().end(), entry) != g.missing().end();
      table.rows.push_back({std::to_string(i + 1), g.dtype(), Join(shapes, " "), entry,
                            missing ? "MISSING: not in this daemon" : "ok"});
    }
  }
  return table;
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
