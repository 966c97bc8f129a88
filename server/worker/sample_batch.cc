#include "server/worker/sample_batch.h"

#include <atomic>

#include "server/protocol/clocks.h"
#include "server/worker/launch.h"
#include "server/worker/sample_plan.h"
#include "server/worker/timing_kernels.h"

namespace ablation::worker {

namespace k = ::ablation::kernels;

namespace {

/// How long the gate waits for the host to enqueue a batch. Enqueueing kMaxBatch samples takes
/// well under a millisecond; only a host held up for this long, or a queue too short for the
/// batch (the host then blocks behind the gate), reaches it.
constexpr uint64_t kGateTimeoutNs = 500'000'000;

std::string CheckSlot(int slot, int count) {
  if (slot < 0 || slot >= kBatchSlots || count < 1 || count > kMaxBatch) {
    return "internal error: a batch of " + std::to_string(count) + " samples in slot " +
           std::to_string(slot);
  }
  return "";
}

}  // namespace

std::string EnqueueBatch(Device& d, const std::vector<WindowMember>& members, int64_t first,
                         const std::vector<int>& who, bool flush, int slot, int* failed_member,
                         const AfterSample& after_sample) {
  *failed_member = -1;
  const int count = int(who.size());
  std::string err = CheckSlot(slot, count);
  if (!err.empty()) return err;
  if (members.empty()) return "internal error: a window without variants";
  for (const WindowMember& m : members)
    if (m.sets.empty()) return "internal error: no input sets for " + m.r.variant->name;
  // The slot's own events, probes and gate: the other slot's batch may be running meanwhile.
  cudaEvent_t* events = d.sample_events.data() + size_t(slot) * 2 * kMaxBatch;
  auto* probes = static_cast<protocol::ClockProbe*>(d.probes.data()) + size_t(slot) * 2 * kMaxBatch;
  volatile int* gate = d.gate + 2 * slot;
  gate[0] = 0;
  gate[1] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  err = EnqueueGate(d.stream, d.gate_device + 2 * slot, kGateTimeoutNs);
  if (!err.empty()) return d.Failed(err);  // Failed opens the gates
  // One probe before the first sample, then one after each: the probe that ends a sample starts
  // the next, so that between two launches there is one probe kernel, not two (the GPU idles
  // less between samples, as in a loop of launches back to back).
  if (!(err = EnqueueProbe(d.stream, probes)).empty()) return d.Failed(err);
  for (int s = 0; s < count; ++s) {
    // Outside the events: the sample starts with none of its data in L2, and no dirty line of
    // the flush's own to write back while it runs (l2_flush.h).
    if (flush && !(err = d.FlushL2("L2 flush")).empty()) return err;
    err = d.Check(cudaEventRecord(events[2 * s], d.stream), "cudaEventRecord");
    if (!err.empty()) return err;
    const int64_t g = first + s;
    const size_t m_index = size_t(who[size_t(s)]);
    if (m_index >= members.size()) return "internal error: a sample of no variant";
    const WindowMember& m = members[m_index];
    if (!(err = LaunchChecked(d, m.r, m.sets[size_t(g % int64_t(m.sets.size()))])).empty()) {
      *failed_member = int(m_index);
      return err;
    }
    err = d.Check(cudaEventRecord(events[2 * s + 1], d.stream), "cudaEventRecord");
    if (!err.empty()) return err;
    if (after_sample && !(err = after_sample(s)).empty()) return err;
    if (!(err = EnqueueProbe(d.stream, probes + s + 1)).empty()) return d.Failed(err);
  }
  protocol::ClockProbe* host = d.probes_host + size_t(slot) * 2 * kMaxBatch;
  err = d.Check(cudaMemcpyAsync(host, probes, (size_t(count) + 1) * sizeof(protocol::ClockProbe),
                                cudaMemcpyDeviceToHost, d.stream),
                "copying the clock probes");
  if (!err.empty()) return err;
  err = d.Check(cudaEventRecord(d.batch_done[size_t(slot)], d.stream), "cudaEventRecord");
  if (!err.empty()) return err;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  gate[0] = 1;
  return "";
}

std::string CollectBatch(Device& d, int slot, int count, std::vector<BatchSample>* out,
                         bool* gate_timed_out) {
  out->clear();
  *gate_timed_out = false;
  std::string err = CheckSlot(slot, count);
  if (!err.empty()) return err;
  err = d.Check(cudaEventSynchronize(d.batch_done[size_t(slot)]), "waiting for a batch of samples");
  if (!err.empty()) return err;
  *gate_timed_out = d.gate[2 * slot + 1] != 0;
  const cudaEvent_t* events = d.sample_events.data() + size_t(slot) * 2 * kMaxBatch;
  const protocol::ClockProbe* host = d.probes_host + size_t(slot) * 2 * kMaxBatch;
  out->resize(size_t(count));
  for (int s = 0; s < count; ++s) {
    BatchSample& x = (*out)[size_t(s)];
    err = d.Check(cudaEventElapsedTime(&x.ms, events[2 * s], events[2 * s + 1]),
                  "cudaEventElapsedTime");
    if (!err.empty()) return err;
    x.sm_mhz = protocol::EffectiveSmMhz(host[s], host[s + 1]);
  }
  return "";
}

}  // namespace ablation::worker
