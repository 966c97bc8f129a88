// The CUDA state of the one device a worker owns: context, stream, timing events, cuBLAS handles,
// workspace and L2 flush buffer, all made when the worker opens the device so that a broken
// device shows in Hello rather than mid-run; and the rule that tells a CUDA error the worker can
// go on after from a sticky one that ends the process.
#pragma once

#include <string>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "ablation/v1/ablation.pb.h"
#include "kernels/common/buffers.h"

namespace ablation::worker {

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
  /// error is sticky (fatal is set) and the process must end after replying.
  std::string Failed(const std::string& what);
  /// "" on success, else Failed(what: error).
  std::string Check(cudaError_t e, const std::string& what);

  // Everything below is valid only when present.
  bool present = false;
  std::string no_device_reason = "worker not opened";
  int index = -1;
  cudaDeviceProp prop{};
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  cublasHandle_t cublas = nullptr;
  cublasLtHandle_t cublaslt = nullptr;
  kernels::DeviceBuffer workspace;
  kernels::DeviceBuffer flush;  // 2x L2, overwritten before each cold sample
  unsigned flush_value = 0;     // changes on every flush (see the sampling loop)

  bool fatal = false;  // a sticky CUDA error: the context is unusable
  std::string fatal_error;

 private:
  std::string CreateResources();
};

}  // namespace ablation::worker
