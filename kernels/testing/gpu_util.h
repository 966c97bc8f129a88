// Helpers of the kernels' GPU tests and timing tool: inputs for a problem, one checked launch.
#pragma once

#include <dlfcn.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "kernels/common/buffers.h"
#include "kernels/registry.h"

namespace ablation::kernels::testing {

/// "" if a CUDA device is usable, else "no CUDA device: <reason>". The runtime calls a machine
/// with no NVIDIA driver at all one with an "insufficient" driver: that case is named for what it
/// is, as the worker does (server/worker/device.h NoDriverReason).
inline std::string NoDeviceReason() {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice) {
    if (void* driver = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL)) {
      ::dlclose(driver);
    } else {
      const char* why = ::dlerror();
      return std::string(
                 "no CUDA device: no NVIDIA driver on this machine (libcuda.so.1 cannot be "
                 "loaded: ") +
             (why ? why : "not found") + ")";
    }
  }
  if (e != cudaSuccess) return std::string("no CUDA device: ") + cudaGetErrorString(e);
  if (count == 0) return "no CUDA device: cudaGetDeviceCount returned 0";
  return "";
}

/// True when the current device is compute capability 9.0 (what the sm90 family runs on).
inline bool IsSm90() {
  int dev = 0, major = 0, minor = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  return major == 9 && minor == 0;
}

/// The timing tools' measurement: 3 warm-up launches (also the one-time shared-memory opt-ins and
/// plans), then `samples` launches, each after a write of `flush_bytes` to `flush` that evicts
/// the inputs from L2 and timed by CUDA events around it; the samples in ms, sorted. `launch`
/// returns "" or what failed; empty with `error` set when a launch or the device failed.
template <class Launch>
std::vector<float> EventSamplesMs(Launch&& launch, void* flush, size_t flush_bytes, int samples,
                                  std::string* error) {
  for (int i = 0; i < 3; ++i) {
    if (std::string e = launch(); !e.empty()) {
      *error = e;
      return {};
    }
  }
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<float> ms;
  for (int i = 0; i < samples && error->empty(); ++i) {
    cudaMemsetAsync(flush, i & 0xFF, flush_bytes);
    cudaEventRecord(start);
    *error = launch();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float t = 0;
    cudaEventElapsedTime(&t, start, stop);
    ms.push_back(t);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess && error->empty()) {
    *error = cudaGetErrorString(e);
  }
  if (!error->empty()) return {};
  std::sort(ms.begin(), ms.end());
  return ms;
}

/// EventSamplesMs's median in ms; -1 with `error` set when a launch or the device failed.
template <class Launch>
double MedianEventMs(Launch&& launch, void* flush, size_t flush_bytes, int samples,
                     std::string* error) {
  const std::vector<float> ms =
      EventSamplesMs(std::forward<Launch>(launch), flush, flush_bytes, samples, error);
  if (!error->empty() || ms.empty()) return -1;
  return ms[ms.size() / 2];
}

/// A, B (K x N), B^T (N x K) and C on the device for one problem; random inputs from `seed`.
struct GemmBuffers {
  Problem problem;
  DeviceBuffer a, b_kn, b_nk, c;

  std::string Init(const Problem& p, uint64_t seed) {
    problem = p;
    const size_t eb = size_t(ElementBytes(p.dtype));
    std::string e;
    if (!(e = a.Allocate(size_t(p.m * p.k) * eb)).empty()) return e;
    if (!(e = b_kn.Allocate(size_t(p.k * p.n) * eb)).empty()) return e;
    if (!(e = b_nk.Allocate(size_t(p.k * p.n) * eb)).empty()) return e;
    if (!(e = c.Allocate(size_t(p.m * p.n) * size_t(OutputBytes(p.dtype)))).empty()) return e;
    if (!(e = FillRandom(a.data(), size_t(p.m * p.k), p.dtype, seed)).empty()) return e;
    if (!(e = FillRandom(b_kn.data(), size_t(p.k * p.n), p.dtype, seed + 1)).empty()) return e;
    if (!(e = Transpose(b_kn.data(), b_nk.data(), p.k, p.n, p.dtype)).empty()) return e;
    if (cudaError_t ce = cudaDeviceSynchronize(); ce != cudaSuccess) return cudaGetErrorString(ce);
    return "";
  }

  GemmArgs Args(const Variant& v, void* cublas, cudaStream_t stream = nullptr) const {
    GemmArgs args;
    args.problem = problem;
    args.a = a.data();
    args.b = v.b_layout == BLayout::kKN ? b_kn.data() : b_nk.data();
    args.c = c.data();
    args.stream = stream;
    args.cublas = cublas;
    if (problem.dtype == DType::kFP8) (void)Fp8ScalePointers(&args.scale_a, &args.scale_b);
    return args;
  }
};

/// Poisons C, launches, synchronizes. "" or the error.
inline std::string CheckedLaunch(const Variant& v, const GemmBuffers& buf, void* cublas) {
  if (v.launch == nullptr) return v.name + ": no launcher bound";
  if (std::string e = v.can_implement(buf.problem); !e.empty()) return v.name + ": " + e;
  if (std::string e =
          Poison(buf.c.data(), size_t(buf.problem.m * buf.problem.n), buf.problem.dtype);
      !e.empty()) {
    return e;
  }
  if (std::string e = v.launch(buf.Args(v, cublas)); !e.empty()) return v.name + ": " + e;
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) {
    return v.name + ": " + cudaGetErrorString(e);
  }
  return "";
}

}  // namespace ablation::kernels::testing
