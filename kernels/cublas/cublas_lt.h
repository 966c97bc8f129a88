// cuBLASLt as the library baselines launch it (cublas_gemm.cc), for the worker to choose and name
// their algorithms: the heuristic's candidates for a problem, and an algorithm's configuration in
// words. Two baselines per dtype: cublas_<dtype> launches the heuristic's first candidate, and
// cublas_<dtype>_best the candidate the worker timed fastest (GemmArgs::library_algo), since
// cuBLAS's heuristic is not always its fastest algorithm. Host-only header (no CUDA types); the
// definitions are in cublas_gemm.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/registry.h"

namespace ablation::kernels {

/// Candidates asked of the heuristic (it returns at most this many; cuBLASLt 13 returns 8 to 16
/// for bf16 at 4096^3 on Hopper).
inline constexpr int kLtCandidates = 16;
/// sizeof(cublasLtMatmulAlgo_t): the opaque algorithm, stored and sent as these bytes.
inline constexpr size_t kLtAlgoBytes = 64;

/// What cuBLASLt's configuration attributes say of one algorithm (cublasLtMatmulAlgoConfig-
/// GetAttribute); ids as cuBLASLt numbers them, named by lt_names.h.
struct LtAlgoConfig {
  int32_t algo_id = -1;
  uint32_t tile = 0;
  uint32_t stages = 0;
  int32_t split_k = 1;
  uint32_t reduction = 0;
  uint32_t swizzle = 0;
  uint32_t custom = 0;
  uint16_t cluster = 0;
  /// "algo 66, tile 256x128, stages 64x4, split-K 1, reduction 0, swizzle 0, custom 0, cluster
  /// 1x2x1" (a name left out where cuBLASLt leaves the id undefined).
  std::string Describe() const;
};

struct LtCandidate {
  std::string algo;  ///< kLtAlgoBytes of cublasLtMatmulAlgo_t
  LtAlgoConfig config;
  uint64_t workspace_bytes = 0;
  float waves = 0;  ///< the heuristic's waves count
};

/// The heuristic's candidates for the problem of `args`, with the descriptors, preferences and
/// workspace the library entry of that dtype launches with, in the heuristic's order. "" and
/// *out filled; or why not (cuBLASLt offers none: the heuristic baseline then launches
/// cublasGemmEx, which has kernels of its own for such problems).
std::string LtCandidates(const GemmArgs& args, std::vector<LtCandidate>* out);

/// The configuration of an algorithm (kLtAlgoBytes bytes, as LtCandidate::algo).
LtAlgoConfig LtConfigOf(const std::string& algo);

/// True for the entries that launch a chosen algorithm (cublas_<dtype>_best): they need
/// GemmArgs::library_algo, which the worker fills from the daemon's stored choice or its own
/// timing of the candidates.
bool LaunchesChosenAlgo(const Variant& v);

}  // namespace ablation::kernels
