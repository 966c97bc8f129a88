#include "client/report/compare.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "client/report/report.h"

namespace ablation::client::report {
namespace {

namespace v1 = ::ablation::v1;

using Key = std::tuple<std::string, std::string, std::int64_t, std::int64_t, std::int64_t>;

std::map<Key, const v1::Measurement*> Successful(const v1::GetRunResponse& run) {
  std::map<Key, const v1::Measurement*> out;
  for (const v1::Measurement& m : run.measurements()) {
    if (m.status() != "ok") continue;
    out[{m.variant(), m.dtype(), m.shape().m(), m.shape().n(), m.shape().k()}] = &m;
  }
  return out;
}

std::string KeyText(const Key& k) {
  return std::get<0>(k) + " " + std::get<1>(k) + " " + std::to_string(std::get<2>(k)) + "x" +
         std::to_string(std::get<3>(k)) + "x" + std::to_string(std::get<4>(k));
}

std::string Exact(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
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

}  // namespace

int Comparison::regressions() const {
  int n = 0;
  for (const CompareRow& r : rows) n += r.regression;
  return n;
}

Comparison Compare(const v1::GetRunResponse& a, const v1::GetRunResponse& b, double threshold) {
  Comparison c;
  c.run_a = a.run().id();
  c.run_b = b.run().id();
  c.threshold = threshold;
  const auto in_a = Successful(a), in_b = Successful(b);
  for (const auto& [key, ma] : in_a) {
    auto it = in_b.find(key);
    if (it == in_b.end()) {
      c.only_in_a.push_back(KeyText(key));
      continue;
    }
    const v1::Measurement* mb = it->second;
    CompareRow row;
    row.variant = ma->variant();
    row.dtype = ma->dtype();
    row.shape = ma->shape();
    row.median_a_ms = ma->stats().median_ms();
    row.median_b_ms = mb->stats().median_ms();
    const std::vector<double> sa(ma->sample_ms().begin(), ma->sample_ms().end());
    const std::vector<double> sb(mb->sample_ms().begin(), mb->sample_ms().end());
    row.samples_a = int(sa.size());
    row.samples_b = int(sb.size());
    row.test = WelchLogT(sa, sb);
    if (!row.test.valid) {
      row.verdict = "no samples";
    } else {
      row.significant = row.test.p < kSignificance;
      row.regression = row.significant && row.test.time_change > threshold;
      if (row.regression) {
        row.verdict = "REGRESSION";
      } else if (!row.significant) {
        row.verdict = "same (within noise)";
      } else {
        row.verdict = row.test.time_change > 0 ? "slower" : "faster";
      }
    }
    c.rows.push_back(std::move(row));
  }
  for (const auto& [key, mb] : in_b)
    if (!in_a.count(key)) c.only_in_b.push_back(KeyText(key));
  return c;
}

Table CompareTable(const Comparison& c) {
  Table t;
  t.columns = {{"variant", "variant"},
               {"dtype", "dtype"},
               {"shape", "shape"},
               {"median_a_ms", "run " + std::to_string(c.run_a) + " ms", Align::kRight},
               {"median_b_ms", "run " + std::to_string(c.run_b) + " ms", Align::kRight},
               // The medians' ratio is what the two ms columns show; the test and its interval
               // work on the geometric means of all samples, which power-cap transients can move
               // apart from the medians, so both are shown, each named for what it is.
               {"median_change", "median change", Align::kRight},
               {"time_change", "geo-mean change", Align::kRight},
               {"ci_low", "95% CI low", Align::kRight},
               {"ci_high", "95% CI high", Align::kRight},
               {"p_value", "p (Welch, log)", Align::kRight},
               {"verdict", "verdict"}};
  for (const CompareRow& r : c.rows) {
    const bool v = r.test.valid;
    t.rows.push_back({r.variant, r.dtype, ShapeText(r.shape),
                      Cell(FormatSignificant(r.median_a_ms, 4), Exact(r.median_a_ms)),
                      Cell(FormatSignificant(r.median_b_ms, 4), Exact(r.median_b_ms)),
                      r.median_a_ms > 0 ? Cell(Pct(r.median_b_ms / r.median_a_ms - 1),
                                               Exact(r.median_b_ms / r.median_a_ms - 1))
                                        : Cell("-", ""),
                      v ? Cell(Pct(r.test.time_change), Exact(r.test.time_change)) : Cell("-", ""),
                      v ? Cell(Pct(r.test.low), Exact(r.test.low)) : Cell("-", ""),
                      v ? Cell(Pct(r.test.high), Exact(r.test.high)) : Cell("-", ""),
                      v ? Cell(PValue(r.test.p), Exact(r.test.p)) : Cell("-", ""), r.verdict});
  }
  return t;
}

std::string CompareJson(const Comparison& c) {
  std::string json =
      "{\n  \"run_a\": " + std::to_string(c.run_a) + ",\n  \"run_b\": " + std::to_string(c.run_b) +
      ",\n  \"threshold\": " + Exact(c.threshold) +
      ",\n  \"test\": \"Welch t-test on log sample times, two-sided, alpha 0.05\"" +
      ",\n  \"regressions\": " + std::to_string(c.regressions()) + ",\n  \"rows\": [";
  for (std::size_t i = 0; i < c.rows.size(); ++i) {
    const CompareRow& r = c.rows[i];
    const bool v = r.test.valid;
    auto num = [v](double x) { return v ? Exact(x) : std::string("null"); };
    json +=
        std::string(i ? "," : "") + "\n    {\"variant\": " + JsonString(r.variant) +
        ", \"dtype\": " + JsonString(r.dtype) + ", \"shape\": " + JsonString(ShapeText(r.shape)) +
        ", \"median_a_ms\": " + Exact(r.median_a_ms) +
        ", \"median_b_ms\": " + Exact(r.median_b_ms) +
        ", \"samples_a\": " + std::to_string(r.samples_a) +
        ", \"samples_b\": " + std::to_string(r.samples_b) +
        ", \"time_change\": " + num(r.test.time_change) +
        ", \"ci\": " + (v ? "[" + Exact(r.test.low) + ", " + Exact(r.test.high) + "]" : "null") +
        ", \"t\": " + num(r.test.t) + ", \"df\": " + num(r.test.df) + ", \"p\": " + num(r.test.p) +
        ", \"significant\": " + (r.significant ? "true" : "false") +
        ", \"regression\": " + (r.regression ? "true" : "false") +
        ", \"verdict\": " + JsonString(r.verdict) + "}";
  }
  json += "\n  ],\n  \"only_in_a\": [";
  for (std::size_t i = 0; i < c.only_in_a.size(); ++i)
    json += (i ? ", " : "") + JsonString(c.only_in_a[i]);
  json += "],\n  \"only_in_b\": [";
  for (std::size_t i = 0; i < c.only_in_b.size(); ++i)
    json += (i ? ", " : "") + JsonString(c.only_in_b[i]);
  return json + "]\n}\n";
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
