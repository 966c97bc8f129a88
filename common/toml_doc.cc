#include "common/toml_doc.h"

namespace ablation::common {

std::string TomlWhere(const std::string& origin, const toml::node* node) {
  if (node && node->source().begin.line > 0)
    return origin + ":" + std::to_string(node->source().begin.line);
  return origin;
}

std::string TomlError(const std::string& origin, const toml::node* node, const std::string& key,
                      const std::string& what) {
  return TomlWhere(origin, node) + ": " + key + ": " + what;
}

std::string ParseToml(std::string_view text, const std::string& origin,
                      const TomlShapeLimits& limits, toml::table* out) {
  if (std::string why = CheckTomlShape(text, origin, limits); !why.empty()) return why;
  try {
    *out = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    return origin + ":" + std::to_string(e.source().begin.line) + ":" +
           std::to_string(e.source().begin.column) + ": " + std::string(e.description());
  }
  return "";
}

std::string UnknownKey(const toml::table& table, const std::string& origin,
                       const std::string& prefix, const std::set<std::string>& known) {
  for (const auto& [key, node] : table) {
    const std::string k(key.str());
    if (known.count(k)) continue;
    std::string list;
    for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
    return TomlError(origin, &node, prefix + k, "unknown key (known: " + list + ")");
  }
  return "";
}

}  // namespace ablation::common
