// How a measurement takes its samples, as pure functions so that the CPU tests pin them down:
// how the L2 is kept cold (rotating through copies of the inputs, or a flush per sample, or not
// at all) and how many samples are queued back to back between two synchronisations.
#pragma once

#include <cstdint>
#include <string>

#include "server/worker/sampling.h"

namespace ablation::worker {

enum class L2Method {
  kRotate,  ///< samples rotate through copies of the inputs that together exceed twice the L2
  kFlush,   ///< the L2 is overwritten before each sample, and each sample is synchronised
  kHot,     ///< neither: a sample finds what the previous one left in L2
};

struct L2Plan {
  L2Method method = L2Method::kRotate;
  int64_t copies = 1;  ///< input sets the samples rotate through (1 unless kRotate)
  std::string note;    ///< why the rotation fell back to the flush, for the log; else ""
};

/// What the task's options ask for, before memory has a say: hot_l2 wins over flush_l2 (neither
/// rotates nor flushes), flush_l2 asks for the flush, and neither for the rotation.
L2Method RequestedL2Method(bool hot_l2, bool flush_l2);

/// Share of the free device memory the extra input copies may take: the rest stays for the
/// libraries and for whatever else runs on the device.
inline constexpr double kRotationMemoryShare = 0.25;

/// RequestedL2Method; where that is the rotation, the samples rotate through the fewest copies of
/// the inputs that together exceed twice the L2, and at least two (a sample never reads the inputs
/// the previous one read):
///   copies = max(2, floor(2 * l2_bytes / set_bytes) + 1)
/// where set_bytes is what one copy of A and B occupies. The copies beyond the first (which the
/// measurement has anyway) must fit in kRotationMemoryShare of free_bytes; where they do not, the
/// plan falls back to kFlush and says why.
L2Plan PlanL2(bool hot_l2, bool flush_l2, double set_bytes, double l2_bytes, double free_bytes);

/// The warm-up policy. A GPU whose last work of this worker ended at most kWarmIdleSeconds ago
/// is warm: its clocks are up and the measurement before kept them there, so its warm-up is
/// warmup_count launches and kWarmGpuWarmupSeconds of wall time (warmup_seconds where that is
/// shorter). Any other GPU (the worker's first task, or after a pause: a run's start, a profile,
/// the daemon's own delays) gets the full warm-up, warmup_count launches and warmup_seconds. Both
/// also end at max_seconds (a kernel of seconds per launch). The count is what settles a
/// variant's first launches (module loading, cuBLAS's heuristics); the time is what the clocks
/// need. Each sample's clock (clocks.h) shows whether that held: low_clock_samples.
inline constexpr double kWarmIdleSeconds = 0.05;
inline constexpr double kWarmGpuWarmupSeconds = 0.005;

struct WarmupPlan {
  int launches = 0;    ///< at least this many
  double seconds = 0;  ///< and at least this much wall time
  bool warm = false;   ///< the short warm-up of a warm GPU
};

/// The warm-up for options `o` on a GPU idle for `idle_seconds` since its last work (negative:
/// none yet, a cold start).
WarmupPlan PlanWarmup(const SamplingOptions& o, double idle_seconds);

/// The most samples queued between two synchronisations: each has two events and two probes, and
/// the whole batch is enqueued behind a closed gate (timing_kernels.h), so the device's queue of
/// pending work must hold it.
inline constexpr int kMaxBatch = 32;
/// GPU time a batch aims at: the stopping rule runs between batches, so this bounds how far past
/// a reached target (or min_seconds) a measurement runs.
inline constexpr double kBatchTargetMs = 50;

/// Samples to queue in the next batch: as many as fill kBatchTargetMs at the mean sample so far
/// (`estimate_ms` before the first sample), within [1, max_batch], and never more than the
/// max_samples or the max_seconds of GPU time left allow (at least 1 while any is left; 0 once
/// max_samples are taken).
int NextBatchSize(const RunningStats& taken, const SamplingOptions& options, double estimate_ms,
                  int max_batch);

/// Batches go through kBatchSlots slots, each with its own events, probes and gate, so that the
/// next batch is enqueued (behind its own closed gate) while the one before runs, and the GPU
/// does not wait for the host between them.
inline constexpr int kBatchSlots = 2;
/// Margin on the GPU time of a batch in flight when predicting what it adds: samples that turn
/// out longer (a clock drop) must not make the prediction below wrong.
inline constexpr double kAheadMargin = 1.25;

/// Whether the next batch may be enqueued before the `pending` samples in flight are collected:
/// only when the stopping rule cannot stop after them. With those samples counted at kAheadMargin
/// times the mean so far (`estimate_ms` before the first), the measurement is still short of
/// min_samples or of min_seconds of GPU time, and short of max_samples, max_seconds and the
/// wall-clock cap (`wall_seconds` of the loop so far). So a measurement takes exactly the batches
/// it would take one at a time, except where a batch in flight ran far longer than the margin.
bool CanEnqueueAhead(const RunningStats& taken, int pending, const SamplingOptions& options,
                     double estimate_ms, double wall_seconds);

/// NextBatchSize for the batch after the `pending` samples in flight, as if they had been taken
/// at kAheadMargin times the mean so far (so it never plans past max_samples or max_seconds).
int NextBatchSizeAhead(const RunningStats& taken, int pending, const SamplingOptions& options,
                       double estimate_ms, int max_batch);

}  // namespace ablation::worker
