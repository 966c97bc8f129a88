#include "server/core/plan/variant_names.h"

#include "common/text.h"
#include "server/core/plan/limits.h"

#include <fnmatch.h>
#include <algorithm>
#include <cctype>
#include <set>

namespace ablation::core {

std::string AblationName::Canonical() const {
  std::string s = "abl_L" + std::to_string(load_mode) + "_R" + std::to_string(read_mode) + "_bl" +
                  std::to_string(b_layout) + "_s" + std::to_string(stages) + "_sw" +
                  std::to_string(swizzle);
  if (rb) s += "_rb1";
  return s;
}

namespace {

using common::Lower;

std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    parts.emplace_back(s.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return parts;
}

// "l1" -> ("l", 1); returns false if the token is not letters followed by one or more digits.
bool SplitField(const std::string& token, std::string* key, int* value) {
  size_t i = 0;
  while (i < token.size() && std::isalpha(static_cast<unsigned char>(token[i]))) ++i;
  if (i == 0 || i == token.size()) return false;
  for (size_t j = i; j < token.size(); ++j)
    if (!std::isdigit(static_cast<unsigned char>(token[j]))) return false;
  if (token.size() - i > 3) return false;
  *key = token.substr(0, i);
  *value = std::stoi(token.substr(i));
  return true;
}

}  // namespace

std::optional<AblationName> ParseAblationName(std::string_view text) {
  std::string s = Lower(text);
  if (s.rfind("abl_", 0) == 0) s = s.substr(4);
  if (s.empty()) return std::nullopt;
  AblationName name;
  std::set<std::string> seen;
  for (const std::string& token : Split(s, '_')) {
    std::string key;
    int value = 0;
    if (!SplitField(token, &key, &value)) return std::nullopt;
    if (!seen.insert(key).second) return std::nullopt;  // a field given twice
    if (key == "l") {
      name.load_mode = value;
    } else if (key == "r") {
      name.read_mode = value;
    } else if (key == "bl") {
      name.b_layout = value;
    } else if (key == "s") {
      name.stages = value;
    } else if (key == "sw") {
      name.swizzle = value;
    } else if (key == "rb") {
      name.rb = value;
    } else {
      return std::nullopt;
    }
  }
  if (!seen.count("l") || !seen.count("r") || !seen.count("s")) return std::nullopt;
  return name;
}

bool IsGlob(std::string_view pattern) {
  return pattern.find_first_of("*?[") != std::string_view::npos;
}

bool GlobMatch(std::string_view pattern, std::string_view name) {
  std::string p(pattern), n(name);
  return ::fnmatch(p.c_str(), n.c_str(), 0) == 0;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<std::string> ClosestNames(const kernels::Registry& registry, std::string_view name,
                                      size_t count) {
  // Compare against the canonical spelling of a short form when there is one, so that a short
  // name with one wrong field ranks its neighbours first.
  std::string probe = Lower(name);
  if (auto parsed = ParseAblationName(name)) probe = Lower(parsed->Canonical());
  std::vector<std::pair<size_t, std::string>> scored;
  for (const auto& v : registry.All())
    scored.emplace_back(EditDistance(probe, Lower(v.name)), v.name);
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && i < count; ++i) out.push_back(scored[i].second);
  return out;
}

Status Resolve(const kernels::Registry& registry, std::string_view selector, std::string_view field,
               std::vector<const kernels::Variant*>* out) {
  std::string where(field);
  if (selector.empty()) return InvalidArgument(where + ": empty variant name");
  // Before any matching: fnmatch and the edit distance below cost time in the name's length.
  if (selector.size() > kMaxSelectorLength)
    return InvalidArgument(where + ": " + std::to_string(selector.size()) +
                           " characters; a variant name or pattern has at most " +
                           std::to_string(kMaxSelectorLength) + " (" + QuoteInput(selector) + ")");
  if (IsGlob(selector)) {
    size_t before = out->size();
    for (const auto& v : registry.All())
      if (GlobMatch(selector, v.name)) out->push_back(&v);
    if (out->size() == before)
      return InvalidArgument(where + ": the pattern " + QuoteInput(selector) +
                             " matches no variant");
    return Status::Ok();
  }
  if (const auto* v = registry.Find(selector)) {
    out->push_back(v);
    return Status::Ok();
  }
  if (auto parsed = ParseAblationName(selector)) {
    if (const auto* v = registry.Find(parsed->Canonical())) {
      out->push_back(v);
      return Status::Ok();
    }
  }
  std::string msg = where + ": unknown variant " + QuoteInput(selector);
  auto closest = ClosestNames(registry, selector);
  if (!closest.empty()) {
    msg += "; closest known: ";
    for (size_t i = 0; i < closest.size(); ++i) msg += (i ? ", " : "") + closest[i];
  }
  return InvalidArgument(msg);
}

}  // namespace ablation::core
