#include "server/worker/diagnostics.h"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>

namespace ablation::worker {

void Log(const char* fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  // One fprintf per line: stderr is unbuffered, and the daemon forwards whole lines.
  std::fprintf(stderr, "ablation-worker[%d]: %s\n", int(::getpid()), buf);
}

std::string CudaText(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

std::string CublasText(cublasStatus_t s) {
  return std::string(cublasGetStatusName(s)) + ": " + cublasGetStatusString(s);
}

std::string ShapeText(const ::ablation::v1::Shape& s) {
  return std::to_string(s.m()) + "x" + std::to_string(s.n()) + "x" + std::to_string(s.k());
}

}  // namespace ablation::worker
