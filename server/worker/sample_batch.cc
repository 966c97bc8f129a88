#include "server/worker/sample_batch.h"

#include <atomic>

#include "server/worker/clocks.h"
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

}  // namespace

std::string RunBatch(Device& d, const Ready& r, const std::vector<k::GemmArgs>& sets, int64_t first,
                     int count, bool flush, std::vector<BatchSample>* out, bool* gate_timed_out) {
  out->clear();
  *gate_timed_out = false;
  if (count < 1 || count > kMaxBatch || sets.empty()) {
    return "internal error: a batch of " + std::to_string(count) + " samples";
  }
  auto* probes = static_cast<ClockProbe*>(d.probes.data());
  d.gate[0] = 0;
  d.gate[1] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  std::string err = EnqueueGate(d.stream, d.gate_device, kGateTimeoutNs);
  if (!err.empty()) return d.Failed(err);  // Failed opens the gate
  for (int s = 0; s < count; ++s) {
    if (flush) {
      // Outside the events: the sample starts with none of its data in L2. The value changes
      // each time so no layer can treat the write as redundant.
      d.flush_value = (d.flush_value + 1) & 0xff;
      err = d.Check(cudaMemsetAsync(d.flush.data(), int(d.flush_value), d.flush.bytes(), d.stream),
                    "L2 flush");
      if (!err.empty()) return err;
    }
    if (!(err = EnqueueProbe(d.stream, probes + 2 * s)).empty()) return d.Failed(err);
    err = d.Check(cudaEventRecord(d.sample_events[2 * s], d.stream), "cudaEventRecord");
    if (!err.empty()) return err;
    if (!(err = LaunchChecked(d, r, sets[size_t((first + s) % int64_t(sets.size()))])).empty()) {
      return err;
    }
    err = d.Check(cudaEventRecord(d.sample_events[2 * s + 1], d.stream), "cudaEventRecord");
    if (!err.empty()) return err;
    if (!(err = EnqueueProbe(d.stream, probes + 2 * s + 1)).empty()) return d.Failed(err);
  }
  err = d.Check(cudaMemcpyAsync(d.probes_host, probes, 2 * size_t(count) * sizeof(ClockProbe),
                                cudaMemcpyDeviceToHost, d.stream),
                "copying the clock probes");
  if (!err.empty()) return err;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  d.gate[0] = 1;
  if (!(err = d.Check(cudaStreamSynchronize(d.stream), "waiting for a batch of samples")).empty()) {
    return err;
  }
  *gate_timed_out = d.gate[1] != 0;
  out->resize(size_t(count));
  for (int s = 0; s < count; ++s) {
    BatchSample& x = (*out)[size_t(s)];
    err = d.Check(cudaEventElapsedTime(&x.ms, d.sample_events[2 * s], d.sample_events[2 * s + 1]),
                  "cudaEventElapsedTime");
    if (!err.empty()) return err;
    x.sm_mhz = EffectiveSmMhz(d.probes_host[2 * s], d.probes_host[2 * s + 1]);
  }
  return "";
}

}  // namespace ablation::worker
