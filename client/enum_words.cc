#include "client/enum_words.h"

#include <cctype>

#include "client/format.h"

namespace ablation::client {
namespace {

// "RunState" -> {"run", "state"}; "L2Mode" -> {"l2", "mode"}.
std::vector<std::string> TypeWords(const EnumType* type) {
  std::vector<std::string> words;
  const std::string& name = type->name();
  for (std::size_t i = 0; i < name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    const bool starts = std::isupper(c) && i > 0 &&
                        (std::islower(static_cast<unsigned char>(name[i - 1])) ||
                         std::isdigit(static_cast<unsigned char>(name[i - 1])));
    if (words.empty() || starts) words.emplace_back();
    words.back() += static_cast<char>(std::tolower(c));
  }
  return words;
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

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

std::string EnumWord(const EnumType* type, int value) {
  const google::protobuf::EnumValueDescriptor* v = type->FindValueByNumber(value);
  if (v == nullptr) return std::to_string(value);
  std::string prefix;
  for (const std::string& word : TypeWords(type)) prefix += word + "_";
  std::string name = Lower(v->name());
  if (name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
  return value == 0 && name == "unspecified" ? "" : name;
}

std::vector<std::string> EnumWords(const EnumType* type) {
  std::vector<std::string> words;
  for (int i = 0; i < type->value_count(); ++i) {
    if (type->value(i)->number() != 0) words.push_back(EnumWord(type, type->value(i)->number()));
  }
  return words;
}

std::string ParseEnumWord(std::string_view flag, const EnumType* type, std::string_view text,
                          int* value) {
  const std::string word = Lower(text);
  for (int i = 0; i < type->value_count(); ++i) {
    const int number = type->value(i)->number();
    if (number != 0 && EnumWord(type, number) == word) {
      *value = number;
      return {};
    }
  }
  const std::string what = Join(TypeWords(type), " ");
  const std::string article = what.find_first_of("aeio") == 0 ? "an " : "a ";
  return Prefixed(flag, "'" + std::string(text) + "' is not " + article + what + "; use " +
                            Alternatives(EnumWords(type), ""));
}

CLI::Validator EnumTransformer(const EnumType* type) {
  return CLI::Validator(
      [type](std::string& text) -> std::string {
        int value = 0;
        std::string error = ParseEnumWord("", type, text, &value);
        if (error.empty()) text = std::to_string(value);  // CLI11 reads enums as their number
        return error;
      },
      Join(EnumWords(type), "|"), Join(TypeWords(type), " "));
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

std::string ReferenceWord(v1::Reference reference, const std::string& variant) {
  return reference == v1::REFERENCE_VARIANT ? variant : EnumWord(reference);
}

}  // namespace ablation::client
