#include "common/variant_names.h"

#include <algorithm>
#include <cctype>

#include "common/text.h"

namespace ablation::common {
namespace {

// "l1" -> ("l", 1): letters, then one to three digits; false for anything else.
bool SplitField(std::string_view token, std::string* key, int* value) {
  size_t i = 0;
  while (i < token.size() && std::isalpha(static_cast<unsigned char>(token[i]))) ++i;
  const size_t digits = token.size() - i;
  if (i == 0 || digits == 0 || digits > 3) return false;
  *value = 0;
  for (size_t j = i; j < token.size(); ++j) {
    if (!std::isdigit(static_cast<unsigned char>(token[j]))) return false;
    *value = *value * 10 + (token[j] - '0');
  }
  *key = std::string(token.substr(0, i));
  return true;
}

}  // namespace

std::optional<std::string> CanonicalAblationName(std::string_view text) {
  std::string s = Lower(text);
  if (s.rfind("abl_", 0) == 0) s.erase(0, 4);
  if (s.empty()) return std::nullopt;
  // l, r, bl, s, sw, rb; -1 where not given.
  static constexpr const char* kFields[] = {"l", "r", "bl", "s", "sw", "rb"};
  int values[6] = {-1, -1, -1, -1, -1, -1};
  size_t start = 0;
  while (start <= s.size()) {
    const size_t end = std::min(s.find('_', start), s.size());
    std::string key;
    int value = 0;
    if (!SplitField(std::string_view(s).substr(start, end - start), &key, &value)) {
      return std::nullopt;
    }
    const auto* field = std::find(std::begin(kFields), std::end(kFields), key);
    if (field == std::end(kFields)) return std::nullopt;
    int& slot = values[field - std::begin(kFields)];
    if (slot != -1) return std::nullopt;  // a field given twice
    slot = value;
    start = end + 1;
  }
  if (values[0] < 0 || values[1] < 0 || values[3] < 0) return std::nullopt;  // L, R and s
  const int b_layout = values[2] < 0 ? 0 : values[2];
  const int swizzle = values[4] < 0 ? 1 : values[4];
  const int rb = values[5] < 0 ? 0 : values[5];
  std::string name = "abl_L" + std::to_string(values[0]) + "_R" + std::to_string(values[1]) +
                     "_bl" + std::to_string(b_layout) + "_s" + std::to_string(values[3]) + "_sw" +
                     std::to_string(swizzle);
  if (rb != 0) name += "_rb1";
  return name;
}

bool IsGlob(std::string_view selector) {
  return selector.find_first_of("*?[") != std::string_view::npos;
}

std::string CanonicalVariantSelector(std::string_view selector) {
  if (IsGlob(selector)) return std::string(selector);
  return CanonicalAblationName(selector).value_or(std::string(selector));
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitute = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, substitute});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<std::string> ClosestNames(const std::vector<std::string>& known, std::string_view name,
                                      size_t count) {
  // The canonical spelling of a short name, so that one wrong field ranks its neighbours first.
  const std::string probe = Lower(CanonicalAblationName(name).value_or(std::string(name)));
  std::vector<std::pair<size_t, std::string>> scored;
  for (const std::string& k : known) scored.emplace_back(EditDistance(probe, Lower(k)), k);
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && i < count; ++i) out.push_back(scored[i].second);
  return out;
}

std::string WithoutVersion(const std::string& name, std::string* tag) {
  const size_t at = name.find('@');
  if (at == std::string::npos) {
    if (tag != nullptr) tag->clear();
    return name;
  }
  // A tag is digits or "latest": it ends at the knobs' first '.' or '_'.
  size_t end = name.find_first_of("._", at + 1);
  if (end == std::string::npos) end = name.size();
  if (tag != nullptr) *tag = name.substr(at + 1, end - at - 1);
  return name.substr(0, at) + name.substr(end);
}

}  // namespace ablation::common
