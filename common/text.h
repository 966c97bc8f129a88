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

}  // namespace ablation::common
