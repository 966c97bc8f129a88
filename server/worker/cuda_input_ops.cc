#include "server/worker/cuda_input_ops.h"

#include "kernels/common/buffers.h"
#include "server/worker/diagnostics.h"

namespace ablation::worker {

namespace k = ::ablation::kernels;

namespace {

class CudaBlock final : public DeviceBlock {
 public:
  explicit CudaBlock(k::DeviceBuffer buffer) : buffer_(std::move(buffer)) {}
  void* data() const override { return buffer_.data(); }
  size_t bytes() const override { return buffer_.bytes(); }

 private:
  k::DeviceBuffer buffer_;
};

}  // namespace

std::string CudaInputOps::MemoryInfo(size_t* free_bytes, size_t* total_bytes) {
  return d_.Check(cudaMemGetInfo(free_bytes, total_bytes), "cudaMemGetInfo");
}

std::string CudaInputOps::Allocate(size_t bytes, std::unique_ptr<DeviceBlock>* out) {
  k::DeviceBuffer buffer;
  std::string err = buffer.Allocate(bytes);
  if (!err.empty()) {
    cudaGetLastError();  // an out-of-memory error is not sticky; the caller decides what it is
    return err;
  }
  *out = std::make_unique<CudaBlock>(std::move(buffer));
  return "";
}

std::string CudaInputOps::Fill(void* dst, size_t count, k::DType dtype, uint64_t seed) {
  return k::FillRandom(dst, count, dtype, seed, d_.stream);
}

std::string CudaInputOps::Transpose(const void* src, void* dst, int64_t rows, int64_t cols,
                                    k::DType dtype) {
  return k::Transpose(src, dst, rows, cols, dtype, d_.stream);
}

std::string CudaInputOps::Poison(void* dst, size_t count, k::DType dtype) {
  return k::Poison(dst, count, dtype, d_.stream);
}

std::string CudaInputOps::Synchronize(const std::string& what) {
  return d_.Check(cudaStreamSynchronize(d_.stream), what);
}

std::string CudaInputOps::Failed(const std::string& what) { return d_.Failed(what); }

}  // namespace ablation::worker
