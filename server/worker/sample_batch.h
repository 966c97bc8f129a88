// Samples queued back to back: a batch of samples enqueued behind a closed gate, each between its
// own pair of events and clock probes, then one wait for the whole batch. The samples rotate
// through input sets (l2_rotation.h); with a flush, each sample gets the L2 flush first. A batch
// goes through one of kBatchSlots slots (sample_plan.h), each with its own events, probes and
// gate, so that the next batch can be enqueued while the one before runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "server/worker/device.h"
#include "server/worker/variant_lookup.h"

namespace ablation::worker {

struct BatchSample {
  float ms = 0;       ///< between the sample's events
  double sm_mhz = 0;  ///< EffectiveSmMhz of the probes around it; NaN where unusable
};

/// Enqueues `count` (1..kMaxBatch) samples of `r` in slot `slot`, sample s on
/// sets[(first + s) % sets.size()]:
///   gate | per sample: [L2 flush] probe, event, launch, event, probe | copy the probes back |
///   the slot's done event
/// then opens the gate (the whole batch is enqueued before its first sample runs) and returns.
/// The slot must have been collected since it was last enqueued.
std::string EnqueueBatch(Device& d, const Ready& r, const std::vector<kernels::GemmArgs>& sets,
                         int64_t first, int count, bool flush, int slot);

/// Waits for the batch of `count` samples in `slot` and reads it: "" and *out filled, or the
/// error. *gate_timed_out is set when the gate gave up before the host had enqueued the batch:
/// its samples may then hold host time, and the caller drops them.
std::string CollectBatch(Device& d, int slot, int count, std::vector<BatchSample>* out,
                         bool* gate_timed_out);

}  // namespace ablation::worker
