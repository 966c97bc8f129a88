#include "client/report/report.h"

#include <algorithm>
#include <tuple>

#include "client/output/format.h"
#include "client/report/conditions.h"
#include "client/report/run_index.h"
#include "client/report/sections.h"
#include "client/report/stats.h"
#include "client/report/versions.h"

namespace ablation::client::report {
namespace {

v1::ReportRun RunIdentity(const v1::GetRunResponse& response, const RunIndex& index) {
  const v1::Run& run = response.run();
  v1::ReportRun out;
  out.set_id(run.id());
  out.set_state(run.state());
  out.set_kind(run.kind());
  *out.mutable_device() = run.device();
  out.set_daemon_version(run.daemon_version());
  out.set_git_revision(run.git_revision());
  out.set_clock_policy(run.clock_policy());
  *out.mutable_tags() = run.tags();
  out.set_started_at_ms(run.started_at_ms());
  out.set_finished_at_ms(run.finished_at_ms());
  out.set_rounds(index.rounds());
  out.set_order_seed(run.order_seed());
  out.set_regime(run.regime());
  out.set_paired(run.paired());
  // The request the run was made from, as the daemon stored it: a sweep names its preset.
  const v1::RunRequest request = StoredRequest(run);
  out.set_preset(request.preset());
  out.set_inputs(InputsText(response, request));
  return out;
}

v1::ReportMethod Method(const RunIndex& index) {
  v1::ReportMethod m;
  m.set_change(
      "median(previous) / median(this) - 1, each over all its rounds' samples (their medians "
      "where the samples are absent)");
  m.set_interval(index.rounds() >= 2
                     ? "95% percentile bootstrap over rounds, paired: the same rounds for both rows"
                     : "one round: 95% percentile bootstrap of the samples, drift not included");
  m.set_resamples(kBootstrapResamples);
  m.set_share(
      "TFLOPS / TFLOPS of the cuBLAS of the same dtype and shape in the run: alone at the cap "
      "(solo) where both rows have solo spans in every round, else in their windows");
  m.set_shares(
      "against two cuBLAS baselines where the run measured them: cublas_<dtype>, the pick of "
      "cuBLASLt's heuristic, and cublas_<dtype>_best, the fastest of its candidates, timed once "
      "per device, shape and cuBLAS version (each row names its algorithm)");
  m.set_solo_floor(index.solo_floor());
  if (std::any_of(index.items().begin(), index.items().end(),
                  [](const Item& item) { return !SoloTimes(item).empty(); }))
    m.set_solo(
        "after each paired window every variant ran alone, from the state the GPU was in, until "
        "its own clock and board power settled; its last seconds, whose one-second spans agreed, "
        "are its solo span: TFLOPS alone at the cap, its clock, and NVML's energy over the span "
        "per 10^12 operations. At the power cap the clock follows the power of what runs, so a "
        "TFLOPS figure of a shared window is at a clock the neighbours set; a solo figure is the "
        "kernel's own. The at-cap change is the speed change of the solo spans over the rounds "
        "(the paired change stays the verdict on the work), with the solo clocks' change and "
        "which of work and power decided it");
  m.set_floor(index.floor());
  m.set_cycles_floor(index.cycles_floor());
  m.set_floor_definition(
      "the median over the run's items of (max - min) / median of each item's per-round "
      "medians");
  m.set_within_noise("the interval contains 0, or the change is smaller than the floor");
  m.set_cycles("the same change on SM cycles per sample, which the clock does not move");
  m.set_low_clock(
      "samples whose SM clock was below the run's low-clock fraction (default 75%) of the "
      "maximum");
  m.set_tflops_interval(
      index.rounds() >= 2
          ? "TFLOPS at the 95% percentile bootstrap interval of the median time over the rounds"
          : "TFLOPS at the 95% percentile bootstrap interval of the median time over the samples "
            "of the one round, drift not included");
  m.set_conditions(
      "NVML over the samples' time: SM clock mean of the rounds' means and lowest of their "
      "minimums, board power, the share of samples throttled (any clock-event reason); "
      "occupancy: the worker's theoretical occupancy of the launch and its limiter");
  m.set_counters(
      "one launch of each item's own kernel after its first round's timing (run --profile), "
      "clocks untouched, never a timing sample; counters named by concept, each read with the "
      "architecture's metric (the daemon's counter table)");
  m.set_paired_floor(index.paired_floor());
  m.set_paired_cycles_floor(index.paired_cycles_floor());
  if (index.paired())
    m.set_paired(
        "a paired change comes from one window per round in which both rows were interleaved, "
        "sample by sample, so both saw the same clock: per round the median over the window's "
        "cycles of log(previous / this), the change exp(mean over rounds) - 1, its 95% interval "
        "Student's t over the rounds widened by the paired floor in quadrature, since a repeat "
        "of the run varies by about that much (one round: a bootstrap over the window's cycles, "
        "drift not included); the verdict (within noise or not) is on the time change at that "
        "shared clock, against the paired floor: the median over the items that shared windows "
        "of the spread of their rounds' log ratios. The cycles change is the work; the clock "
        "change "
        "(this row's clock / the other's - 1, in the same windows) what power did to each; "
        "source says which of the two moved the time");
  return m;
}

}  // namespace

v1::Report BuildReport(const v1::GetRunResponse& run, const std::vector<v1::Preset>& presets,
                       const std::vector<v1::Variant>& variants) {
  v1::Report report;
  report.set_schema_version(kReportSchemaVersion);
  const RunIndex index(run, variants);
  *report.mutable_run() = RunIdentity(run, index);
  *report.mutable_method() = Method(index);
  const v1::Shape reference = index.ReferenceShape();
  std::vector<const v1::Preset*> sections;
  for (const v1::Preset& p : presets)
    if (p.has_report()) sections.push_back(&p);
  std::sort(sections.begin(), sections.end(), [](const v1::Preset* a, const v1::Preset* b) {
    return std::tuple(a->report().order(), a->name()) < std::tuple(b->report().order(), b->name());
  });
  // The sections the run measured whole come first, in their order; those it measured in part
  // after them (a ladder-a run opens with ladder A, not with the 2 of 12 architecture rows it
  // also has); "all" last.
  std::vector<v1::ReportSection> built;
  for (const v1::Preset* p : sections) built.push_back(PresetSection(*p, index, reference));
  // A user kernel's versions, where the run measured two or more: a section per shape.
  const std::vector<v1::Preset> versions = VersionPresets(run);
  for (const v1::Preset& p : versions) {
    std::vector<v1::Shape> shapes;
    for (const v1::Measurement& m : run.measurements())
      if (std::none_of(shapes.begin(), shapes.end(),
                       [&](const v1::Shape& s) { return SameShape(s, m.shape()); }) &&
          std::any_of(p.report().blocks(0).rungs().begin(), p.report().blocks(0).rungs().end(),
                      [&](const v1::PresetRung& r) {
                        return std::count(r.resolved().begin(), r.resolved().end(), m.variant());
                      }))
        shapes.push_back(m.shape());
    for (const v1::Shape& shape : shapes) {
      v1::ReportSection s = PresetSection(p, index, shape);
      if (!SameShape(shape, shapes.front())) s.set_id(s.id() + "-" + FormatShape(shape));
      built.push_back(std::move(s));
    }
  }
  std::stable_partition(built.begin(), built.end(),
                        [](const v1::ReportSection& s) { return s.missing() == 0; });
  for (v1::ReportSection& s : built) *report.add_sections() = std::move(s);
  *report.add_sections() = AllSection(index);
  report.mutable_run()->set_counters_tool(CountersTool(report));
  return report;
}

}  // namespace ablation::client::report
