// The CUDA state of the one device a worker owns: context, stream, the timing loop's events,
// probes and gate, cuBLAS handles, workspace and L2 flush buffer, all made when the worker opens
// the device so that a broken device shows in Hello rather than mid-run; and the rule that tells a
// CUDA error the worker can go on after from a sticky one that ends the process.
#pragma once

#include <string>
#include <vector>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "ablation/v1/ablation.pb.h"
#include "kernels/common/buffers.h"
#include "kernels/registry.h"
#include "server/protocol/clocks.h"

namespace ablation::worker {

/// Why cudaGetDeviceCount failed, in the words a reader can act on: "no NVIDIA driver on this
/// machine (libcuda.so.1 cannot be loaded: ...)" where the runtime says "insufficient driver" only
/// because there is none, else the runtime's own text.
std::string NoDriverReason(cudaError_t e);

struct Device {
  Device() = default;
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  /// Opens device `index`, or sets no_device_reason to why not ("no CUDA device: ...", "no
  /// usable CUDA device N: <step>: <error>"). Returns the number of devices CUDA sees.
  int Open(int index);

  /// The identity Hello reports (UUID as nvidia-smi prints it, versions, memory, L2, smem).
  void Describe(::ablation::v1::DeviceIdentity* id) const;

  /// Builds the error text of a failed step and finds out whether the context is still usable:
  /// cudaGetLastError clears a non-sticky error; if a device synchronisation still fails, the
  /// error is sticky (fatal is set) and the process must end after replying. Opens the sampling
  /// gates first, so that the synchronisation never waits on a batch held behind one.
  std::string Failed(const std::string& what);
  /// "" on success, else Failed(what: error).
  std::string Check(cudaError_t e, const std::string& what);
  /// Enqueues the cold sample's L2 flush on `stream` (l2_flush.h: the flush buffer written with a
  /// value that changes every time, then discarded from the L2, so no dirty line of it is left for
  /// the sample to write back). "" or Failed(what: error).
  std::string FlushL2(const std::string& what);

  // Everything below is valid only when present.
  bool present = false;
  std::string no_device_reason = "worker not opened";
  int index = -1;
  cudaDeviceProp prop{};
  int max_sm_khz = 0;  // cudaDevAttrClockRate: the maximum SM clock, what low-clock is against
  // What the device holds of a persistent grid at once (the sm90 family's plans name their builds
  // with it; kernels/sm90/sm90_plan.h).
  kernels::Residency residency;
  /// Device memory's bandwidth as the worker's copy kernel measured it (bandwidth.h), bytes per
  /// second, under the clock policy `bandwidth_policy` ("": not measured yet; measure.cc measures
  /// it at the first window under each policy); 0 where it could not be measured.
  double bandwidth = 0;
  std::string bandwidth_policy;
  cudaStream_t stream = nullptr;
  // Batches of samples (sample_batch.h), in kBatchSlots slots: per slot two events and two clock
  // probes per sample, the event after its last work, and the gate the batch waits behind while
  // the host enqueues it.
  std::vector<cudaEvent_t> sample_events;  // 2 * kMaxBatch per slot
  std::vector<cudaEvent_t> batch_done;     // one per slot (no timing)
  kernels::DeviceBuffer probes;  // protocol::ClockProbe[2 * kMaxBatch] per slot, by the probes
  protocol::ClockProbe* probes_host = nullptr;  // pinned, the same, read back once per batch
  volatile int* gate = nullptr;  // pinned and mapped, per slot s: [2s] open, [2s+1] timed out
  volatile int* gate_device = nullptr;  // the same, as the device addresses it
  cublasHandle_t cublas = nullptr;
  cublasLtHandle_t cublaslt = nullptr;
  kernels::DeviceBuffer workspace;
  kernels::DeviceBuffer flush;  // 2x L2, overwritten then discarded before each cold sample
  unsigned flush_value = 0;     // changes on every flush (FlushL2)

  bool fatal = false;  // a sticky CUDA error: the context is unusable
  std::string fatal_error;

 private:
  std::string CreateResources();
};

}  // namespace ablation::worker
