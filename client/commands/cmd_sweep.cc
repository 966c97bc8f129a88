#include "client/commands/cmd_sweep.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <sstream>
#include <thread>

#include "client/cli/calls.h"
#include "client/cli/exit_codes.h"
#include "client/cli/validators.h"
#include "client/output/format.h"
#include "client/output/render.h"
#include "client/output/render_presets.h"
#include "client/runs/follow.h"

namespace ablation::client {

CLI::App* SetupSweep(CLI::App& app, SweepOptions& options) {
  CLI::App* sub = app.add_subcommand(
      "sweep", "Run a preset (see `presets`) as one run, with live progress; Ctrl-C cancels");
  sub->add_option("--preset,-p", options.preset, "Preset name (see `presets`)")
      ->type_name("PRESET")
      ->required();
  sub->add_option("--tag,-t", options.tags, "Tag stored with the run (nightly); repeatable")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sub->add_flag("--allow-missing", options.allow_missing,
                "Run the entries that exist when some of the preset's variants are not built yet");
  sub->add_option("--shape,-s", options.shapes,
                  "Replace the preset's shapes: MxNxK, or N for NxNxN; repeatable")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(ShapeValidator());
  sub->add_option("--size", options.measure.sizes,
                  "Sizes of the preset's kernels of their own contract, NAME=N,...: "
                  "rows=8192,cols=4096; repeatable (default: each kernel's default sizes)")
      ->type_name("SIZES")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  AddMeasureOptions(sub, options.measure);
  sub->add_flag("--all-devices", options.all_devices,
                "Run the preset on every GPU of the daemon at once: one run per GPU, tagged "
                "together (fanout-<time>); overrides --device");
  sub->footer(
      "Examples:\n"
      "  ablation-client sweep --preset ladder-a\n      a preset's variants x shapes (`presets` "
      "lists them)\n"
      "  ablation-client sweep --preset ladder-b --tag nightly --shape 8192\n      tagged, at "
      "another shape");
  return sub;
}

v1::RunRequest BuildSweepRequest(const SweepOptions& options) {
  RunOptions run = options.measure;
  run.shapes = options.shapes;
  run.tags = options.tags;
  v1::RunRequest request = BuildRunRequest(run);
  if (options.shapes.empty()) request.clear_shapes();  // the preset's own
  request.set_preset(options.preset);
  request.set_allow_missing(options.allow_missing);
  return request;
}

std::string SweepProgressLine(int done, int total, const std::string& current, double elapsed_s) {
  std::string line = "[" + std::to_string(done) + "/" + std::to_string(total) + "]";
  if (!current.empty()) line += " " + current;
  line += " | " + FormatDuration(elapsed_s) + " elapsed, ETA ";
  if (done > 0 && total >= done) {
    line += FormatDuration(elapsed_s / done * (total - done));
  } else {
    line += "-";
  }
  return line;
}

namespace {

// Draws the progress of one run. On a terminal the line is redrawn in place ("\r", erase line);
// otherwise each measurement is one plain line, and queue / start / end lines are as `run`'s.
class SweepProgress {
 public:
  SweepProgress(std::ostream& err, bool tty) : err_(err), tty_(tty) {}

  void operator()(const v1::RunEvent& event, int seen, int total) {
    using Clock = std::chrono::steady_clock;
    switch (event.event_case()) {
      case v1::RunEvent::kStarted:
        start_ = Clock::now();
        started_ = true;
        plan_.assign(event.started().plan().begin(), event.started().plan().end());
        Line(ProgressLine(event, seen, total));
        break;
      case v1::RunEvent::kMeasurement:
        if (event.measurement().status() != v1::MEASUREMENT_STATUS_OK)
          Line(ProgressLine(event, seen, total));
        break;
      case v1::RunEvent::EVENT_NOT_SET:  // the stream ended
        if (tty_ && drawn_) err_ << '\n' << std::flush;
        drawn_ = false;
        return;
      default:
        Line(ProgressLine(event, seen, total));
        return;
    }
    if (!started_) return;
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    std::string current;
    if (seen < static_cast<int>(plan_.size())) {
      const v1::PlannedMeasurement& p = plan_[seen];
      current = p.variant() + " " + p.dtype() + " " + FormatShape(p.shape());
    }
    const std::string line = SweepProgressLine(seen, total, current, elapsed);
    if (tty_) {
      err_ << "\r\033[K" << line << std::flush;
      drawn_ = true;
    } else if (event.event_case() == v1::RunEvent::kMeasurement) {
      err_ << line << '\n' << std::flush;
    }
  }

 private:
  // A line that stays: clears the redrawn one first.
  void Line(const std::string& text) {
    if (text.empty()) return;
    if (tty_ && drawn_) err_ << "\r\033[K";
    drawn_ = false;
    err_ << text << '\n' << std::flush;
  }

