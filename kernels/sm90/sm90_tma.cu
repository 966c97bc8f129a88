#include "kernels/sm90/sm90_tma.h"

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
  PFN_cuTensorMapEncodeTiled_v12000 encode = EncodeFn();
  if (encode == nullptr) {
    return "sm90 family: the driver does not provide cuTensorMapEncodeTiled (needs CUDA 12.0+)";
  }
  const cuuint64_t dims[2] = {cuuint64_t(k), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(k) * 2};  // bytes between rows
  const cuuint32_t box[2] = {64, cuuint32_t(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult r =
      encode(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(base), dims, strides, box,
             element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
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

}  // namespace ablation::kernels::sm90
