// Samples queued back to back: a batch of samples enqueued behind a closed gate, each between its
// own pair of events, between clock probes, then one wait for the whole batch. A window
// interleaves its variants: cycle c launches each once, in an order of its own (CycleOrder,
// sample_plan.h). Every launch rotates through its member's input sets (l2_rotation.h) by its
// sample's index g, so two consecutive launches never read the same set; with a flush, each sample
// gets the L2 flush first. A batch goes through one of kBatchSlots slots (sample_plan.h), each with
// its own events, probes and gate, so that the next batch can be enqueued while the one before
// runs.
#pragma once

#include <cstdint>
#include <functional>
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

/// One variant of a window: resolved, and the input sets its launches rotate through.
struct WindowMember {
  Ready r;
  std::vector<kernels::GemmArgs> sets;
};

/// Enqueues who.size() (1..kMaxBatch) samples in slot `slot`, the window's samples first ..
/// first + count - 1, sample first + s launching members[who[s]] on its sets[g % sets.size()]:
///   gate, probe | per sample: [L2 flush] event, launch, event, probe | copy the probes back |
///   the slot's done event
/// (a sample's clock is read from the probe before it and the one after), then opens the gate
/// (the whole batch is enqueued before its first sample runs) and returns. The slot must have
/// been collected since it was last enqueued. On a launch error *failed_member is the index of
/// the member whose launch it was (else -1).
/// `after_sample`, where given, is called for each sample s right after its end event is
/// enqueued (outside the timed interval): a guarded window enqueues the check of that launch's
/// output there, before any later launch overwrites it.
using AfterSample = std::function<std::string(int s)>;
std::string EnqueueBatch(Device& d, const std::vector<WindowMember>& members, int64_t first,
                         const std::vector<int>& who, bool flush, int slot, int* failed_member,
                         const AfterSample& after_sample = nullptr);

/// Waits for the batch of `count` samples in `slot` and reads it: "" and *out filled, or the
/// error. *gate_timed_out is set when the gate gave up before the host had enqueued the batch:
/// its samples may then hold host time, and the caller drops them.
std::string CollectBatch(Device& d, int slot, int count, std::vector<BatchSample>* out,
                         bool* gate_timed_out);

}  // namespace ablation::worker
