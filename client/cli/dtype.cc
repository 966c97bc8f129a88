#include "client/cli/dtype.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "client/cli/calls.h"
#include "client/output/format.h"
#include "common/text.h"

namespace ablation::client {
namespace {

using common::Lower;

struct DTypeWord {
  std::string_view word;   // as typed or as a field of a variant name
  std::string_view canon;  // the daemon's word
};

// The daemon's words first, in the order of RunRequest.dtype's comment, then the short forms of
// variant names (kernels/pipe/pipe_config.h: DTypeTag).
constexpr DTypeWord kWords[] = {
    {"bf16", "bf16"}, {"fp16", "fp16"}, {"fp32", "fp32"}, {"tf32", "tf32"}, {"int8", "int8"},
    {"fp8", "fp8"},   {"f16", "fp16"},  {"f32", "fp32"},  {"i8", "int8"},   {"e4m3", "fp8"}};

bool HasWildcard(std::string_view field) {
  return field.find_first_of("*?[]") != std::string_view::npos;
}

}  // namespace

std::string CanonicalDType(std::string_view text) {
  const std::string word = Lower(text);
  for (const DTypeWord& w : kWords)
    if (word == w.word) return std::string(w.canon);
  return {};
}

std::string DTypeWordsHelp() {
  return "bf16, fp16 (f16), fp32 (f32), tf32, int8 (i8) or fp8 (e4m3)";
}

CLI::Validator DTypeTransformer() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const std::string canon = CanonicalDType(text);
        if (canon.empty()) return "'" + text + "' is not a dtype; use " + DTypeWordsHelp();
        text = canon;
        return {};
      },
      "bf16|fp16|fp32|tf32|int8|fp8", "dtype");
}

std::string DTypeNamedBy(std::string_view selector) {
  std::string named;
  std::size_t start = 0;
  while (start <= selector.size()) {
    std::size_t end = selector.find('_', start);
    if (end == std::string_view::npos) end = selector.size();
    const std::string_view field = selector.substr(start, end - start);
    start = end + 1;
    if (field.empty() || HasWildcard(field)) continue;
    // Fields are matched as typed: variant names are lower case, and "F16" is no field of one.
    for (const DTypeWord& w : kWords) {
      if (field != w.word) continue;
      if (!named.empty() && named != w.canon) return {};  // two dtypes: says nothing clear
      named = std::string(w.canon);
    }
  }
  return named;
}

DTypeChoice ChooseDType(std::string_view given, const std::vector<std::string>& selectors) {
  DTypeChoice choice;
  const std::string explicit_dtype = given.empty() ? std::string() : CanonicalDType(given);
  std::vector<std::pair<std::string, std::string>> named;  // selector, its dtype
  for (const std::string& s : selectors) {
    std::string d = DTypeNamedBy(s);
    if (!d.empty()) named.emplace_back(s, std::move(d));
  }
  if (!given.empty()) {
    choice.dtype = explicit_dtype.empty() ? std::string(given) : explicit_dtype;
    for (const auto& [selector, d] : named) {
      if (d == choice.dtype) continue;
      choice.error = "--dtype " + choice.dtype + " contradicts the variant " + selector +
                     ", whose name says " + d + "; leave --dtype out to measure " + d +
                     ", or choose a variant of " + choice.dtype;
      return choice;
    }
    return choice;
  }
  std::vector<std::string> seen;
  for (const auto& [selector, d] : named) {
    if (std::find(seen.begin(), seen.end(), d) == seen.end()) seen.push_back(d);
  }
  if (seen.size() > 1) {
    std::vector<std::string> listed;
    for (const auto& [selector, d] : named) listed.push_back(selector + " (" + d + ")");
    choice.error = "the variants name different dtypes: " + Join(listed, ", ") +
                   "; a run measures one dtype: run them separately, or as a preset, whose "
                   "groups may differ in dtype (see `presets`)";
    return choice;
  }
  if (!named.empty()) {
    choice.dtype = named.front().second;
    choice.from = "the name " + named.front().first;
  }
  return choice;
}

DTypeChoice ResolveDType(std::string_view given, const std::vector<std::string>& selectors,
                         const CommandContext& context) {
  DTypeChoice choice = ChooseDType(given, selectors);
  if (!choice.error.empty() || !choice.dtype.empty() || selectors.empty()) return choice;
  // Which dtypes each selector's variants have (a glob: any of its variants; the daemon keeps
  // those of the run's dtype), and which of them every selector has.
  std::vector<std::set<std::string>> per_selector;
  std::size_t variants_seen = 0;
  for (const std::string& s : selectors) {
    v1::ListVariantsRequest request;
    request.set_glob(s);
    v1::ListVariantsResponse response;
    grpc::ClientContext call;
    SetDeadline(call, context.global, kDefaultQueryTimeoutS);
    if (!context.stub.ListVariants(&call, request, &response).ok()) return choice;
    if (response.variants().empty()) return choice;  // the daemon names the unknown one
    std::set<std::string> dtypes;
    for (const v1::Variant& v : response.variants())
      dtypes.insert(v.dtypes().begin(), v.dtypes().end());
    variants_seen += static_cast<std::size_t>(response.variants_size());
    per_selector.push_back(std::move(dtypes));
  }
  std::set<std::string> common = per_selector.front();
  for (const auto& dtypes : per_selector) {
    std::set<std::string> both;
    std::set_intersection(common.begin(), common.end(), dtypes.begin(), dtypes.end(),
                          std::inserter(both, both.begin()));
    common = std::move(both);
  }
  if (common.count("bf16") > 0) return choice;  // the daemon's default suits them all
  if (common.empty()) {
    std::vector<std::string> listed;
    for (std::size_t i = 0; i < selectors.size(); ++i) {
      listed.push_back(selectors[i] + ": " +
                       Join({per_selector[i].begin(), per_selector[i].end()}, ", "));
    }
    choice.error = "the variants have no dtype in common (" + Join(listed, "; ") +
                   "); a run measures one dtype: run them separately";
    return choice;
  }
  if (common.size() > 1) return choice;  // no one answer: the daemon's default and its message
  choice.dtype = *common.begin();
  choice.from = Join(selectors, ", ") +
                (variants_seen == 1 ? ", which has only " : ", whose variants have only ") +
                choice.dtype;
  return choice;
}

std::string InferredDTypeNote(const DTypeChoice& choice) {
  if (choice.from.empty()) return {};
  return "note: dtype " + choice.dtype + " was inferred from " + choice.from +
         "; --dtype overrides it";
}

}  // namespace ablation::client
