// Device buffers and the inputs/outputs of a checked or timed GEMM. Host-callable, CUDA-free
// header (the .cu holds the kernels); every function returns "" on success or the error text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/common/problem.h"

namespace ablation::kernels {

/// Owns one cudaMalloc'd allocation. Move-only.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  /// Allocates `bytes` (frees what it held). Returns "" or the CUDA error.
  std::string Allocate(size_t bytes);
  void* data() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

/// Fills `count` elements of `dtype` with deterministic random values from `seed`, never zeros
/// as a whole: floats uniform in [-1, 1) (rounded to the type), int8 uniform integers in [-8, 8],
/// fp8 e4m3 values of [-1, 1) times 448 (its dequantised values: times kFp8ScaleA or B).
/// Element i depends only on (seed, i), so the same seed gives the same matrix on any device.
std::string FillRandom(void* dst, size_t count, DType dtype, uint64_t seed, void* stream = nullptr);

/// Writes the poison pattern over an output of `count` elements (NaN for float outputs,
/// INT32_MIN for int8's int32 outputs), so unwritten elements show.
std::string Poison(void* dst, size_t count, DType dtype, void* stream = nullptr);

/// Copies a row-major rows x cols matrix `src` (input type of dtype) into dst transposed
/// (cols x rows, row-major): used to give B as N x K from the same logical K x N values.
std::string Transpose(const void* src, void* dst, int64_t rows, int64_t cols, DType dtype,
                      void* stream = nullptr);

/// Copies device elements to host as doubles (fp8 inputs: their e4m3 values, not dequantised).
/// `output` selects the output type of dtype (OutputBytes) instead of the input type.
std::string CopyToHostAsDouble(const void* src, size_t count, DType dtype, bool output,
                               std::vector<double>* out);

/// Device pointers to one float each holding kFp8ScaleA and kFp8ScaleB, the scales of every fp8
/// problem (GemmArgs::scale_a, scale_b); allocated on the current device at the first call and
/// kept for the process. "" or what failed.
std::string Fp8ScalePointers(const float** scale_a, const float** scale_b);

/// Host-side value of the poison pattern's check: true if the value is the poison of dtype's
/// output.
bool IsPoison(double value, DType dtype);

}  // namespace ablation::kernels
