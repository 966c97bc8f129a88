// Small text helpers every part uses alike.
#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace ablation::common {

/// `text` in lower case (ASCII).
inline std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// `text` without the white space (std::isspace: blanks, tabs, line ends) at either end.
inline std::string_view TrimSpace(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

}  // namespace ablation::common
