#include "server/worker/worker.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <library_types.h>
#include <unistd.h>

#include "kernels/common/buffers.h"
#include "kernels/common/problem.h"
#include "kernels/reference.h"
#include "kernels/registry.h"
#include "server/worker/fault_injection.h"
#include "server/worker/identity.h"
#include "server/worker/occupancy_limits.h"
#include "server/worker/sampling.h"
#include "server/worker/timing_kernels.h"

namespace ablation::worker {

namespace k = ::ablation::kernels;

namespace {

/// cuBLAS recommends 32 MiB of workspace on Hopper (4 MiB is enough before); one per process.
constexpr size_t kWorkspaceBytes = 32u << 20;
/// Headroom left free when checking that a problem fits: cuBLAS and the kernels' launchers may
/// allocate a little themselves, and the driver needs some for the launch itself.
constexpr size_t kMemoryHeadroomBytes = 256u << 20;
/// GPU-side delay enqueued before each sample's start event (see EnqueueDelay).
constexpr uint32_t kPreSampleDelayNs = 50'000;
/// Launches enqueued in warm-up between synchronisations: keeps the GPU busy (clocks up) while
/// still checking the elapsed time and errors often.
constexpr int kWarmupBatch = 4;

void Log(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
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

double MiB(double bytes) { return bytes / double(1u << 20); }

std::string ShapeText(const apb::Shape& s) {
  return std::to_string(s.m()) + "x" + std::to_string(s.n()) + "x" + std::to_string(s.k());
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

InputSeeds SeedsFor(uint64_t seed) {
  // Different constants so A and B never share a random stream even when seed is 0.
  return {seed ^ 0x243f6a8885a308d3ull, seed ^ 0x9e3779b97f4a7c15ull};
}

// ------------------------------------------------------------------------------------- Impl

struct Worker::Impl {
  // --- device state, valid when has_device
  bool has_device = false;
  std::string no_device_reason = "worker not opened";
  int device = -1;
  cudaDeviceProp prop{};
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  cublasHandle_t cublas = nullptr;
  cublasLtHandle_t cublaslt = nullptr;
  k::DeviceBuffer workspace;
  k::DeviceBuffer flush;  // 2x L2, overwritten before each cold sample
  unsigned flush_value = 0;

  k::Registry registry;
  Worker::ExtraVariants extra = nullptr;

  bool fatal = false;
  std::string fatal_error;

  ~Impl() {
    if (!has_device) return;
    // Best effort; after a sticky error these fail, and the process is about to exit anyway.
    if (cublaslt) cublasLtDestroy(cublaslt);
    if (cublas) cublasDestroy(cublas);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    if (stream) cudaStreamDestroy(stream);
  }

  /// Builds the error text of a failed step and finds out whether the context is still usable:
  /// cudaGetLastError clears a non-sticky error; if a device synchronisation still fails, the
  /// error is sticky and the process must end after replying.
  std::string Failed(const std::string& what) {
    std::string msg = what;
    if (has_device && !fatal) {
      cudaGetLastError();
      cudaError_t s = cudaDeviceSynchronize();
      if (s != cudaSuccess) {
        fatal = true;
        fatal_error = CudaText(s);
        msg += " [sticky CUDA error " + std::string(cudaGetErrorName(s)) +
               ": the worker exits and a fresh one takes over]";
      }
    }
    Log("error: %s", msg.c_str());
    return msg;
  }

  std::string Check(cudaError_t e, const std::string& what) {
    return e == cudaSuccess ? "" : Failed(what + ": " + CudaText(e));
  }

  std::string OpenDevice(int dev);

  /// A variant ready to run: looked up, supports the dtype, can run the problem, has a launcher.
  struct Ready {
    const k::Variant* variant = nullptr;
    k::Problem problem;
  };
  std::string Resolve(const std::string& name, const std::string& dtype, const apb::Shape& shape,
                      Ready* out) const;

  /// Device buffers of one problem: A, the logical K x N B, its N x K transpose when a variant
  /// wants it, and output(s).
  struct Buffers {
    k::DeviceBuffer a, b_kn, b_nk, c, c_ref;
  };
  std::string CheckMemory(const k::Problem& p, bool need_nk, int outputs) const;
  std::string MakeInputs(const k::Problem& p, uint64_t seed, bool need_nk, int outputs, Buffers* b);
  k::GemmArgs ArgsFor(const Ready& r, const Buffers& b, void* c);
  std::string LaunchChecked(const Ready& r, const k::GemmArgs& args);

  std::string FillOccupancy(const Ready& r, apb::Occupancy* occ);
  std::string RunMeasure(const wpb::MeasureTask& task, wpb::MeasureResult* result);
  std::string RunVerify(const wpb::VerifyTask& task, apb::VerifyResult* result);
};

std::string Worker::Impl::OpenDevice(int dev) {
  cudaError_t e;
  if ((e = cudaSetDevice(dev)) != cudaSuccess) return "cudaSetDevice: " + CudaText(e);
  if ((e = cudaGetDeviceProperties(&prop, dev)) != cudaSuccess) {
    return "cudaGetDeviceProperties: " + CudaText(e);
  }
  // Creates the primary context now, so that a broken device shows in Hello, not mid-run.
  if ((e = cudaFree(nullptr)) != cudaSuccess) return "creating the CUDA context: " + CudaText(e);
  if ((e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)) != cudaSuccess) {
    return "cudaStreamCreate: " + CudaText(e);
  }
  if ((e = cudaEventCreate(&start)) != cudaSuccess || (e = cudaEventCreate(&stop)) != cudaSuccess) {
    return "cudaEventCreate: " + CudaText(e);
  }
  cublasStatus_t s;
  if ((s = cublasCreate(&cublas)) != CUBLAS_STATUS_SUCCESS) return "cublasCreate: " + CublasText(s);
  if ((s = cublasSetStream(cublas, stream)) != CUBLAS_STATUS_SUCCESS) {
    return "cublasSetStream: " + CublasText(s);
  }
  if ((s = cublasLtCreate(&cublaslt)) != CUBLAS_STATUS_SUCCESS) {
    return "cublasLtCreate: " + CublasText(s);
  }
  std::string err = workspace.Allocate(kWorkspaceBytes);
  if (!err.empty()) return "allocating the cuBLAS workspace: " + err;
  // Writing twice the L2 evicts every line of the previous sample's inputs and output.
  const size_t flush_bytes = std::max<size_t>(2 * size_t(prop.l2CacheSize), 1u << 20);
  err = flush.Allocate(flush_bytes);
  if (!err.empty()) return "allocating the L2 flush buffer: " + err;
  return "";
}

std::string Worker::Impl::Resolve(const std::string& name, const std::string& dtype_name,
                                  const apb::Shape& shape, Ready* out) const {
  const k::Variant* v = registry.Find(name);
  if (v == nullptr) return "unknown variant \"" + name + "\"";
  std::optional<k::DType> dtype = k::ParseDType(dtype_name);
  if (!dtype) return "unknown dtype \"" + dtype_name + "\"";
  if (!v->Supports(*dtype)) {
    return "variant " + name + " does not support dtype " + dtype_name;
  }
  if (shape.m() <= 0 || shape.n() <= 0 || shape.k() <= 0) {
    return "invalid shape " + ShapeText(shape) + ": m, n and k must be positive";
  }
  k::Problem p{shape.m(), shape.n(), shape.k(), *dtype};
  if (v->can_implement) {
    std::string why = v->can_implement(p);
    if (!why.empty()) {
      return "variant " + name + " cannot run " + dtype_name + " " + ShapeText(shape) + ": " + why;
    }
  }
  if (v->launch == nullptr) return "variant " + name + " has no launcher in this build";
  out->variant = v;
  out->problem = p;
  return "";
}

std::string Worker::Impl::CheckMemory(const k::Problem& p, bool need_nk, int outputs) const {
  const double in_bytes = double(k::ElementBytes(p.dtype));
  const double a = double(p.m) * double(p.k) * in_bytes;
  const double b = double(p.k) * double(p.n) * in_bytes * (need_nk ? 2 : 1);
  const double c = double(p.m) * double(p.n) * double(k::OutputBytes(p.dtype)) * outputs;
  const double need = a + b + c;
  size_t free_bytes = 0, total_bytes = 0;
  cudaError_t e = cudaMemGetInfo(&free_bytes, &total_bytes);
  if (e != cudaSuccess) return "cudaMemGetInfo: " + CudaText(e);
  if (need + double(kMemoryHeadroomBytes) > double(free_bytes)) {
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "problem does not fit in device memory: %s %" PRId64 "x%" PRId64 "x%" PRId64
                  " needs %.1f MiB (A %.1f, B %.1f, C %.1f) plus %.0f MiB headroom; %.1f MiB free "
                  "of %.1f MiB",
                  std::string(k::ToString(p.dtype)).c_str(), p.m, p.n, p.k, MiB(need), MiB(a),
                  MiB(b), MiB(c), MiB(kMemoryHeadroomBytes), MiB(double(free_bytes)),
                  MiB(double(total_bytes)));
    return buf;
  }
  return "";
}

std::string Worker::Impl::MakeInputs(const k::Problem& p, uint64_t seed, bool need_nk, int outputs,
                                     Buffers* b) {
  std::string err = CheckMemory(p, need_nk, outputs);
  if (!err.empty()) return err;
  const size_t in_bytes = size_t(k::ElementBytes(p.dtype));
  const size_t out_bytes = size_t(k::OutputBytes(p.dtype));
  const InputSeeds seeds = SeedsFor(seed);
  auto fail = [&](const std::string& what, const std::string& e) {
    return Failed(what + ": " + e);
  };
  if (!(err = b->a.Allocate(size_t(p.m * p.k) * in_bytes)).empty())
    return fail("allocating A", err);
  if (!(err = b->b_kn.Allocate(size_t(p.k * p.n) * in_bytes)).empty()) {
    return fail("allocating B", err);
  }
  if (!(err = b->c.Allocate(size_t(p.m * p.n) * out_bytes)).empty())
    return fail("allocating C", err);
  if (outputs > 1 && !(err = b->c_ref.Allocate(size_t(p.m * p.n) * out_bytes)).empty()) {
    return fail("allocating the reference output", err);
  }
  if (!(err = k::FillRandom(b->a.data(), size_t(p.m * p.k), p.dtype, seeds.a, stream)).empty()) {
    return fail("filling A", err);
  }
  if (!(err = k::FillRandom(b->b_kn.data(), size_t(p.k * p.n), p.dtype, seeds.b, stream)).empty()) {
    return fail("filling B", err);
  }
  if (need_nk) {
    if (!(err = b->b_nk.Allocate(size_t(p.k * p.n) * in_bytes)).empty()) {
      return fail("allocating B (N x K)", err);
    }
    if (!(err = k::Transpose(b->b_kn.data(), b->b_nk.data(), p.k, p.n, p.dtype, stream)).empty()) {
      return fail("transposing B", err);
    }
  }
  // Outputs start poisoned, so that a variant that writes nothing never looks plausible.
  if (!(err = k::Poison(b->c.data(), size_t(p.m * p.n), p.dtype, stream)).empty()) {
    return fail("poisoning C", err);
  }
  return Check(cudaStreamSynchronize(stream), "preparing inputs");
}

k::GemmArgs Worker::Impl::ArgsFor(const Ready& r, const Buffers& b, void* c) {
  k::GemmArgs args;
  args.problem = r.problem;
  args.a = b.a.data();
  args.b = r.variant->b_layout == k::BLayout::kNK ? b.b_nk.data() : b.b_kn.data();
  args.c = c;
  args.stream = stream;
  args.cublas = cublas;
  args.cublaslt = cublaslt;
  args.workspace = workspace.data();
  args.workspace_bytes = workspace.bytes();
  return args;
}

std::string Worker::Impl::LaunchChecked(const Ready& r, const k::GemmArgs& args) {
  std::string err = r.variant->launch(args);
  if (!err.empty()) return Failed("launching " + r.variant->name + ": " + err);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return Failed("launching " + r.variant->name + ": " + CudaText(e));
  return "";
}

std::string Worker::Impl::FillOccupancy(const Ready& r, apb::Occupancy* occ) {
  const k::Variant& v = *r.variant;
  const void* fn = v.kernel ? v.kernel(r.problem.dtype) : nullptr;
  if (fn == nullptr) return "";  // a library entry (cuBLAS): nothing of ours to describe
  cudaFuncAttributes attr{};
  std::string err = Check(cudaFuncGetAttributes(&attr, fn), "cudaFuncGetAttributes");
  if (!err.empty()) return err;
  int threads = v.threads > 0 ? v.threads : attr.maxThreadsPerBlock;
  int blocks = 0;
  err = Check(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, threads, size_t(v.smem_bytes)),
      "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  if (!err.empty()) return err;

  KernelNeeds needs;
  needs.threads_per_block = threads;
  needs.registers_per_thread = attr.numRegs;
  needs.smem_per_block = int64_t(attr.sharedSizeBytes) + v.smem_bytes;
  SmLimits sm;
  sm.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
  sm.max_blocks_per_sm = prop.maxBlocksPerMultiProcessor;
  sm.registers_per_sm = prop.regsPerMultiprocessor;
  sm.max_registers_per_block = prop.regsPerBlock;
  sm.smem_per_sm = int64_t(prop.sharedMemPerMultiprocessor);
  sm.reserved_smem_per_block = int64_t(prop.reservedSharedMemPerBlock);
  sm.warp_size = prop.warpSize;
  const OccupancyLimits lim = ComputeOccupancyLimits(needs, sm);

  const int warps_per_block = (threads + prop.warpSize - 1) / prop.warpSize;
  const int max_warps = prop.maxThreadsPerMultiProcessor / prop.warpSize;
  occ->set_registers_per_thread(attr.numRegs);
  occ->set_static_smem_bytes(int64_t(attr.sharedSizeBytes));
  occ->set_dynamic_smem_bytes(v.smem_bytes);
  occ->set_local_bytes_per_thread(int64_t(attr.localSizeBytes));
  // The count is the driver's (authoritative); the limiter is ours (the driver does not say).
  occ->set_max_blocks_per_sm(blocks);
  occ->set_max_warps_per_sm(blocks * warps_per_block);
  occ->set_theoretical_occupancy(max_warps > 0 ? double(blocks * warps_per_block) / max_warps : 0);
  occ->set_limiter(lim.limiter);
  occ->set_threads_per_block(threads);
  if (lim.blocks_per_sm != blocks) {
    Log("occupancy of %s: the driver allows %d blocks/SM, the limit computation %d (%s); "
        "reporting the driver's count",
        v.name.c_str(), blocks, lim.blocks_per_sm, lim.limiter.c_str());
  }
  return "";
}

std::string Worker::Impl::RunMeasure(const wpb::MeasureTask& task, wpb::MeasureResult* result) {
  Ready r;
  std::string err = Resolve(task.variant(), task.dtype(), task.shape(), &r);
  if (!err.empty()) return err;
  const apb::TimingOptions& t = task.timing();
  const SamplingOptions o =
      ResolveOptions(t.min_samples(), t.min_seconds(), t.max_seconds(), t.target_noise(),
                     t.warmup_count(), t.warmup_seconds(), t.hot_l2(), t.max_samples());
  Buffers b;
  err = MakeInputs(r.problem, task.seed(), r.variant->b_layout == k::BLayout::kNK, 1, &b);
  if (!err.empty()) return err;
  const k::GemmArgs args = ArgsFor(r, b, b.c.data());

  // Warm-up: by count and by time, so that clocks, caches of the launch path and cuBLAS's
  // heuristics are settled. max_seconds bounds it too (a kernel of seconds per launch).
  const auto warm0 = std::chrono::steady_clock::now();
  int launched = 0;
  for (;;) {
    const int batch = launched < o.warmup_count ? std::min(kWarmupBatch, o.warmup_count - launched)
                                                : kWarmupBatch;
    for (int i = 0; i < batch; ++i, ++launched) {
      if (!(err = LaunchChecked(r, args)).empty()) return err;
    }
    if (!(err = Check(cudaStreamSynchronize(stream), "warm-up")).empty()) return err;
    const double s = Seconds(warm0);
    if (launched >= o.warmup_count && s >= o.warmup_seconds) break;
    if (s >= o.max_seconds) break;
  }

  // After the warm-up: a launcher may set the kernel's dynamic shared memory limit on first use,
  // and the occupancy calculator honours that attribute.
  err = FillOccupancy(r, result->mutable_occupancy());
  if (!err.empty()) {
    if (fatal) return err;
    Log("occupancy of %s not reported: %s", r.variant->name.c_str(), err.c_str());
    result->clear_occupancy();
  }

  const bool cold = !o.hot_l2;
  RunningStats stats;
  StopReason why = StopReason::kContinue;
  const auto loop0 = std::chrono::steady_clock::now();
  while (why == StopReason::kContinue) {
    if (cold) {
      // Outside the events: the next sample starts with none of its data in L2. The value
      // changes each time so no layer can treat the write as redundant.
      flush_value = (flush_value + 1) & 0xff;
      err =
          Check(cudaMemsetAsync(flush.data(), int(flush_value), flush.bytes(), stream), "L2 flush");
      if (!err.empty()) return err;
    }
    if (!(err = EnqueueDelay(stream, kPreSampleDelayNs)).empty()) return Failed(err);
    if (!(err = Check(cudaEventRecord(start, stream), "cudaEventRecord")).empty()) return err;
    if (!(err = LaunchChecked(r, args)).empty()) return err;
    if (!(err = Check(cudaEventRecord(stop, stream), "cudaEventRecord")).empty()) return err;
    if (!(err = Check(cudaEventSynchronize(stop), "waiting for a sample")).empty()) return err;
    float ms = 0;
    if (!(err = Check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime")).empty()) {
      return err;
    }
    result->add_sample_ms(double(ms));
    stats.Add(double(ms));
    why = ShouldStop(stats, o, Seconds(loop0));
  }
  result->set_l2(cold ? "cold" : "hot");
  Log("measured %s %s %s: %" PRId64
      " samples, mean %.4f ms, noise %.3f%%, L2 %s, %d warm-up "
      "launches, stopped: %s",
      r.variant->name.c_str(), task.dtype().c_str(), ShapeText(task.shape()).c_str(), stats.count(),
      stats.mean(), 100 * stats.noise(), cold ? "cold" : "hot", launched, ToString(why).c_str());
  return "";
}

std::string Worker::Impl::RunVerify(const wpb::VerifyTask& task, apb::VerifyResult* result) {
  Ready r;
  std::string err = Resolve(task.variant(), task.dtype(), task.shape(), &r);
  if (!err.empty()) return err;
  const k::Problem& p = r.problem;
  if (r.variant->Work(p).flops == 0) {
    return "variant " + r.variant->name + " (family " + r.variant->family +
           ") computes no product, only a checksum of its loads: there is nothing to verify";
  }
  const double work = double(p.m) * double(p.n) * double(p.k);
  // Same default as the public API: the CPU reference up to 1024^3, cuBLAS beyond.
  std::string against = task.against();
  if (against.empty()) against = work <= double(1ull << 30) ? "cpu" : "cublas";
  result->set_against(against);

  const bool cpu = against == "cpu";
  Ready ref;
  k::Tolerance tol = k::DefaultTolerance(p.dtype);
  if (cpu) {
    if (work > kMaxCpuReferenceWork) {
      return ShapeText(task.shape()) + " (M*N*K = " + std::to_string(int64_t(work)) +
             ") is too large for the CPU reference, use --against cublas";
    }
  } else {
    const std::string ref_name =
        against == "cublas" ? "cublas_" + std::string(k::ToString(p.dtype)) : against;
    if (!(err = Resolve(ref_name, task.dtype(), task.shape(), &ref)).empty()) {
      return "reference: " + err;
    }
    // Variants of one family that only move data differently must agree bit for bit.
    if (ref.variant->family == r.variant->family && ref.variant->bit_exact_family &&
        r.variant->bit_exact_family) {
      tol = k::ExactTolerance();
    }
  }
  result->set_tolerance(tol.rel_frobenius);

  const bool need_nk =
      r.variant->b_layout == k::BLayout::kNK || (!cpu && ref.variant->b_layout == k::BLayout::kNK);
  Buffers b;
  if (!(err = MakeInputs(p, task.seed(), need_nk, cpu ? 1 : 2, &b)).empty()) return err;

  // C was poisoned by MakeInputs: whatever the variant does not write stays visible.
  if (!(err = LaunchChecked(r, ArgsFor(r, b, b.c.data()))).empty()) return err;
  if (!(err = Check(cudaStreamSynchronize(stream), "running " + r.variant->name)).empty()) {
    return err;
  }

  const size_t mn = size_t(p.m * p.n);
  std::vector<double> ref_out;
  if (cpu) {
    std::vector<double> ha, hb;
    if (!(err = k::CopyToHostAsDouble(b.a.data(), size_t(p.m * p.k), p.dtype, false, &ha))
             .empty() ||
        !(err = k::CopyToHostAsDouble(b.b_kn.data(), size_t(p.k * p.n), p.dtype, false, &hb))
             .empty()) {
      return Failed("copying the inputs to the host: " + err);
    }
    ref_out = k::ReferenceGemm(ha, hb, p.m, p.n, p.k);
  } else {
    if (!(err = k::Poison(b.c_ref.data(), mn, p.dtype, stream)).empty()) {
      return Failed("poisoning the reference output: " + err);
    }
    if (!(err = LaunchChecked(ref, ArgsFor(ref, b, b.c_ref.data()))).empty()) {
      return "reference: " + err;
    }
    if (!(err = Check(cudaStreamSynchronize(stream), "running " + ref.variant->name)).empty()) {
      return "reference: " + err;
    }
    if (!(err = k::CopyToHostAsDouble(b.c_ref.data(), mn, p.dtype, true, &ref_out)).empty()) {
      return Failed("copying the reference output to the host: " + err);
    }
    int64_t bad = 0;
    for (double x : ref_out) bad += (k::IsPoison(x, p.dtype) || !std::isfinite(x)) ? 1 : 0;
    if (bad > 0) {
      return "reference " + ref.variant->name + " left " + std::to_string(bad) +
             " output elements unwritten or not finite";
    }
  }
  std::vector<double> out;
  if (!(err = k::CopyToHostAsDouble(b.c.data(), mn, p.dtype, true, &out)).empty()) {
    return Failed("copying the output to the host: " + err);
  }
  const k::Comparison c = k::Compare(out, ref_out, p.dtype, tol);
  result->set_max_abs_error(c.max_abs_error);
  result->set_max_rel_error(c.max_rel_error);
  result->set_rel_frobenius_error(c.rel_frobenius_error);
  result->set_mismatches(c.mismatches);
  result->set_nan_count(c.nan_count);
  result->set_unwritten_count(c.unwritten_count);
  result->set_passed(c.passed);
  Log("verified %s %s %s against %s: %s (rel frobenius %.3g, max abs %.3g, %" PRId64
      " mismatches, %" PRId64 " NaN, %" PRId64 " unwritten)",
      r.variant->name.c_str(), task.dtype().c_str(), ShapeText(task.shape()).c_str(),
      against.c_str(), c.passed ? "passed" : "FAILED", c.rel_frobenius_error, c.max_abs_error,
      c.mismatches, c.nan_count, c.unwritten_count);
  return "";
}

// ------------------------------------------------------------------------------------- Worker

Worker::Worker(ExtraVariants extra) : impl_(std::make_unique<Impl>()) { impl_->extra = extra; }
Worker::~Worker() = default;

bool Worker::fatal() const { return impl_->fatal; }
const std::string& Worker::fatal_error() const { return impl_->fatal_error; }

wpb::Hello Worker::Open(int device) {
  Impl& s = *impl_;
  wpb::Hello hello;
  hello.set_pid(int(::getpid()));
  s.device = device;

  // The catalog is needed even without a device: requests are still answered (ok=false).
  k::RegisterCatalog(s.registry);
  k::BindLaunchers(s.registry);
  if (s.extra) s.extra(s.registry);

  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    s.no_device_reason =
        "no CUDA device: cudaGetDeviceCount: " + std::string(cudaGetErrorString(e));
    count = 0;
  } else if (count == 0) {
    s.no_device_reason = "no CUDA device: cudaGetDeviceCount found no CUDA-capable device";
  } else if (device < 0 || device >= count) {
    s.no_device_reason = "no CUDA device: --device " + std::to_string(device) +
                         " is out of range (" + std::to_string(count) + " device" +
                         (count == 1 ? "" : "s") + ")";
  } else {
    std::string err = s.OpenDevice(device);
    if (err.empty()) {
      s.has_device = true;
      s.no_device_reason.clear();
    } else {
      s.no_device_reason = "no usable CUDA device " + std::to_string(device) + ": " + err;
    }
  }
  hello.set_device_count(count);
  hello.set_device_present(s.has_device);
  if (!s.has_device) {
    hello.set_no_device_reason(s.no_device_reason);
    Log("%s", s.no_device_reason.c_str());
    return hello;
  }

  apb::DeviceIdentity* id = hello.mutable_device();
  id->set_index(device);
  id->set_name(s.prop.name);
  id->set_uuid(FormatGpuUuid(reinterpret_cast<const unsigned char*>(s.prop.uuid.bytes)));
  id->set_compute_capability(std::to_string(s.prop.major) + "." + std::to_string(s.prop.minor));
  id->set_sm_count(s.prop.multiProcessorCount);
  int v = 0;
  if (cudaDriverGetVersion(&v) == cudaSuccess) id->set_driver_version(FormatCudaVersion(v));
  if (cudaRuntimeGetVersion(&v) == cudaSuccess) id->set_cuda_runtime_version(FormatCudaVersion(v));
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS) {
    id->set_cublas_version(FormatLibraryVersion(major, minor, patch));
  }
  id->set_memory_bytes(int64_t(s.prop.totalGlobalMem));
  id->set_l2_bytes(s.prop.l2CacheSize);
  id->set_smem_per_block_optin(int64_t(s.prop.sharedMemPerBlockOptin));
  id->set_smem_per_sm(int64_t(s.prop.sharedMemPerMultiprocessor));
  Log("device %d: %s (%s), cc %s, %d SMs, driver %s, runtime %s, cuBLAS %s, %zu variants", device,
      id->name().c_str(), id->uuid().c_str(), id->compute_capability().c_str(), id->sm_count(),
      id->driver_version().c_str(), id->cuda_runtime_version().c_str(),
      id->cublas_version().c_str(), s.registry.All().size());
  return hello;
}

wpb::MeasureResult Worker::Measure(const wpb::MeasureTask& task) {
  MaybeInjectTestFault(task.variant());  // TEST-ONLY; no effect unless the variable is set
  wpb::MeasureResult result;
  result.set_task_id(task.task_id());
  std::string err;
  try {
    err = impl_->has_device ? impl_->RunMeasure(task, &result) : impl_->no_device_reason;
  } catch (const std::exception& e) {
    // Host-side only (allocation of host vectors, a registry error): the context is fine.
    err = std::string("internal error in the worker: ") + e.what();
  }
  if (!err.empty()) {
    result.set_ok(false);
    result.set_error(err);
    result.clear_sample_ms();
  } else {
    result.set_ok(true);
  }
  return result;
}

wpb::DescribeResult Worker::Describe(const wpb::DescribeTask& task) {
  wpb::DescribeResult result;
  result.set_task_id(task.task_id());
  auto fail = [&](const std::string& why) {
    result.set_ok(false);
    result.set_error(why);
    return result;
  };
  if (!impl_->has_device) return fail(impl_->no_device_reason);
  const k::Variant* v = impl_->registry.Find(task.variant());
  if (v == nullptr) return fail("unknown variant \"" + task.variant() + "\"");
  std::optional<k::DType> dtype = k::ParseDType(task.dtype());
  if (!dtype) return fail("unknown dtype \"" + task.dtype() + "\"");
  if (!v->Supports(*dtype)) return fail("variant " + v->name + " does not support " + task.dtype());
  const void* fn = v->kernel ? v->kernel(*dtype) : nullptr;
  if (fn == nullptr) return fail("variant " + v->name + " runs a library, not a kernel of ours");
  const char* symbol = nullptr;
  cudaError_t e = cudaFuncGetName(&symbol, fn);
  if (e != cudaSuccess || symbol == nullptr) return fail("cudaFuncGetName: " + CudaText(e));
  char exe[4096];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return fail("cannot read /proc/self/exe");
  result.set_ok(true);
  result.set_kernel_symbol(symbol);
  result.set_binary(std::string(exe, size_t(n)));
  result.set_arch("sm_" + std::to_string(impl_->prop.major) + std::to_string(impl_->prop.minor));
  return result;
}

apb::VerifyResult Worker::Verify(const wpb::VerifyTask& task) {
  apb::VerifyResult result;
  result.set_variant(task.variant());
  result.set_dtype(task.dtype());
  *result.mutable_shape() = task.shape();
  result.set_against(task.against());
  std::string err;
  try {
    err = impl_->has_device ? impl_->RunVerify(task, &result) : impl_->no_device_reason;
  } catch (const std::exception& e) {
    // E.g. std::bad_alloc for the host copies of a large CPU reference: the context is fine.
    err = std::string("internal error in the worker: ") + e.what();
  }
  if (!err.empty()) {
    result.set_passed(false);
    result.set_error(err);
  }
  return result;
}

}  // namespace ablation::worker
