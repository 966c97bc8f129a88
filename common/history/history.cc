#include "common/history/history.h"

#include <algorithm>
#include <tuple>

#include "common/enum_words.h"
#include "common/stats.h"

namespace ablation::history {
namespace {

// A fleet's rows carry their daemon (its points name it): two nodes of one fingerprint differ by
// their chips' spread, which is not a change over time, so each node is a series of its own.
auto SeriesKey(const SeriesRow& r) {
  return std::tie(r.fingerprint, r.variant, r.dtype, r.m, r.n, r.k, r.regime, r.figures, r.l2,
                  r.node);
}

// The value of an enum's stored word (a regime's "sustained", an L2 mode's "cold_rotated"), as
// every enum of the API is stored (enum_words.h); unspecified (zero) where it names none.
template <class E>
E StoredEnum(const std::string& text) {
  E value = E{};
  return common::ParseEnumWord("", text, &value).empty() ? value : E{};
}

// Rows [begin, end) of one series and one run into a point.
v1::HistoryPoint Point(const std::vector<SeriesRow>& rows, size_t begin, size_t end) {
  v1::HistoryPoint p;
  p.set_run_id(rows[begin].run_id);
  p.set_measurement_id(rows[begin].measurement_id);
  p.set_time_ms(rows[begin].time_ms);
  p.set_node(rows[begin].node);
  p.set_user_build_id(rows[begin].user_build_id);
  p.set_version(rows[begin].version);
  p.set_source_sha256(rows[begin].source_sha256);
  std::vector<double> medians;
  double noise = 0, tflops = 0;
  for (size_t i = begin; i < end; ++i) {
    medians.push_back(rows[i].median_ms);
    noise += rows[i].noise;
    tflops += rows[i].tflops;
  }
  const double count = double(end - begin);
  p.set_median_ms(common::Median(medians));
  p.set_noise(noise / count);
  p.set_tflops(tflops / count);
  return p;
}

// Where a user variant's point ran other code than the point before: its version and source, or
// its build where only the build changed (compiled again, by another compiler).
void NameBuildChanges(v1::Series* series) {
  for (int i = 1; i < series->points_size(); ++i) {
    const v1::HistoryPoint& before = series->points(i - 1);
    v1::HistoryPoint* p = series->mutable_points(i);
    if (p->user_build_id() <= 0 || before.user_build_id() <= 0 ||
        p->user_build_id() == before.user_build_id())
      continue;
    if (p->version() != before.version() || p->source_sha256() != before.source_sha256()) {
      p->set_build_change("version " + std::to_string(before.version()) + " -> " +
                          std::to_string(p->version()) + " (source " +
                          before.source_sha256().substr(0, 12) + " -> " +
                          p->source_sha256().substr(0, 12) + ")");
    } else {
      p->set_build_change("build " + std::to_string(before.user_build_id()) + " -> " +
                          std::to_string(p->user_build_id()) +
                          " (the same source, compiled again)");
    }
  }
}

void FindChanges(v1::Series* series, const ChangePointOptions& options) {
  std::vector<double> medians, noise;
  for (const auto& p : series->points()) {
    medians.push_back(p.median_ms());
    noise.push_back(p.noise());
  }
  const std::vector<ChangePoint> changes = FindChangePoints(medians, options, noise);
  for (const ChangePoint& c : changes) {
    v1::ChangePoint* out = series->add_change_points();
    out->set_index(c.index);
    out->set_before_median_ms(c.before_mean);
    out->set_after_median_ms(c.after_mean);
    out->set_relative_change(c.relative_change);
    out->set_p_value(c.p_value);
    series->mutable_points(c.index)->set_change_point(true);
  }
  const NewestShift shift = NewestPointShift(medians, changes, options, noise);
  v1::NewestShift* newest = series->mutable_newest();
  newest->set_candidate(shift.candidate);
  newest->set_baseline_median_ms(shift.baseline);
  newest->set_relative_change(shift.relative_change);
  newest->set_threshold(shift.threshold);
  newest->set_baseline_points(shift.baseline_points);
}

}  // namespace

v1::HistoryResponse BuildHistory(const std::vector<SeriesRow>& rows,
                                 const ChangePointOptions& options) {
  v1::HistoryResponse response;
  response.set_min_relative_change(options.min_relative_change);
  response.set_significance(options.significance);
  size_t i = 0;
  while (i < rows.size()) {
    size_t end = i;
    while (end < rows.size() && SeriesKey(rows[end]) == SeriesKey(rows[i])) ++end;
    v1::Series* series = response.add_series();
    const SeriesRow& first = rows[i];
    series->set_hardware_fingerprint(first.fingerprint);
    series->set_variant(first.variant);
    series->set_dtype(first.dtype);
    series->mutable_shape()->set_m(first.m);
    series->mutable_shape()->set_n(first.n);
    series->mutable_shape()->set_k(first.k);
    series->set_regime(StoredEnum<v1::Regime>(first.regime));
    series->set_figures(first.figures);
    series->set_l2(StoredEnum<v1::L2Mode>(first.l2));
    series->set_device_name(rows[end - 1].device_name);
    series->set_device_uuid(rows[end - 1].device_uuid);
    for (size_t run = i; run < end;) {
      size_t next = run;
      while (next < end && rows[next].run_id == rows[run].run_id) ++next;
      *series->add_points() = Point(rows, run, next);
      run = next;
    }
    NameBuildChanges(series);
    FindChanges(series, options);
    i = end;
  }
  return response;
}

}  // namespace ablation::history
