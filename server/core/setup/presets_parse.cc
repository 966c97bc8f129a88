// Reading presets from TOML: every key checked, every error naming its file, line and key.
// Presets (presets.cc) calls ReadPreset for each top-level table.
#include "server/core/setup/presets_parse.h"
#include "common/toml_doc.h"
#include "server/core/setup/toml_keys.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <tuple>

#include "server/core/plan/counters.h"
#include "server/core/plan/variant_names.h"
#include "server/core/setup/presets.h"

namespace ablation::core {

// "presets.toml:12: ladder-b.variants[3]: expected a string".
Status ErrorAt(const std::string& origin, const toml::node& node, const std::string& key,
               const std::string& what) {
  return InvalidArgument(common::TomlError(origin, &node, key, what));
}

std::string Fill(std::string text, const std::string& dtype) {
  static const std::string kPlaceholder = "{dtype}";
  for (size_t at = text.find(kPlaceholder); at != std::string::npos;
       at = text.find(kPlaceholder, at + dtype.size()))
    text.replace(at, kPlaceholder.size(), dtype);
  return text;
}

namespace {

// A shape as written: "MxNxK", "N" or an integer N (NxNxN).
Status ParseShape(const toml::node& node, const std::string& origin, const std::string& key,
                  v1::Shape* shape) {
  auto positive = [](int64_t v) { return v > 0 && v <= (int64_t(1) << 31); };
  if (auto n = node.value<int64_t>(); n && node.is_integer()) {
    if (!positive(*n)) return ErrorAt(origin, node, key, "a size must be positive");
    shape->set_m(*n);
    shape->set_n(*n);
    shape->set_k(*n);
    return Status::Ok();
  }
  auto text = node.value<std::string>();
  if (!text) return ErrorAt(origin, node, key, "expected a shape \"MxNxK\" or a size N");
  std::vector<int64_t> dims;
  std::string part;
  std::string s = *text + "x";
  for (char c : s) {
    if (c == 'x' || c == 'X') {
      if (part.empty() || part.size() > 10 ||
          part.find_first_not_of("0123456789") != std::string::npos)
        return ErrorAt(origin, node, key, "'" + *text + "' is not a shape \"MxNxK\" or a size N");
      dims.push_back(std::stoll(part));
      part.clear();
    } else {
      part += c;
    }
  }
  if (dims.size() == 1) dims = {dims[0], dims[0], dims[0]};
  if (dims.size() != 3)
    return ErrorAt(origin, node, key, "'" + *text + "' is not a shape \"MxNxK\" or a size N");
  for (int64_t d : dims)
    if (!positive(d)) return ErrorAt(origin, node, key, "'" + *text + "': sizes must be positive");
  shape->set_m(dims[0]);
  shape->set_n(dims[1]);
  shape->set_k(dims[2]);
  return Status::Ok();
}

// An array of non-empty strings; `item` names an element in the message ("variant name").
Status ReadStringList(const toml::node& node, const std::string& origin, const std::string& key,
                      std::vector<std::string>* out, const std::string& item_name = "variant name",
                      bool allow_empty = false) {
  const toml::array* array = node.as_array();
  if (!array) return ErrorAt(origin, node, key, "expected an array of strings");
  if (array->empty() && !allow_empty) return ErrorAt(origin, node, key, "must not be empty");
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::node& item = *array->get(i);
    auto text = item.value<std::string>();
    std::string item_key = key + "[" + std::to_string(i) + "]";
    if (!item.is_string()) return ErrorAt(origin, item, item_key, "expected a string");
    if (text->empty()) return ErrorAt(origin, item, item_key, "empty " + item_name);
    out->push_back(*text);
  }
  return Status::Ok();
}

Status ReadString(const toml::node& node, const std::string& origin, const std::string& key,
                  std::string* out) {
  if (!node.is_string()) return ErrorAt(origin, node, key, "expected a string");
  *out = *node.value<std::string>();
  return Status::Ok();
}

Status ReadBool(const toml::node& node, const std::string& origin, const std::string& key,
                bool* out) {
  if (!node.is_boolean()) return ErrorAt(origin, node, key, "expected true or false");
  *out = *node.value<bool>();
  return Status::Ok();
}

Status ReadShapes(const toml::node& node, const std::string& origin, const std::string& key,
                  std::vector<v1::Shape>* out) {
  const toml::array* array = node.as_array();
  if (!array) return ErrorAt(origin, node, key, "expected an array of shapes");
  if (array->empty()) return ErrorAt(origin, node, key, "must not be empty");
  for (size_t i = 0; i < array->size(); ++i) {
    v1::Shape shape;
    Status st = ParseShape(*array->get(i), origin, key + "[" + std::to_string(i) + "]", &shape);
    if (!st.ok()) return st;
    out->push_back(shape);
  }
  return Status::Ok();
}

Status CheckDType(const toml::node& node, const std::string& origin, const std::string& key,
                  std::string* out) {
  auto text = node.value<std::string>();
  if (!node.is_string()) return ErrorAt(origin, node, key, "expected a string");
  if (!kernels::ParseDType(*text))
    return ErrorAt(origin, node, key,
                   "unknown dtype '" + *text + "'; known: bf16, fp16, fp32, tf32, int8");
  *out = *text;
  return Status::Ok();
}

// One group's keys (variants, dtype, shapes) over the defaults in `group`.
Status ReadGroup(const toml::table& table, const std::string& origin, const std::string& prefix,
                 PresetGroup* group) {
  Status st;
  if (const toml::node* n = table.get("dtype"))
    if (!(st = CheckDType(*n, origin, prefix + "dtype", &group->dtype)).ok()) return st;
  if (const toml::node* n = table.get("shapes")) {
    group->shapes.clear();
    if (!(st = ReadShapes(*n, origin, prefix + "shapes", &group->shapes)).ok()) return st;
  }
  if (const toml::node* n = table.get("variants"))
    if (!(st = ReadStringList(*n, origin, prefix + "variants", &group->variants)).ok()) return st;
  return Status::Ok();
}

const std::set<std::string> kReportKeys = {"title",     "scope",         "notes",
                                           "order",     "report_dtypes", "per_dtype",
                                           "per_shape", "rung",          "counters"};

// `counters`: concepts of the counter table (plan/counters.h), or set names standing for theirs
// ("default": every concept), in order, each once. Checked here so that a misspelt name stops the
// daemon instead of leaving a column silently empty.
Status ReadCounters(const toml::node& node, const std::string& origin, const std::string& key,
                    std::vector<std::string>* out) {
  std::vector<std::string> words;
  Status st = ReadStringList(node, origin, key, &words, "counter name");
  if (!st.ok()) return st;
  auto add = [out](std::string_view name) {
    if (std::find(out->begin(), out->end(), name) == out->end()) out->emplace_back(name);
  };
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    const auto& sets = CounterSets();
    if (std::any_of(sets.begin(), sets.end(), [&](const CounterSet& s) { return s.name == w; })) {
      for (const CounterConcept& c : CounterConcepts())
        if (w == "default" || c.group == w) add(c.name);
      continue;
    }
    const auto& cat = CounterConcepts();
    if (std::any_of(cat.begin(), cat.end(), [&](const CounterConcept& c) { return c.name == w; })) {
      add(w);
      continue;
    }
    std::string known;
    for (const CounterSet& s : sets) known += (known.empty() ? "" : ", ") + std::string(s.name);
    return ErrorAt(origin, *node.as_array()->get(i), key + "[" + std::to_string(i) + "]",
                   "unknown counter '" + w + "': a concept of the counter table " +
                       "(shared_load_instructions, ...; `profile --help`) or a set (" + known +
                       ")");
  }
  return Status::Ok();
}

