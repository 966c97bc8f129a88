#include "common/enum_words.h"

#include "common/text.h"

namespace ablation::common {
namespace {

// "a, b or c".
std::string Alternatives(const std::vector<std::string>& words) {
  std::string text;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) text += i + 1 == words.size() ? " or " : ", ";
    text += words[i];
  }
  return text;
}

}  // namespace

std::vector<std::string> EnumTypeWords(const EnumType* type) {
  // A word starts at an upper-case letter after a lower-case letter or a digit, or at the last
  // capital of an acronym that a lower-case letter follows ("HTTPCode": "HTTP", "Code").
  std::vector<std::string> words;
  const std::string& name = type->name();
  for (size_t i = 0; i < name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    bool starts = words.empty();
    if (i > 0 && std::isupper(c)) {
      const unsigned char before = static_cast<unsigned char>(name[i - 1]);
      const bool after_lower = std::islower(before) || std::isdigit(before);
      const bool acronym_end = std::isupper(before) && i + 1 < name.size() &&
                               std::islower(static_cast<unsigned char>(name[i + 1]));
      starts = starts || after_lower || acronym_end;
    }
    if (starts) words.emplace_back();
    words.back() += static_cast<char>(std::tolower(c));
  }
  return words;
}

std::string EnumValueWord(const google::protobuf::EnumValueDescriptor* value) {
  std::string prefix;
  for (const std::string& word : EnumTypeWords(value->type())) prefix += word + "_";
  std::string name = Lower(value->name());
  if (name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
  return name == "unspecified" ? "" : name;
}

std::string EnumWord(const EnumType* type, int number) {
  const google::protobuf::EnumValueDescriptor* v = type->FindValueByNumber(number);
  return v == nullptr ? std::to_string(number) : EnumValueWord(v);
}

std::vector<std::string> EnumWords(const EnumType* type) {
  std::vector<std::string> words;
  for (int i = 0; i < type->value_count(); ++i) {
    if (type->value(i)->number() != 0) words.push_back(EnumValueWord(type->value(i)));
  }
  return words;
}

std::string ParseEnumWord(std::string_view flag, const EnumType* type, std::string_view text,
                          int* number) {
  const std::string word = Lower(text);
  for (int i = 0; i < type->value_count(); ++i) {
    const int n = type->value(i)->number();
    if (n != 0 && EnumValueWord(type->value(i)) == word) {
      *number = n;
      return {};
    }
  }
  std::string what;
  for (const std::string& w : EnumTypeWords(type)) what += (what.empty() ? "" : " ") + w;
  const std::string article = what.find_first_of("aeio") == 0 ? "an " : "a ";
  const std::string message = "'" + std::string(text) + "' is not " + article + what + "; use " +
                              Alternatives(EnumWords(type));
  return flag.empty() ? message : std::string(flag) + ": " + message;
}

std::string ReferenceWord(v1::Reference reference, const std::string& variant) {
  if (reference == v1::REFERENCE_VARIANT) return variant;
  const std::string word = EnumWord(reference);
  return word.empty() ? "unspecified" : word;
}

}  // namespace ablation::common
