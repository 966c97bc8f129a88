#include "kernels/user/expression.h"

#include <mutex>

#include <muParser.h>

#include <cmath>
#include <set>

namespace ablation::kernels::user {
namespace {

double Ceil(double x) { return std::ceil(x); }
double Floor(double x) { return std::floor(x); }
// The integer remainder that a geometry means by "K % BK": fmod of the operands as written
// (muparser has no % of its own). A zero divisor gives NaN, which Evaluate refuses.
double Remainder(double a, double b) { return b == 0 ? std::nan("") : std::fmod(a, b); }

std::string Number(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", x);
  return buf;
}

}  // namespace

struct Expression::Impl {
  mu::Parser parser;
  std::vector<std::string> names;
  // muparser binds variables by address: one slot per name, filled before each evaluation. The
  // daemon plans runs on several threads at once, so an evaluation holds the slots.
  mutable std::vector<double> slots;
  mutable std::mutex mu;
};

Expression::~Expression() = default;

std::string Expression::Parse(const std::string& text, const std::vector<std::string>& names,
                              std::unique_ptr<Expression>* out) {
  if (text.find_first_not_of(" \t") == std::string::npos) return "an empty expression";
  std::unique_ptr<Expression> e(new Expression());
  e->text_ = text;
  e->impl_ = std::make_unique<Impl>();
  Impl& impl = *e->impl_;
  impl.names = names;
  impl.slots.assign(names.size(), 0.0);
  try {
    mu::Parser& p = impl.parser;
    p.DefineFun("ceil", Ceil);
    p.DefineFun("floor", Floor);
    p.DefineOprt("%", Remainder, mu::prMUL_DIV, mu::oaLEFT);
    for (size_t i = 0; i < names.size(); ++i) p.DefineVar(names[i], &impl.slots[i]);
    p.SetExpr(text);
    // Parsing happens on first use: ask for the variables now, so that a syntax error or an
    // unknown name is reported when the manifest is read, not when a shape is measured.
    const std::set<std::string> known(names.begin(), names.end());
    for (const auto& [name, unused] : p.GetUsedVar()) {
      if (!known.count(name)) return "'" + name + "' is not M, N, K or a knob";
      e->used_.insert(name);
    }
    p.Eval();
  } catch (const mu::Parser::exception_type& error) {
    return error.GetMsg();
  }
  *out = std::move(e);
  return "";
}

std::string Expression::Evaluate(const std::map<std::string, double>& values, double* out) const {
  std::lock_guard lock(impl_->mu);
  for (size_t i = 0; i < impl_->names.size(); ++i) {
    auto it = values.find(impl_->names[i]);
    if (it == values.end()) return "no value for " + impl_->names[i];
    impl_->slots[i] = it->second;
  }
  double v = 0;
  try {
    v = impl_->parser.Eval();
  } catch (const mu::Parser::exception_type& error) {
    return text_ + ": " + error.GetMsg();
  }
  if (!std::isfinite(v)) return text_ + " is not a finite number here (a division by zero?)";
  *out = v;
  return "";
}

std::string Expression::EvaluateInteger(const std::map<std::string, double>& values, int64_t lo,
                                        int64_t hi, int64_t* out) const {
  double v = 0;
  if (std::string why = Evaluate(values, &v); !why.empty()) return why;
  if (std::fabs(v - std::round(v)) > 1e-9 * std::max(1.0, std::fabs(v)))
    return text_ + " = " + Number(v) + " is not a whole number";
  if (v < double(lo) || v > double(hi))
    return text_ + " = " + Number(v) + " is outside " + std::to_string(lo) + " to " +
           std::to_string(hi);
  *out = int64_t(std::llround(v));
  return "";
}

}  // namespace ablation::kernels::user