// One [[name.rung]] table; `previous` is the id of the rung before it ("" for the first).
Status ReadRung(const toml::table& table, const std::string& origin, const std::string& prefix,
                const std::string& previous, PresetRung* rung) {
  Status st = CheckTomlKeys(table, origin, prefix,
                            {"id", "label", "variant", "against", "dtype", "per_tile"});
  if (!st.ok()) return st;
  for (const char* key : {"id", "variant"}) {
    const toml::node* n = table.get(key);
    if (!n) return ErrorAt(origin, table, prefix + key, "missing (required in a rung)");
    std::string* out = std::string(key) == "id" ? &rung->id : &rung->variant;
    if (!(st = ReadString(*n, origin, prefix + key, out)).ok()) return st;
    if (out->empty()) return ErrorAt(origin, *n, prefix + key, "must not be empty");
  }
  if (const toml::node* n = table.get("label"))
    if (!(st = ReadString(*n, origin, prefix + "label", &rung->label)).ok()) return st;
  if (const toml::node* n = table.get("dtype"))
    if (!(st = CheckDType(*n, origin, prefix + "dtype", &rung->dtype)).ok()) return st;
  if (const toml::node* n = table.get("per_tile"))
    if (!(st = ReadBool(*n, origin, prefix + "per_tile", &rung->per_tile)).ok()) return st;
  const toml::node* against = table.get("against");
  if (!against) {
    if (!previous.empty()) rung->against = {previous};
  } else if (against->is_string()) {
    if (!against->value<std::string>()->empty()) rung->against = {*against->value<std::string>()};
  } else if (against->is_array()) {
    st = ReadStringList(*against, origin, prefix + "against", &rung->against, "rung id", true);
    if (!st.ok()) return st;
  } else {
    return ErrorAt(origin, *against, prefix + "against",
                   "expected a rung id, an array of them, or \"\" for no comparison");
  }
  return Status::Ok();
}

