#include "client/runs/measure_options.h"

#include "client/cli/validators.h"
#include "client/output/enum_words.h"

namespace ablation::client {

void AddMeasureOptions(CLI::App* sub, RunOptions& options) {
  sub->add_option("--regime", options.regime,
                  "Power regime: sustained (settled at the power cap, the default), burst (from "
                  "a cooled GPU, before the cap engages) or locked (clocks locked; needs admin)")
      ->check([](const std::string& text) -> std::string {
        v1::Regime regime;
        return ParseEnumWord("", text, &regime);
      });
  sub->add_flag("--unpaired", options.unpaired,
                "Measure each item in a window of its own (default: the items of one shape "
                "interleaved in one window, so that they see the same clock)");
  sub->add_option("--window-seconds", options.window_seconds,
                  "Sustained/locked: the measured window's length (default 3)")
      ->check(RealNumber());
  sub->add_option("--burst-seconds", options.burst_seconds,
                  "Burst: one short window's length (default 0.02)")
      ->check(RealNumber());
  sub->add_option("--settle-max-seconds", options.settle_max_seconds,
                  "Sustained/locked: take the window anyway after settling this long (default 30)")
      ->check(RealNumber());
  sub->add_option("--solo-seconds", options.solo_seconds,
                  "Sustained/locked: after the paired window each variant runs alone until its "
                  "own clock and power settle; this much of it is its figure at the cap "
                  "(default 3)")
      ->check(RealNumber());
  sub->add_flag("--no-solo", options.no_solo,
                "Sustained/locked: no solo spans (cheaper; then no TFLOPS alone at the cap, no "
                "energy per operation, and shares of cuBLAS from the shared windows)");
  sub->add_flag("--verify", options.verify, "Verify each variant before timing it");
  sub->add_flag("--hot-l2", options.hot_l2,
                "Keep L2 warm between samples (default: cold, rotating input copies)");
  sub->add_flag("--flush-l2", options.flush_l2,
                "L2 cold by a flush before every sample (default: rotating inputs)");
  sub->add_flag("--fresh-inputs", options.fresh_inputs,
                "Each round on inputs allocated anew (needs --rounds 2 or more): a kernel whose "
                "speed depends on where its buffers lie shows as rounds apart");
  sub->add_option("--min-samples", options.min_samples, "At least this many samples (default 10)")
      ->check(WholeNumber(1));
  sub->add_option("--max-seconds", options.max_seconds,
                  "Time cap per measurement in seconds (default 10)")
      ->check(RealNumber());
  sub->add_option("--target-noise", options.target_noise,
                  "Stop at this relative noise of the mean (default 0.005)")
      ->check(FractionValidator());
  sub->add_option("--rounds", options.rounds,
                  "Measure every item this many times, each round in a shuffled order (default "
                  "1; 3 for a preset)")
      ->check(WholeNumber(1, 100));
  sub->add_option("--order-seed", options.order_seed,
                  "Seed of the rounds' shuffled orders (default: the daemon picks and stores one)");
  const CLI::Validator clock(
      [](std::string& text) -> std::string {
        if (text == "base" || text == "max") return {};
        int mhz = 0;
        if (CLI::detail::lexical_cast(text, mhz) && mhz > 0) return {};
        return "'" + text + "': expected a clock in MHz, 'base' or 'max'";
      },
      "MHZ|base|max", "clock");
  sub->add_option("--lock-sm-clock", options.lock_sm_clock,
                  "Lock the SM clock for the run (default: observe, no lock)")
      ->check(clock);
  sub->add_option("--lock-mem-clock", options.lock_mem_clock,
                  "Lock the memory clock for the run (default: observe, no lock)")
      ->check(clock);
  sub->add_option("--device,-d", options.device, "GPU index")
      ->capture_default_str()
      ->check(WholeNumber(0));
  sub->add_flag("--detach", options.detach,
                "Queue the run, print its id and exit; it runs on (`watch RUN` follows it)");
  sub->add_flag("--profile", options.profile,
                "After each item's timing, read the hardware counters of one launch (ncu)");
  sub->add_option("--profile-metrics", options.profile_metrics,
                  "With --profile: sets, concepts or ncu metric names (as profile --metrics)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

void ApplyMeasureOptions(const RunOptions& options, v1::RunRequest* request) {
  v1::TimingOptions* timing = request->mutable_timing();
  timing->set_min_samples(options.min_samples);
  timing->set_max_seconds(options.max_seconds);
  timing->set_target_noise(options.target_noise);
  timing->set_hot_l2(options.hot_l2);
  timing->set_flush_l2(options.flush_l2);
  timing->set_fresh_inputs(options.fresh_inputs);
  timing->set_window_seconds(options.window_seconds);
  timing->set_burst_seconds(options.burst_seconds);
  timing->set_settle_max_seconds(options.settle_max_seconds);
  timing->set_solo_seconds(options.solo_seconds);
  timing->set_no_solo(options.no_solo);
  request->set_verify(options.verify);
  if (!options.regime.empty()) {
    v1::Regime regime = v1::REGIME_UNSPECIFIED;
    ParseEnumWord("--regime", options.regime, &regime);  // checked by the option's validator
    request->set_regime(regime);
  }
  request->set_unpaired(options.unpaired);
  if (!options.lock_sm_clock.empty() || !options.lock_mem_clock.empty()) {
    request->mutable_clocks()->set_mode(v1::CLOCK_MODE_LOCK);
    request->mutable_clocks()->set_sm_mhz(options.lock_sm_clock);
    request->mutable_clocks()->set_mem_mhz(options.lock_mem_clock);
  }
  request->set_rounds(options.rounds);
  request->set_order_seed(options.order_seed);
  request->set_device(options.device);
  request->set_profile(options.profile);
  for (const auto& m : options.profile_metrics) request->add_profile_metrics(m);
}

v1::RunRequest BuildRunRequest(const RunOptions& options) {
  v1::RunRequest request;
  for (const std::string& v : options.variants) request.add_variants(v);
  AddShapes(options, request.mutable_shapes());
  AddSizes(options, request.mutable_sizes());
  request.set_dtype(options.dtype);
  for (const std::string& t : options.tags) request.add_tags(t);
  ApplyMeasureOptions(options, &request);
  return request;
}

}  // namespace ablation::client
