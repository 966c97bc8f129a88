#include "kernels/sm90/sm90_tma.h"

#include <algorithm>

#include <cudaTypedefs.h>
#include <cuda_runtime.h>

namespace ablation::kernels::sm90 {
namespace {

PFN_cuTensorMapEncodeTiled_v12000 EncodeFn() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                         &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
      return static_cast<PFN_cuTensorMapEncodeTiled_v12000>(nullptr);
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

}  // namespace

std::string EncodeKMajorBf16(CUtensorMap* map, const void* base, int64_t rows, int64_t k,
                             int box_rows) {
  return EncodeKMajor(map, base, rows, k, box_rows, 2);
}

std::string EncodeKMajor(CUtensorMap* map, const void* base, int64_t rows, int64_t k, int box_rows,
                         int element_bytes) {
  PFN_cuTensorMapEncodeTiled_v12000 encode = EncodeFn();
  if (encode == nullptr) {
    return "sm90 family: the driver does not provide cuTensorMapEncodeTiled (needs CUDA 12.0+)";
  }
  const cuuint64_t dims[2] = {cuuint64_t(k), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(k) * cuuint64_t(element_bytes)};  // between rows
  const cuuint32_t box[2] = {cuuint32_t(128 / element_bytes), cuuint32_t(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  // e4m3 travels as bytes: TMA only copies it (zeros past the matrix are zero bytes, e4m3's +0).
  const CUtensorMapDataType type =
      element_bytes == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  const CUresult r =
      encode(map, type, 2, const_cast<void*>(base), dims, strides, box, element_strides,
             CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    return "sm90 family: cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(r)) +
           ") for a " + std::to_string(rows) + " x " + std::to_string(k) + " operand";
  }
  return "";
}

const std::string& Sm90DeviceError() {
  static const std::string error = []() -> std::string {
    int dev = 0, major = 0, minor = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
      return "sm90 family: cannot read the device's compute capability";
    }
    if (major == 9 && minor == 0) return "";
    return "sm90 family: needs a compute capability 9.0 GPU (Hopper; built for sm_90a only), "
           "this device is " +
           std::to_string(major) + "." + std::to_string(minor);
  }();
  return error;
}

int Sm90SmCount() {
  static const int count = [] {
    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
      return 0;
    }
    return sms;
  }();
  return count;
}

std::string StreamKWorkspace(int64_t partial_bytes, int64_t flags, void** partials,
                             uint32_t** flag_words, uint32_t* epoch) {
  // One allocation: the flags first, then the partial sums (256-byte aligned). The layout is the
  // allocation's, not the request's: a smaller request must not place partials over flags that
  // a larger one reads later.
  static void* base = nullptr;
  static int64_t have_flag_bytes = 0, have_bytes = 0;
  static uint32_t last_epoch = 0;
  // Zero flags never equal a launch's epoch (epochs start at 1). The launch may go to another
  // stream: the zeros land before it.
  auto clear_flags = [&]() -> std::string {
    if (cudaError_t e = cudaMemset(base, 0, size_t(have_flag_bytes)); e != cudaSuccess) {
      return std::string("sm90 stream-K workspace: cudaMemset: ") + cudaGetErrorString(e);
    }
    if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) {
      return std::string("sm90 stream-K workspace: ") + cudaGetErrorString(e);
    }
    return "";
  };
  const int64_t flag_bytes = (flags * 4 + 255) / 256 * 256;
  if (flag_bytes > have_flag_bytes || partial_bytes > have_bytes) {
    const int64_t want_flag_bytes = std::max(flag_bytes, have_flag_bytes);
    const int64_t want_bytes = std::max(partial_bytes, have_bytes);
    if (base != nullptr) cudaFree(base);
    base = nullptr;
    have_flag_bytes = have_bytes = 0;
    if (cudaError_t e = cudaMalloc(&base, size_t(want_flag_bytes + want_bytes)); e != cudaSuccess) {
      return std::string("sm90 stream-K workspace: cudaMalloc of ") +
             std::to_string(want_flag_bytes + want_bytes) + " bytes: " + cudaGetErrorString(e);
    }
    have_flag_bytes = want_flag_bytes;
    have_bytes = want_bytes;
    if (std::string e = clear_flags(); !e.empty()) return e;
    last_epoch = 0;
  }
  if (++last_epoch == 0) {  // after 2^32 launches: clear the flags rather than reuse an epoch
    if (std::string e = clear_flags(); !e.empty()) return e;
    last_epoch = 1;
  }
  *epoch = last_epoch;
  *flag_words = static_cast<uint32_t*>(base);
  *partials = static_cast<uint8_t*>(base) + have_flag_bytes;
  return "";
}

}  // namespace ablation::kernels::sm90
