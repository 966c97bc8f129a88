// The arithmetic a user kernel's manifest writes its launch geometry and shape conditions in:
// expressions of M, N, K and the kernel's knobs ("ceil(M / BM) * ceil(N / BN)", "K % BK == 0"),
// parsed by muparser (Debian's libmuparser-dev) rather than an evaluator of our own, with the
// functions a GEMM's geometry needs added: ceil, floor, and % as the integer remainder.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace ablation::kernels::user {

class Expression {
 public:
  /// Parses `text` over the variables `names` (M, N, K and the knobs). "" on success, else why
  /// not in muparser's words with the position ("unexpected token \"*\" at position 4"); a name
  /// the text uses that is not among `names` is an error too.
  static std::string Parse(const std::string& text, const std::vector<std::string>& names,
                           std::unique_ptr<Expression>* out);
  ~Expression();

  const std::string& text() const { return text_; }

  /// Whether the text uses the variable `name` (one of those given to Parse).
  bool Uses(const std::string& name) const { return used_.count(name) > 0; }

  /// The value with `values` bound (every name given to Parse must have one). "" on success, else
  /// why not: a division by zero or a value that is not finite.
  std::string Evaluate(const std::map<std::string, double>& values, double* out) const;

  /// Evaluate, then the value must be a whole number within [lo, hi]: "" or why not, naming the
  /// value ("ceil(M / BM) = 2.5 is not a whole number").
  std::string EvaluateInteger(const std::map<std::string, double>& values, int64_t lo, int64_t hi,
                              int64_t* out) const;

 private:
  Expression() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string text_;
  std::set<std::string> used_;
};

}  // namespace ablation::kernels::user