// Whether `variant` (for `dtype`) is one of the preset's entries of that dtype, or a glob that
// matches one as written. `checked` is false when the preset has no group of that dtype.
bool InPreset(const Preset& preset, const std::string& variant, const std::string& dtype,
              bool* checked) {
  *checked = false;
  for (const PresetGroup& g : preset.groups) {
    if (g.dtype != dtype) continue;
    *checked = true;
    for (const std::string& entry : g.variants)
      if (entry == variant || GlobMatch(variant, entry)) return true;
  }
  return false;
}

// The rungs in every block: unique ids, known `against` ids, variants of the preset.
Status CheckRungs(const Preset& preset, const std::vector<const toml::table*>& nodes,
                  const std::string& origin) {
  const std::string& name = preset.name;
  std::vector<bool> checked(preset.report.rungs.size(), false);
  for (const std::string& dtype : preset.report.dtypes) {
    const std::vector<PresetRung> rungs = RungsInBlock(preset.report, dtype);
    std::map<std::string, size_t> ids;
    for (size_t i = 0; i < rungs.size(); ++i) {
      const std::string prefix = name + ".rung[" + std::to_string(i) + "].";
      if (!ids.emplace(rungs[i].id, i).second)
        return ErrorAt(origin, *nodes[i], prefix + "id",
                       "duplicate rung id '" + rungs[i].id + "' (also rung[" +
                           std::to_string(ids[rungs[i].id]) + "], in the " + dtype + " block)");
    }
    for (size_t i = 0; i < rungs.size(); ++i) {
      const std::string prefix = name + ".rung[" + std::to_string(i) + "].";
      for (const std::string& a : rungs[i].against) {
        if (ids.count(a) && a != rungs[i].id) continue;
        std::string known;
        for (const PresetRung& r : rungs) known += (known.empty() ? "" : ", ") + r.id;
        return ErrorAt(origin, *nodes[i], prefix + "against",
                       a == rungs[i].id ? "a rung is not compared with itself ('" + a + "')"
                                        : "unknown rung '" + a + "' (the rungs: " + known + ")");
      }
      bool here = false;
      if (!InPreset(preset, rungs[i].variant, rungs[i].dtype, &here) && here)
        return ErrorAt(origin, *nodes[i], prefix + "variant",
                       "'" + rungs[i].variant + "' is not one of the preset's " + rungs[i].dtype +
                           " variants, nor a glob matching one");
      checked[i] = checked[i] || here;
    }
  }
  for (size_t i = 0; i < checked.size(); ++i) {
    if (checked[i]) continue;
    const PresetRung& r = preset.report.rungs[i];
    return ErrorAt(origin, *nodes[i], name + ".rung[" + std::to_string(i) + "].dtype",
                   "the preset has no variants of " +
                       (r.dtype.empty() ? "its report_dtypes" : "dtype " + r.dtype) + " to find '" +
                       r.variant + "' in");
  }
  return Status::Ok();
}

