#include "client/report/compare.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "client/format.h"
#include "client/report/stats.h"

namespace ablation::client::report {
namespace {

namespace v1 = ::ablation::v1;

using Key = std::tuple<std::string, std::string, std::int64_t, std::int64_t, std::int64_t>;

std::map<Key, const v1::Measurement*> Successful(const v1::GetRunResponse& run) {
  std::map<Key, const v1::Measurement*> out;
  for (const v1::Measurement& m : run.measurements()) {
    if (m.status() != v1::MEASUREMENT_STATUS_OK) continue;
    out[{m.variant(), m.dtype(), m.shape().m(), m.shape().n(), m.shape().k()}] = &m;
  }
  return out;
}

std::string KeyText(const Key& k) {
  return std::get<0>(k) + " " + std::get<1>(k) + " " + std::to_string(std::get<2>(k)) + "x" +
         std::to_string(std::get<3>(k)) + "x" + std::to_string(std::get<4>(k));
}

std::string Pct(double fraction) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%+.2f%%", fraction * 100);
  return buffer;
}

std::string PValue(double p) {
  char buffer[64];
  if (p < 1e-4) return "<1e-4";
  std::snprintf(buffer, sizeof buffer, "%.4f", p);
  return buffer;
}

v1::ComparisonRow Row(const v1::Measurement& a, const v1::Measurement& b, double threshold) {
  v1::ComparisonRow row;
  row.set_variant(a.variant());
  row.set_dtype(a.dtype());
  *row.mutable_shape() = a.shape();
  row.set_median_a_ms(a.stats().median_ms());
  row.set_median_b_ms(b.stats().median_ms());
  const std::vector<double> sa(a.sample_ms().begin(), a.sample_ms().end());
  const std::vector<double> sb(b.sample_ms().begin(), b.sample_ms().end());
  row.set_samples_a(int(sa.size()));
  row.set_samples_b(int(sb.size()));
  const WelchResult w = WelchLogT(sa, sb);
  if (!w.valid) {
    row.set_verdict("no samples");
    return row;
  }
  v1::WelchTest* test = row.mutable_test();
  test->set_time_change(w.time_change);
  test->mutable_ci()->set_low(w.low);
  test->mutable_ci()->set_high(w.high);
  test->set_t(w.t);
  test->set_df(w.df);
  test->set_p(w.p);
  row.set_significant(w.p < kSignificance);
  row.set_regression(row.significant() && w.time_change > threshold);
  if (row.regression()) {
    row.set_verdict("REGRESSION");
  } else if (!row.significant()) {
    row.set_verdict("same (within noise)");
  } else {
    row.set_verdict(w.time_change > 0 ? "slower" : "faster");
  }
  return row;
}

}  // namespace

v1::Comparison Compare(const v1::GetRunResponse& a, const v1::GetRunResponse& b, double threshold) {
  v1::Comparison c;
  c.set_schema_version(kComparisonSchemaVersion);
  c.set_run_a(a.run().id());
  c.set_run_b(b.run().id());
  c.set_threshold(threshold);
  c.set_test("Welch t-test on log sample times, two-sided, alpha 0.05");
  const auto in_a = Successful(a), in_b = Successful(b);
  for (const auto& [key, ma] : in_a) {
    auto it = in_b.find(key);
    if (it == in_b.end()) {
      c.add_only_in_a(KeyText(key));
      continue;
    }
    *c.add_rows() = Row(*ma, *it->second, threshold);
    c.set_regressions(c.regressions() + c.rows(c.rows_size() - 1).regression());
  }
  for (const auto& [key, mb] : in_b)
    if (!in_a.count(key)) c.add_only_in_b(KeyText(key));
  return c;
}

Table CompareTable(const v1::Comparison& c) {
  Table t;
  t.columns = {{"variant", "variant"},
               {"dtype", "dtype"},
               {"shape", "shape"},
               {"median_a_ms", "run " + std::to_string(c.run_a()) + " ms", Align::kRight},
               {"median_b_ms", "run " + std::to_string(c.run_b()) + " ms", Align::kRight},
               // The medians' ratio is what the two ms columns show; the test and its interval
               // work on the geometric means of all samples, which power-cap transients can move
               // apart from the medians, so both are shown, each named for what it is.
               {"median_change", "median change", Align::kRight},
               {"time_change", "geo-mean change", Align::kRight},
               {"ci_low", "95% CI low", Align::kRight},
               {"ci_high", "95% CI high", Align::kRight},
               {"p_value", "p (Welch, log)", Align::kRight},
               {"verdict", "verdict"}};
  for (const v1::ComparisonRow& r : c.rows()) {
    const bool v = r.has_test();
    auto cell = [v](double x, std::string (*text)(double)) {
      return v ? Cell(text(x), FormatExact(x)) : Cell("-", "");
    };
    const double a = r.median_a_ms(), b = r.median_b_ms();
    t.rows.push_back({r.variant(), r.dtype(), FormatShape(r.shape()),
                      Cell(FormatSignificant(a, 4), FormatExact(a)),
                      Cell(FormatSignificant(b, 4), FormatExact(b)),
                      a > 0 ? Cell(Pct(b / a - 1), FormatExact(b / a - 1)) : Cell("-", ""),
                      cell(r.test().time_change(), Pct), cell(r.test().ci().low(), Pct),
                      cell(r.test().ci().high(), Pct), cell(r.test().p(), PValue), r.verdict()});
  }
  return t;
}

std::string ParseThreshold(const std::string& text, double* fraction) {
  std::string number = text;
  if (!number.empty() && number.back() == '%') number.pop_back();
  char* end = nullptr;
  const double value = number.empty() ? NAN : std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || !std::isfinite(value) ||
      value < 0 || value >= 100) {
    return "'" + text + "': expected a percentage such as 3% (0 to 100)";
  }
  *fraction = value / 100;
  return {};
}

}  // namespace ablation::client::report
