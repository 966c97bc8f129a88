#include "common/toml_shape.h"

#include <vector>

namespace ablation::common {
namespace {

// The scan's view of a TOML text: where a key may start (a line's start outside brackets, a table
// header, after '{' or ',' in an inline table) dots count key parts; elsewhere only strings,
// comments and brackets matter. Malformed text is scanned all the same; the parser refuses it.
class ShapeScan {
 public:
  ShapeScan(std::string_view text, const TomlShapeLimits& limits) : t_(text), limits_(limits) {}

  /// The deepest path's depth and its line; stops early once past the limit.
  void Run() {
    while (i_ < t_.size() && deepest_ <= limits_.max_depth) {
      const char c = t_[i_];
      if (c == '\n') {
        ++line_;
        ++i_;
        if (open_.empty()) expect_key_ = true, header_ = false;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++i_;
      } else if (c == '#') {
        while (i_ < t_.size() && t_[i_] != '\n') ++i_;
      } else if (expect_key_) {
        Key();
      } else {
        Value();
      }
    }
  }
  int deepest() const { return deepest_; }
  int line() const { return deepest_line_; }

 private:
  void Note(int depth) {
    if (depth > deepest_) deepest_ = depth, deepest_line_ = line_;
  }
  int Open() const {
    int depth = table_depth_;
    for (int d : open_) depth += d;
    return depth;
  }

  // A key, or a table header's: its parts counted until '=' (or ']' for a header).
  void Key() {
    if (open_.empty() && t_[i_] == '[') {  // a table header, [a.b] or [[a.b]]
      i_ += (i_ + 1 < t_.size() && t_[i_ + 1] == '[') ? 2 : 1;
      header_ = true;
    }
    int parts = 1;
    while (i_ < t_.size()) {
      const char c = t_[i_];
      if (c == '"' || c == '\'') {
        String();
      } else if (c == '.') {
        ++parts, ++i_;
        Note(header_ ? parts : Open() + parts);
      } else if (c == '=' || c == ']' || c == '\n' || c == '}' || c == '#') {
        break;
      } else {
        ++i_;
      }
    }
    if (header_) {
      table_depth_ = parts;
      Note(parts);
      while (i_ < t_.size() && t_[i_] == ']') ++i_;
      header_ = false;
      expect_key_ = false;  // nothing but a comment may follow on the header's line
      return;
    }
    Note(Open() + parts);
    key_parts_ = parts;
    if (i_ < t_.size() && t_[i_] == '=') ++i_;
    expect_key_ = false;
  }

  void Value() {
    const char c = t_[i_];
    if (c == '"' || c == '\'') {
      String();
    } else if (c == '[' || c == '{') {
      // A level for the bracket, and the key parts of the key whose value it is.
      open_.push_back(1 + key_parts_);
      brackets_.push_back(c);
      key_parts_ = 0;
      Note(Open());
      ++i_;
      if (c == '{') expect_key_ = true;
    } else if (c == ']' || c == '}') {
      if (!open_.empty()) open_.pop_back(), brackets_.pop_back();
      ++i_;
    } else if (c == ',') {
      ++i_;
      if (!brackets_.empty() && brackets_.back() == '{') expect_key_ = true;
    } else {
      ++i_;
    }
  }

  // A basic or literal string, single or multi-line, escapes honoured in basic ones.
  void String() {
    const char quote = t_[i_];
    const bool multi = t_.substr(i_, 3) == std::string(3, quote);
    i_ += multi ? 3 : 1;
    while (i_ < t_.size()) {
      const char c = t_[i_];
      if (c == '\\' && quote == '"') {
        i_ += 2;
        continue;
      }
      if (c == '\n') {
        ++line_;
        if (!multi) return;  // unterminated: the parser says so
      }
      if (c == quote && (!multi || t_.substr(i_, 3) == std::string(3, quote))) {
        i_ += multi ? 3 : 1;
        return;
      }
      ++i_;
    }
  }

  std::string_view t_;
  const TomlShapeLimits& limits_;
  size_t i_ = 0;
  int line_ = 1;
  bool expect_key_ = true;
  bool header_ = false;
  int table_depth_ = 0;    ///< the parts of the last table header
  int key_parts_ = 0;      ///< the parts of the key whose value is being read
  std::vector<int> open_;  ///< per open bracket: the levels it adds
  std::vector<char> brackets_;
  int deepest_ = 0;
  int deepest_line_ = 1;
};

}  // namespace

std::string CheckTomlShape(std::string_view text, const std::string& origin,
                           const TomlShapeLimits& limits) {
  if (text.size() > limits.max_bytes)
    return origin + ": " + std::to_string(text.size()) + " bytes, more than " +
           std::to_string(limits.max_bytes);
  ShapeScan scan(text, limits);
  scan.Run();
  if (scan.deepest() > limits.max_depth)
    return origin + ":" + std::to_string(scan.line()) + ": a key nested more than " +
           std::to_string(limits.max_depth) + " deep (tables within tables, dotted keys, arrays " +
           "and inline tables together); not read";
  return "";
}

}  // namespace ablation::common
