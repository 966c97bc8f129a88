#include "client/output/enum_words.h"

#include <cctype>

#include "client/output/format.h"
#include "common/text.h"

namespace ablation::client {
namespace {

using common::Lower;

// "a, b or c".
std::string Alternatives(const std::vector<std::string>& words, const std::string& last) {
  std::string text;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0) text += i + 1 == words.size() && last.empty() ? " or " : ", ";
    text += words[i];
  }
  return last.empty() ? text : text + " or " + last;
}

std::string Prefixed(std::string_view flag, const std::string& message) {
  return flag.empty() ? message : std::string(flag) + ": " + message;
}

}  // namespace

CLI::Validator EnumTransformer(const EnumType* type) {
  return CLI::Validator(
      [type](std::string& text) -> std::string {
        int value = 0;
        std::string error = ParseEnumWord("", type, text, &value);
        if (error.empty()) text = std::to_string(value);  // CLI11 reads enums as their number
        return error;
      },
      Join(EnumWords(type), "|"), Join(common::EnumTypeWords(type), " "));
}

std::string ParseReference(std::string_view flag, std::string_view text, v1::Reference* reference,
                           std::string* variant) {
  variant->clear();
  *reference = v1::REFERENCE_UNSPECIFIED;
  if (text.empty()) return {};
  int value = 0;
  const EnumType* type = v1::Reference_descriptor();
  if (ParseEnumWord("", type, text, &value).empty() && value != v1::REFERENCE_VARIANT) {
    *reference = static_cast<v1::Reference>(value);
    return {};
  }
  if (Lower(text) == EnumWord(v1::REFERENCE_VARIANT)) {
    std::vector<std::string> words;
    for (const std::string& w : EnumWords(type))
      if (w != EnumWord(v1::REFERENCE_VARIANT)) words.push_back(w);
    return Prefixed(flag, "name the variant itself; use " + Alternatives(words, "a variant name"));
  }
  *reference = v1::REFERENCE_VARIANT;
  *variant = std::string(text);
  return {};
}

}  // namespace ablation::client
