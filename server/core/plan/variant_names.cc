#include "server/core/plan/variant_names.h"

#include "common/text.h"
#include "common/variant_names.h"
#include "server/core/plan/limits.h"

#include <fnmatch.h>
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>

namespace ablation::core {

std::string AblationName::Canonical() const {
  std::string s = "abl_L" + std::to_string(load_mode) + "_R" + std::to_string(read_mode) + "_bl" +
                  std::to_string(b_layout) + "_s" + std::to_string(stages) + "_sw" +
                  std::to_string(swizzle);
  if (rb) s += "_rb1";
  return s;
}

using common::Lower;

// The short names' parser is common/variant_names.h's (the fleet reads parse with it too): its
// canonical name, read back into fields.
std::optional<AblationName> ParseAblationName(std::string_view text) {
  const std::optional<std::string> canonical = common::CanonicalAblationName(text);
  if (!canonical) return std::nullopt;
  AblationName name;
  int consumed = 0;
  if (std::sscanf(canonical->c_str(), "abl_L%d_R%d_bl%d_s%d_sw%d%n", &name.load_mode,
                  &name.read_mode, &name.b_layout, &name.stages, &name.swizzle, &consumed) != 5) {
    return std::nullopt;
  }
  name.rb = canonical->compare(size_t(consumed), std::string::npos, "_rb1") == 0 ? 1 : 0;
  return name;
}

bool IsGlob(std::string_view pattern) { return common::IsGlob(pattern); }

bool GlobMatch(std::string_view pattern, std::string_view name) {
  std::string p(pattern), n(name);
  return ::fnmatch(p.c_str(), n.c_str(), 0) == 0;
}

size_t EditDistance(std::string_view a, std::string_view b) { return common::EditDistance(a, b); }

std::vector<std::string> ClosestNames(const kernels::Registry& registry, std::string_view name,
                                      size_t count) {
  std::vector<std::string> known;
  for (const auto& v : registry.All()) known.push_back(v.name);
  return common::ClosestNames(known, name, count);
}

namespace {

// A user variant's version tag where the registry holds it under the plain name: "@latest", or
// the newest version's number (older versions are held under their own names, found before).
// NotFound where the selector names no version of a user kernel the registry holds.
Status ResolveVersion(const kernels::Registry& registry, std::string_view selector,
                      const std::string& where, std::vector<const kernels::Variant*>* out) {
  std::string tag;
  const std::string plain = common::WithoutVersion(std::string(selector), &tag);
  if (tag.empty()) return NotFound("");
  const kernels::Variant* v = registry.Find(plain);
  for (const auto& x : registry.All())
    if (v == nullptr && !x.short_name.empty() && x.short_name == plain) v = &x;
  if (v == nullptr || v->family.rfind("user.", 0) != 0) return NotFound("");
  if (tag == "latest" || v->Param("version") == tag) {
    out->push_back(v);
    return Status::Ok();
  }
  std::set<int64_t> held;
  for (const auto& x : registry.All())
    if (x.family == v->family)
      if (auto n = x.NumberParam("version")) held.insert(*n);
  std::string versions;
  for (int64_t n : held) versions += (versions.empty() ? "" : ", ") + std::to_string(n);
  return InvalidArgument(where + ": " + QuoteInput(selector) + " names version '" + tag +
                         "' of user kernel " + v->family.substr(5) +
                         ", which is not held (its versions: " + versions + "; or @latest)");
}

}  // namespace

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
  // A user variant's short name (tiled_s3_sw1), as the manifest's knobs make it.
  for (const auto& v : registry.All())
    if (!v.short_name.empty() && v.short_name == selector) {
      out->push_back(&v);
      return Status::Ok();
    }
  if (auto parsed = ParseAblationName(selector)) {
    if (const auto* v = registry.Find(parsed->Canonical())) {
      out->push_back(v);
      return Status::Ok();
    }
  }
  if (Status st = ResolveVersion(registry, selector, where, out); st.code() != Code::kNotFound)
    return st;
  std::string msg = where + ": unknown variant " + QuoteInput(selector);
  auto closest = ClosestNames(registry, selector);
  if (!closest.empty()) {
    msg += "; closest known: ";
    for (size_t i = 0; i < closest.size(); ++i) msg += (i ? ", " : "") + closest[i];
  }
  return InvalidArgument(msg);
}

}  // namespace ablation::core
