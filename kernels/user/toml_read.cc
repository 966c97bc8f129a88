#include "kernels/user/toml_read.h"

#include <cctype>

#include "common/toml_doc.h"

namespace ablation::kernels::user::internal {

std::string Err(const std::string& origin, const toml::node* node, const std::string& key,
                const std::string& what) {
  return common::TomlError(origin, node, key, what);
}

std::string CheckKeys(const toml::table& t, const std::string& origin, const std::string& prefix,
                      const std::set<std::string>& known) {
  return common::UnknownKey(t, origin, prefix, known);
}

std::string ReadString(const toml::table& t, const std::string& origin, const std::string& prefix,
                       const std::string& key, bool required, std::string* out) {
  const toml::node* n = t.get(key);
  if (!n) return required ? Err(origin, &t, prefix + key, "missing") : "";
  const auto* s = n->as_string();
  if (!s) return Err(origin, n, prefix + key, "expected a string");
  *out = s->get();
  return "";
}

bool IsIdentifier(const std::string& s, bool upper) {
  if (s.empty() || s.size() > 32) return false;
  const unsigned char first = static_cast<unsigned char>(s[0]);
  if (upper ? !(std::isupper(first) || first == '_') : !std::islower(first)) return false;
  for (unsigned char c : s) {
    const bool ok = upper ? (std::isupper(c) || std::isdigit(c) || c == '_')
                          : (std::islower(c) || std::isdigit(c) || c == '_');
    if (!ok) return false;
  }
  return true;
}

std::string ReadExpression(const toml::table& t, const std::string& origin,
                           const std::string& prefix, const std::string& key, bool required,
                           const std::vector<std::string>& names, const ManifestLimits& limits,
                           std::unique_ptr<Expression>* out) {
  std::string text;
  if (std::string err = ReadString(t, origin, prefix, key, required, &text); !err.empty())
    return err;
  const toml::node* n = t.get(key);
  if (!n) return "";
  if (text.size() > limits.max_expression_chars)
    return Err(origin, n, prefix + key,
               "longer than " + std::to_string(limits.max_expression_chars) + " characters");
  if (std::string why = Expression::Parse(text, names, out); !why.empty())
    return Err(origin, n, prefix + key, "'" + text + "': " + why);
  return "";
}

}  // namespace ablation::kernels::user::internal