// The report keys of a preset (kReportKeys), after its groups.
Status ReadReport(const toml::table& table, const std::string& origin, Preset* preset) {
  const std::string& name = preset->name;
  PresetReport& report = preset->report;
  const toml::node* rungs = table.get("rung");
  if (!rungs) {
    for (const auto& [k, v] : table)
      if (kReportKeys.count(std::string(k.str())))
        return ErrorAt(origin, v, name + "." + std::string(k.str()),
                       "a report key, but the preset has no [[" + name + ".rung]] tables");
    return Status::Ok();
  }
  Status st;
  report.title = name;
  if (const toml::node* n = table.get("title"))
    if (!(st = ReadString(*n, origin, name + ".title", &report.title)).ok()) return st;
  if (const toml::node* n = table.get("scope"))
    if (!(st = ReadString(*n, origin, name + ".scope", &report.scope)).ok()) return st;
  if (const toml::node* n = table.get("notes"))
    if (!(st = ReadStringList(*n, origin, name + ".notes", &report.notes, "note", true)).ok())
      return st;
  if (const toml::node* n = table.get("order")) {
    if (!n->is_integer()) return ErrorAt(origin, *n, name + ".order", "expected an integer");
    report.order = int(*n->value<int64_t>());
  }
  if (const toml::node* n = table.get("per_dtype"))
    if (!(st = ReadBool(*n, origin, name + ".per_dtype", &report.per_dtype)).ok()) return st;
  if (const toml::node* n = table.get("counters"))
    if (!(st = ReadCounters(*n, origin, name + ".counters", &report.counters)).ok()) return st;
  if (const toml::node* n = table.get("per_shape"))
    if (!(st = ReadBool(*n, origin, name + ".per_shape", &report.per_shape)).ok()) return st;
  if (report.per_dtype && report.per_shape)
    return ErrorAt(origin, *table.get("per_shape"), name + ".per_shape",
                   "a section is per_dtype or per_shape, not both");
  if (const toml::node* n = table.get("report_dtypes")) {
    const std::string key = name + ".report_dtypes";
    const toml::array* array = n->as_array();
    if (!array || array->empty()) return ErrorAt(origin, *n, key, "expected an array of dtypes");
    for (size_t i = 0; i < array->size(); ++i) {
      std::string dtype;
      st = CheckDType(*array->get(i), origin, key + "[" + std::to_string(i) + "]", &dtype);
      if (!st.ok()) return st;
      report.dtypes.push_back(dtype);
    }
  } else {
    for (const PresetGroup& g : preset->groups)
      if (std::find(report.dtypes.begin(), report.dtypes.end(), g.dtype) == report.dtypes.end())
        report.dtypes.push_back(g.dtype);
  }
  const toml::array* array = rungs->as_array();
  if (!array || !array->is_array_of_tables() || array->empty())
    return ErrorAt(origin, *rungs, name + ".rung", "expected [[" + name + ".rung]] tables");
  std::vector<const toml::table*> nodes;
  for (size_t i = 0; i < array->size(); ++i) {
    nodes.push_back(array->get(i)->as_table());
    PresetRung rung;
    const std::string previous = report.rungs.empty() ? "" : report.rungs.back().id;
    st = ReadRung(*nodes.back(), origin, name + ".rung[" + std::to_string(i) + "].", previous,
                  &rung);
    if (!st.ok()) return st;
    if (rung.per_tile && report.per_shape)
      return ErrorAt(origin, *nodes.back(), name + ".rung[" + std::to_string(i) + "].per_tile",
                     "a per_shape section has one row per rung: no per_tile rungs");
    report.rungs.push_back(std::move(rung));
  }
  return CheckRungs(*preset, nodes, origin);
}

}  // namespace

Status ReadPreset(const std::string& name, const toml::node& node, const std::string& origin,
                  Preset* preset) {
  const toml::table* table = node.as_table();
  if (!table) return ErrorAt(origin, node, name, "a preset is a table ([" + name + "])");
  std::set<std::string> known = {"description", "dtype", "shapes", "variants", "group"};
  known.insert(kReportKeys.begin(), kReportKeys.end());
  Status st = CheckTomlKeys(*table, origin, name + ".", known);
  if (!st.ok()) return st;
  preset->name = name;
  preset->source = origin + ":" + std::to_string(node.source().begin.line);
  const toml::node* description = table->get("description");
  if (!description) return ErrorAt(origin, node, name + ".description", "missing (required)");
  if (!description->is_string())
    return ErrorAt(origin, *description, name + ".description", "expected a string");
  preset->description = *description->value<std::string>();

  PresetGroup defaults;  // the preset's own dtype / shapes, inherited by its groups
  defaults.shapes.clear();
  if (!(st = ReadGroup(*table, origin, name + ".", &defaults)).ok()) return st;
  if (defaults.shapes.empty()) {
    v1::Shape s;
    s.set_m(4096);
    s.set_n(4096);
    s.set_k(4096);
    defaults.shapes.push_back(s);
  }
  const toml::node* groups = table->get("group");
  if (groups && !defaults.variants.empty())
    return ErrorAt(origin, *groups, name + ".group",
                   "a preset has either variants or groups, not both");
  if (!groups) {
    if (defaults.variants.empty())
      return ErrorAt(origin, node, name + ".variants", "missing (or give [[" + name + ".group]])");
    preset->groups.push_back(std::move(defaults));
    return ReadReport(*table, origin, preset);
  }
  const toml::array* array = groups->as_array();
  if (!array || !array->is_array_of_tables() || array->empty())
    return ErrorAt(origin, *groups, name + ".group", "expected [[" + name + ".group]] tables");
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::table& g = *array->get(i)->as_table();
    std::string prefix = name + ".group[" + std::to_string(i) + "].";
    if (!(st = CheckTomlKeys(g, origin, prefix, {"dtype", "shapes", "variants"})).ok()) return st;
    PresetGroup group = defaults;
    if (!(st = ReadGroup(g, origin, prefix, &group)).ok()) return st;
    if (group.variants.empty())
      return ErrorAt(origin, g, prefix + "variants", "missing (required in a group)");
    preset->groups.push_back(std::move(group));
  }
  return ReadReport(*table, origin, preset);
}

}  // namespace ablation::core
