#include "client/output/render_presets.h"

#include <algorithm>

#include "client/output/format.h"

namespace ablation::client {

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

}  // namespace ablation::client