  std::ostream& err_;
  bool tty_;
  bool started_ = false;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::vector<v1::PlannedMeasurement> plan_;
};

}  // namespace

namespace {

// One run per GPU, all streaming at once; each run's output is kept apart and printed in GPU
// order when all have ended, so the tables do not interleave.
int SweepAllDevices(const SweepOptions& options, const CommandContext& context) {
  v1::GetDeviceResponse device;
  {
    grpc::ClientContext call;
    SetDeadline(call, context.global, kDefaultQueryTimeoutS);
    grpc::Status status = context.stub.GetDevice(&call, v1::GetDeviceRequest(), &device);
    if (!status.ok()) return ReportRpcError(status, context);
  }
  const int count = device.device_count();
  if (count < 1) {
    context.err << "error: the daemon has no usable GPU: " << device.unavailable_reason() << '\n';
    return kExitFailed;
  }
  const std::string tag =
      "fanout-" + std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
  std::vector<std::ostringstream> outs(static_cast<size_t>(count));
  std::vector<std::ostringstream> errs(static_cast<size_t>(count));
  std::vector<int> codes(size_t(count), 0);
  std::vector<std::thread> threads;
  for (int d = 0; d < count; ++d) {
    SweepOptions one = options;
    one.measure.device = d;
    one.tags.push_back(tag);
    threads.emplace_back([&, one, d] {
      const CommandContext mine{context.global, context.stub, outs[size_t(d)], errs[size_t(d)],
                                context.interrupted};
      codes[size_t(d)] =
          FollowRun(BuildSweepRequest(one), mine, [](const v1::RunEvent&, int, int) {});
    });
  }
  for (auto& t : threads) t.join();
  int code = kExitOk;
  for (int d = 0; d < count; ++d) code = std::max(code, codes[size_t(d)]);
  if (context.global.format == Format::kJson) {
    // One envelope for the programs that read it: every GPU's rows (each names its run), with
    // the tag that holds the runs together.
    std::vector<std::string> items;
    for (int d = 0; d < count; ++d) {
      ParsedEnvelope parsed;
      if (ParseJsonEnvelope(outs[size_t(d)].str(), &parsed).empty())
        items.insert(items.end(), parsed.items.begin(), parsed.items.end());
      context.err << errs[size_t(d)].str();
    }
    context.out << JsonEnvelopeOfText("measurements", items, {{"tag", tag}});
    return code;
  }
  for (int d = 0; d < count; ++d) {
    context.out << "== GPU " << d << " (tag " << tag << ")\n" << outs[size_t(d)].str();
    context.err << errs[size_t(d)].str();
  }
  return code;
}

}  // namespace

int ExecuteSweep(const SweepOptions& options, const CommandContext& context) {
  // The preset first: a clear refusal naming what is missing before anything is queued. The
  // daemon checks again when the run is submitted.
  v1::ListPresetsRequest list;
  list.set_name(options.preset);
  v1::ListPresetsResponse presets;
  {
    grpc::ClientContext call;
    SetDeadline(call, context.global, kDefaultQueryTimeoutS);
    grpc::Status status = context.stub.ListPresets(&call, list, &presets);
    if (!status.ok()) return ReportRpcError(status, context);
  }
  if (presets.presets_size() != 1) {
    context.err << "error: the daemon has no preset '" << options.preset << "'\n";
    return kExitDataError;
  }
  const std::vector<std::string> missing = MissingEntries(presets.presets(0));
  if (!missing.empty()) {
    if (!options.allow_missing) {
      context.err << "error: preset " << options.preset << ": " << missing.size()
                  << (missing.size() == 1 ? " entry does" : " entries do")
                  << " not resolve in this daemon: " << Join(missing, ", ")
                  << "\n(pass --allow-missing to run the other " << presets.presets(0).planned()
                  << " measurements)\n";
      return kExitDataError;
    }
    if (!context.global.quiet) {
      context.err << "preset " << options.preset << ": skipping " << missing.size() << " missing "
                  << (missing.size() == 1 ? "entry" : "entries") << ": " << Join(missing, ", ")
                  << '\n';
    }
  }
  if (options.all_devices) return SweepAllDevices(options, context);
  RunProgress progress;
  std::shared_ptr<SweepProgress> drawer;
  if (!context.global.quiet) {
    const bool tty = &context.err == &std::cerr && ::isatty(STDERR_FILENO) == 1;
    drawer = std::make_shared<SweepProgress>(context.err, tty);
    progress = [drawer](const v1::RunEvent& e, int seen, int total) { (*drawer)(e, seen, total); };
  } else {
    progress = [](const v1::RunEvent&, int, int) {};
  }
  if (options.measure.detach) return DetachRun(BuildSweepRequest(options), context);
  return FollowRun(BuildSweepRequest(options), context, progress);
}

}  // namespace ablation::client
