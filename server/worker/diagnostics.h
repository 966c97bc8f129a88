// How the worker words what happened: its log lines on stderr, and the texts of CUDA errors,
// cuBLAS statuses and shapes that go into replies (the daemon stores them as they are).
#pragma once

#include <string>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "ablation/v1/ablation.pb.h"

namespace ablation::worker {

/// One line on stderr, "ablation-worker[pid]: text".
void Log(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

/// "cudaErrorMemoryAllocation: out of memory".
std::string CudaText(cudaError_t e);

/// "CUBLAS_STATUS_NOT_INITIALIZED: the library was not initialized".
std::string CublasText(cublasStatus_t s);

/// "MxNxK".
std::string ShapeText(const ::ablation::v1::Shape& s);

}  // namespace ablation::worker
