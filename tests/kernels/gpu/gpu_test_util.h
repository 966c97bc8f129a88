// What every GPU test of the kernels does with a launch: run it checked, with the handles and
// workspace the worker gives it, and read C back (as doubles to compare, or as bytes to compare
// bit for bit). A read that fails fails the test.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/testing/gpu_util.h"

namespace ablation::kernels::testing {

/// Poisons C, launches `v` with cuBLAS's and cuBLASLt's handles and the workspace the worker gives
/// (any may be null), synchronizes. "" or the error, named by the variant.
inline std::string LaunchLikeTheWorker(const Variant& v, const GemmBuffers& buf, void* cublas,
                                       void* cublaslt, const DeviceBuffer* workspace) {
  if (v.launch == nullptr) return v.name + ": no launcher bound";
  if (std::string e = v.can_implement(buf.problem); !e.empty()) return v.name + ": " + e;
  const Problem& p = buf.problem;
  if (std::string e = Poison(buf.c.data(), size_t(p.m * p.n), p.dtype); !e.empty()) return e;
  GemmArgs args = buf.Args(v, cublas);
  args.cublaslt = cublaslt;
  if (workspace != nullptr) {
    args.workspace = workspace->data();
    args.workspace_bytes = workspace->bytes();
  }
  if (std::string e = v.launch(args); !e.empty()) return v.name + ": " + e;
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) {
    return v.name + ": " + cudaGetErrorString(e);
  }
  return "";
}

/// C of `buf` as doubles.
inline std::vector<double> Output(const GemmBuffers& buf) {
  std::vector<double> out;
  EXPECT_EQ(CopyToHostAsDouble(buf.c.data(), size_t(buf.problem.m * buf.problem.n),
                               buf.problem.dtype, true, &out),
            "");
  return out;
}

/// C of `buf` as its bytes.
inline std::vector<uint8_t> RawOutput(const GemmBuffers& buf) {
  std::vector<uint8_t> raw(size_t(buf.problem.m * buf.problem.n) *
                           size_t(OutputBytes(buf.problem.dtype)));
  EXPECT_EQ(cudaMemcpy(raw.data(), buf.c.data(), raw.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  return raw;
}

}  // namespace ablation::kernels::testing
