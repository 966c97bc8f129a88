#include "server/worker/bandwidth.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

namespace ablation::worker {
namespace {

__global__ void CopyWords(const uint4* __restrict__ src, uint4* __restrict__ dst, size_t words) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < words;
       i += size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

std::string Text(const char* what, cudaError_t e) {
  cudaGetLastError();
  return std::string(what) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
}

}  // namespace

std::string MeasureCopyBandwidth(size_t bytes, void* stream, double* bytes_per_second) {
  *bytes_per_second = 0;
  const size_t words = bytes / sizeof(uint4);
  if (words == 0) return "nothing to copy";
  const auto s = static_cast<cudaStream_t>(stream);
  void *src = nullptr, *dst = nullptr;
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  std::string err;
  cudaError_t e = cudaMalloc(&src, words * sizeof(uint4));
  if (e == cudaSuccess) e = cudaMalloc(&dst, words * sizeof(uint4));
  // Any values will do for a copy; written once so that no page is first touched while timed.
  if (e == cudaSuccess) e = cudaMemsetAsync(src, 0x5A, words * sizeof(uint4), s);
  if (e == cudaSuccess) e = cudaEventCreate(&e0);
  if (e == cudaSuccess) e = cudaEventCreate(&e1);
  int sms = 0;
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  std::vector<float> ms;
  const unsigned blocks = unsigned(std::max(sms, 1) * 8);
  for (int i = 0; i < 23 && e == cudaSuccess; ++i) {
    e = cudaEventRecord(e0, s);
    CopyWords<<<blocks, 256, 0, s>>>(static_cast<const uint4*>(src), static_cast<uint4*>(dst),
                                     words);
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaEventRecord(e1, s);
    if (e == cudaSuccess) e = cudaEventSynchronize(e1);
    float t = 0;
    if (e == cudaSuccess) e = cudaEventElapsedTime(&t, e0, e1);
    if (e == cudaSuccess && i >= 3) ms.push_back(t);
  }
  if (e != cudaSuccess) err = Text("measuring the copy bandwidth", e);
  if (e0 != nullptr) cudaEventDestroy(e0);
  if (e1 != nullptr) cudaEventDestroy(e1);
  if (src != nullptr) cudaFree(src);
  if (dst != nullptr) cudaFree(dst);
  if (!err.empty()) return err;
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  const double median_s = double(ms[ms.size() / 2]) * 1e-3;
  if (!(median_s > 0)) return "the copy took no time";
  *bytes_per_second = 2.0 * double(words * sizeof(uint4)) / median_s;
  return "";
}

}  // namespace ablation::worker
