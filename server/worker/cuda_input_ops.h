// The resident inputs' device work (resident_inputs.h) on the worker's device: cudaMalloc'd
// blocks, FillRandom, Transpose and Poison on its stream, and errors reported as every other step
// reports them (Device::Failed: cleared, and sticky ones found out).
#pragma once

#include <memory>
#include <string>

#include "server/worker/device.h"
#include "server/worker/resident_inputs.h"

namespace ablation::worker {

class CudaInputOps final : public InputOps {
 public:
  explicit CudaInputOps(Device& d) : d_(d) {}

  std::string MemoryInfo(size_t* free_bytes, size_t* total_bytes) override;
  std::string Allocate(size_t bytes, std::unique_ptr<DeviceBlock>* out) override;
  std::string Fill(void* dst, size_t count, kernels::DType dtype, uint64_t seed) override;
  std::string Transpose(const void* src, void* dst, int64_t rows, int64_t cols,
                        kernels::DType dtype) override;
  std::string Poison(void* dst, size_t count, kernels::DType dtype) override;
  std::string Synchronize(const std::string& what) override;
  std::string Failed(const std::string& what) override;

 private:
  Device& d_;
};

}  // namespace ablation::worker
