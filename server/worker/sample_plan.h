// How a window takes its samples, as pure functions so that the CPU tests pin them down: how the
// L2 is kept cold (rotating through copies of the inputs, or a flush per sample, or not at all),
// where a window of interleaved variants ends, and how many samples are queued back to back
// between two synchronisations.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "server/protocol/sampling.h"

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

/// The method in words, for the worker's log: "cold (rotated)", "cold (flushed)", "hot".
const char* L2MethodText(L2Method m);

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

/// The most samples queued between two synchronisations: each has two events and two probes, and
/// the whole batch is enqueued behind a closed gate (timing_kernels.h), so the device's queue of
/// pending work must hold it.
inline constexpr int kMaxBatch = 32;
/// GPU time a batch aims at: the window's end is checked between batches, and a batch is never
/// planned past it (WindowBatchSize), so this bounds how long the host waits between checks.
inline constexpr double kBatchTargetMs = 50;

/// Batches go through kBatchSlots slots, each with its own events, probes and gate, so that the
/// next batch is enqueued (behind its own closed gate) while the one before runs, and the GPU
/// does not wait for the host between them.
inline constexpr int kBatchSlots = 2;
/// Margin on the GPU time of a batch in flight when predicting what it adds: samples that turn
/// out longer (a clock drop) must not make the window overshoot by a batch.
inline constexpr double kAheadMargin = 1.25;

/// Where a window ends (MeasureTask): after the first whole cycle at which the sampling loop has
/// run window_ms of wall time and at least min_cycles cycles were taken, or at max_cycles. Wall
/// time, because that is what the power controller averages over; the samples' own GPU time is
/// less by the probes and events around each (most of it for a kernel of microseconds).
struct WindowSpec {
  int members = 1;       ///< variants interleaved; a cycle launches each once
  double window_ms = 0;  ///< wall time of the sampling loop
  int64_t min_cycles = 1;
  int64_t max_cycles = 0;  ///< 0: no cap
};

/// True once `cycles` whole cycles, taken in `elapsed_ms` of the loop's wall time, end the window.
bool WindowDone(const WindowSpec& w, int64_t cycles, double elapsed_ms);

/// Whole cycles still to take after `cycles` in `elapsed_ms`, at `cycle_ms` each (<= 0 or not
/// finite: unknown, then 1): 0 once done; else at least 1, enough for both the time and
/// min_cycles, never past max_cycles.
int64_t CyclesLeft(const WindowSpec& w, int64_t cycles, double elapsed_ms, double cycle_ms);

/// Samples in the next batch, starting at sample `next` of the window (at cycle position next %
/// members), with `cycles_left` whole cycles (CyclesLeft, counted from the cycle of `next`) still
/// planned at `sample_ms` each (<= 0: unknown). A cycle that fits in kMaxBatch goes whole: as many
/// whole cycles as fill kBatchTargetMs (at least one, at most cycles_left); a longer cycle goes in
/// pieces of kMaxBatch, the last one what is left of it. 0 when nothing is left.
int WindowBatchSize(int members, int64_t next, int64_t cycles_left, double sample_ms);

/// The order in which cycle `cycle` of a window launches its `members` variants: a permutation
/// shuffled (Fisher-Yates on SplitMix64) from `seed` and the cycle, a fresh one each cycle. Why:
/// under a power cap the clock a kernel starts at depends on the kernel just before it (a
/// hungrier predecessor leaves a lower clock); in a fixed order every sample of a variant would
/// follow the same neighbour and its pair's ratio would carry that neighbour's bias; shuffled,
/// every variant follows each other one alike over the window. Pure and the same everywhere,
/// so a window's order can be told again from its seed.
std::vector<int> CycleOrder(int members, uint64_t seed, int64_t cycle);

}  // namespace ablation::worker
