// The worker on a real GPU, through its binary and protocol (as the daemon drives it): the
// device it describes, measurements of a custom kernel and of cuBLAS, verification against each
// reference, and what it refuses. Timing methods: worker_timing_test.cc. Skips with "no CUDA
// device: ..." where there is none.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include <cuda_runtime_api.h>

#include "server/worker/library_choice.h"
#include "tests/support/run_capture.h"
#include "tests/worker/gpu/worker_gpu_fixture.h"

namespace ablation::worker {
namespace {

TEST_F(WorkerGpu, HelloDescribesTheDevice) {
  int n = 0;
  ASSERT_EQ(cudaGetDeviceCount(&n), cudaSuccess);
  EXPECT_EQ(hello_.device_count(), n);
  const apb::DeviceIdentity& d = hello_.device();
  EXPECT_EQ(d.index(), 0);
  EXPECT_FALSE(d.name().empty());
  EXPECT_EQ(d.uuid().rfind("GPU-", 0), 0u);
  EXPECT_EQ(d.uuid().size(), 40u);
  EXPECT_NE(d.compute_capability().find('.'), std::string::npos);
  EXPECT_GT(d.sm_count(), 0);
  EXPECT_FALSE(d.driver_version().empty());
  EXPECT_FALSE(d.cuda_runtime_version().empty());
  EXPECT_EQ(std::count(d.cublas_version().begin(), d.cublas_version().end(), '.'), 2)
      << d.cublas_version();
  EXPECT_GT(d.memory_bytes(), 0);
  EXPECT_GT(d.l2_bytes(), 0);
  EXPECT_GT(d.smem_per_block_optin(), 0);
  EXPECT_GE(d.smem_per_sm(), d.smem_per_block_optin());
}

// A kernel of ours is named for the profiler and the disassembler; cuBLAS is a library: no
// symbol, the worker's own file and arch (a profiler starts it, and catches the library's first
// kernel of the profiled call).
TEST_F(WorkerGpu, DescribeNamesOurKernelsAndMarksALibrary) {
  for (const char* variant : {"abl_L1_R1_bl0_s3_sw1", "cublas_bf16"}) {
    SCOPED_TRACE(variant);
    v1::WorkerRequest req;
    auto* t = req.mutable_describe();
    t->set_task_id(7);
    t->set_variant(variant);
    t->set_dtype("bf16");
    t->mutable_shape()->set_m(256);
    t->mutable_shape()->set_n(256);
    t->mutable_shape()->set_k(256);
    const v1::WorkerReply reply = Call(req);
    ASSERT_TRUE(reply.has_describe());
    const v1::DescribeResult& d = reply.describe();
    ASSERT_TRUE(d.ok()) << d.error();
    const bool library = std::string(variant) == "cublas_bf16";
    EXPECT_EQ(d.library(), library);
    EXPECT_EQ(d.kernel_symbol().empty(), library);
    EXPECT_FALSE(d.binary().empty());
    EXPECT_EQ(d.arch().rfind("sm_", 0), 0u) << d.arch();
  }
}

// The one-shot process a profiler starts, here with none attached: a kernel of ours and cuBLAS
// (whose profiled call sits between cudaProfilerStart and Stop, harmless without a profiler) both
// launch and exit 0, the log naming what the profiler would take.
TEST_F(WorkerGpu, ProfileOnceLaunchesOurKernelAndALibrarysWithoutAProfiler) {
  for (const auto& [variant, names] :
       {std::pair<std::string, std::string>{"abl_L1_R1_bl0_s3_sw1", "AblationGemmKernel"},
        {"cublas_bf16", "the library's first kernel"}}) {
    SCOPED_TRACE(variant);
    const std::string command = ablation::testing::TestBinary(ABLATION_WORKER_BIN) +
                                " --profile-once --variant " + variant +
                                " --shape 256x256x256 --warmup 2 2>&1";
    int status = 0;
    const std::string out = ablation::testing::RunCapture(command, &status);
    ASSERT_NE(status, -1) << "cannot run " << command;
    EXPECT_EQ(status, 0) << out;
    EXPECT_NE(out.find("2 warm-up launches, then 1 launch of"), std::string::npos) << out;
    EXPECT_NE(out.find(names), std::string::npos) << out;
  }
}

// cublas_bf16_best launches the algorithm its measurement chose: the worker's Describe hands it
// on (none before it has chosen), and a one-shot worker given it launches it; one not given it
// chooses by timing the candidates itself, before its profiled call.
TEST_F(WorkerGpu, ProfileOnceOfTheBestCublasLaunchesTheChosenAlgorithm) {
  auto describe = [](uint64_t id) {
    v1::WorkerRequest req;
    auto* t = req.mutable_describe();
    t->set_task_id(id);
    t->set_variant("cublas_bf16_best");
    t->set_dtype("bf16");
    t->mutable_shape()->set_m(384);
    t->mutable_shape()->set_n(384);
    t->mutable_shape()->set_k(384);
    return Call(req).describe();
  };
  const v1::DescribeResult before = describe(31);
  ASSERT_TRUE(before.ok()) << before.error();
  EXPECT_TRUE(before.library());
  EXPECT_TRUE(before.library_algo().empty());
  Timed r = Measure(Task("cublas_bf16_best", 384, 384, 384));
  ExpectGoodTiming(r, apb::L2_MODE_COLD_ROTATED);
  const v1::DescribeResult after = describe(32);
  ASSERT_TRUE(after.ok()) << after.error();
  ASSERT_EQ(after.library_algo().size(), 64u);
  std::string hex;
  for (unsigned char c : after.library_algo()) {
    char two[3];
    std::snprintf(two, sizeof two, "%02x", c);
    hex += two;
  }
  const std::string base = ablation::testing::TestBinary(ABLATION_WORKER_BIN) +
                           " --profile-once --variant cublas_bf16_best --shape 384 --warmup 2";
  for (const std::string& extra : {" --library-algo " + hex, std::string()}) {
    SCOPED_TRACE(extra);
    int status = 0;
    const std::string out = ablation::testing::RunCapture(base + extra + " 2>&1", &status);
    ASSERT_NE(status, -1) << "cannot run " << base;
    EXPECT_EQ(status, 0) << out;
    EXPECT_NE(out.find("2 warm-up launches, then 1 launch of the library's first kernel"),
              std::string::npos)
        << out;
    // Only the one not given an algorithm times the candidates.
    EXPECT_EQ(out.find("chose the heuristic's candidate") != std::string::npos, extra.empty())
        << out;
  }
  // An algorithm for a variant that launches none of its choosing is refused, not ignored.
  int status = 0;
  const std::string out = ablation::testing::RunCapture(
      ablation::testing::TestBinary(ABLATION_WORKER_BIN) +
          " --profile-once --variant cublas_bf16 --shape 384 --library-algo " + hex + " 2>&1",
      &status);
  EXPECT_NE(status, 0) << out;
  EXPECT_NE(out.find("--library-algo is for a cublas_<dtype>_best variant, not cublas_bf16"),
            std::string::npos)
      << out;
}

TEST_F(WorkerGpu, MeasureAblationVariantWithOccupancy) {
  for (int64_t size : {512, 4096}) {
    SCOPED_TRACE(size);
    Timed r = Measure(kAblation, size);
    ExpectGoodTiming(r, apb::L2_MODE_COLD_ROTATED);
    const apb::Occupancy& o = r.occupancy();
    EXPECT_GT(o.registers_per_thread(), 0);
    EXPECT_GT(o.threads_per_block(), 0);
    EXPECT_GE(o.max_blocks_per_sm(), 1);
    EXPECT_GE(o.max_warps_per_sm(), o.max_blocks_per_sm());
    EXPECT_GT(o.theoretical_occupancy(), 0);
    EXPECT_LE(o.theoretical_occupancy(), 1);
    EXPECT_TRUE(o.limiter() == "registers" || o.limiter() == "shared_memory" ||
                o.limiter() == "warps" || o.limiter() == "blocks")
        << o.limiter();
  }
}

TEST_F(WorkerGpu, MeasureCublasWithoutOccupancy) {
  for (int64_t size : {512, 4096}) {
    SCOPED_TRACE(size);
    Timed r = Measure(kCublas, size);
    ExpectGoodTiming(r, apb::L2_MODE_COLD_ROTATED);
    EXPECT_EQ(r.occupancy().registers_per_thread(), 0);
    EXPECT_EQ(r.occupancy().limiter(), "");
  }
}

TEST_F(WorkerGpu, HotL2IsReported) {
  ExpectGoodTiming(Measure(kCublas, 512, /*hot=*/true), apb::L2_MODE_HOT);
}

TEST_F(WorkerGpu, CublasAt4096IsInTheExpectedRange) {
  // H200 bf16 4096^3 is ~720 TFLOPS through PyTorch; anything far off means the timing is wrong.
  Timed r = Measure(kCublas, 4096);
  ASSERT_TRUE(r.ok()) << r.error();
  const double tflops = 2.0 * 4096.0 * 4096.0 * 4096.0 / (r.stats().median_ms() * 1e-3) / 1e12;
  std::printf("cublas_bf16 4096^3: %.0f TFLOPS (median)\n", tflops);
  EXPECT_GT(tflops, 50);
  EXPECT_LT(tflops, 1200);  // above any datasheet: the events did not cover the kernel
}

TEST_F(WorkerGpu, VerifyAgainstCpu) {
  for (const char* v : {kAblation, kCublas}) {
    for (int64_t size : {256, 512}) {
      SCOPED_TRACE(std::string(v) + " " + std::to_string(size));
      apb::VerifyResult r = Verify(v, size, apb::REFERENCE_CPU);
      EXPECT_EQ(r.error(), "");
      EXPECT_TRUE(r.passed()) << "rel frobenius " << r.rel_frobenius_error() << ", mismatches "
                              << r.mismatches() << ", nan " << r.nan_count() << ", unwritten "
                              << r.unwritten_count();
      EXPECT_EQ(r.reference(), apb::REFERENCE_CPU);
      EXPECT_EQ(r.unwritten_count(), 0);
      EXPECT_GT(r.tolerance(), 0);
    }
  }
}

TEST_F(WorkerGpu, VerifyAgainstCublasAt4096) {
  apb::VerifyResult r = Verify(kAblation, 4096, apb::REFERENCE_CUBLAS);
  EXPECT_EQ(r.error(), "");
  EXPECT_EQ(r.reference(), apb::REFERENCE_CUBLAS);
  EXPECT_TRUE(r.passed()) << "rel frobenius " << r.rel_frobenius_error() << ", mismatches "
                          << r.mismatches();
}

TEST_F(WorkerGpu, CpuReferenceRefusesLargeShapes) {
  apb::VerifyResult r = Verify(kAblation, 4096, apb::REFERENCE_CPU);
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.error().rfind("reference: 4096x4096x4096 (M*N*K = 68719476736) is too large for "
                            "the CPU reference",
                            0),
            0u)
      << r.error();
}

TEST_F(WorkerGpu, CpuReferenceTakesTwoToThe33) {
  // 2048^3 = 2^33 multiply-adds: the multi-threaded FP64 product in seconds.
  const auto t0 = std::chrono::steady_clock::now();
  apb::VerifyResult r = Verify(kCublas, 2048, apb::REFERENCE_CPU);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("verify cublas_bf16 2048^3 against the CPU: %.2f s\n", s);
  EXPECT_EQ(r.error(), "");
  EXPECT_TRUE(r.passed()) << "rel frobenius " << r.rel_frobenius_error();
}

TEST_F(WorkerGpu, VerifyAgainstTheGpuReference) {
  for (int64_t size : {512, 4096}) {
    for (const char* v : {kAblation, kCublas}) {
      SCOPED_TRACE(std::string(v) + " " + std::to_string(size));
      apb::VerifyResult r = Verify(v, size, apb::REFERENCE_GPU);
      EXPECT_EQ(r.error(), "");
      EXPECT_EQ(r.reference(), apb::REFERENCE_GPU);
      EXPECT_TRUE(r.passed()) << "rel frobenius " << r.rel_frobenius_error() << ", mismatches "
                              << r.mismatches();
      EXPECT_EQ(r.tolerance(), 1e-2);  // bf16's, as against cuBLAS
      EXPECT_LT(r.rel_frobenius_error(), 5e-3);
    }
  }
  // Every dtype's cuBLAS on a shape of odd tiles, and (but int8, whose IMMA kernels need rows of
  // 4-byte multiples) on one whose rows are not whole 16-byte chunks.
  for (const char* dtype : {"bf16", "fp16", "fp32", "tf32", "int8"}) {
    SCOPED_TRACE(dtype);
    apb::VerifyResult r =
        Verify("cublas_" + std::string(dtype), 136, 72, 40, apb::REFERENCE_GPU, dtype);
    EXPECT_EQ(r.error(), "");
    EXPECT_TRUE(r.passed()) << "rel frobenius " << r.rel_frobenius_error() << ", mismatches "
                            << r.mismatches();
    if (std::string(dtype) == "int8") EXPECT_EQ(r.max_abs_error(), 0) << "int32: exact";
  }
  for (const char* dtype : {"bf16", "fp16", "fp32", "tf32"}) {
    SCOPED_TRACE(std::string(dtype) + " 97x83x61");
    apb::VerifyResult r =
        Verify("cublas_" + std::string(dtype), 97, 83, 61, apb::REFERENCE_GPU, dtype);
    EXPECT_EQ(r.error(), "");
    EXPECT_TRUE(r.passed()) << "rel frobenius " << r.rel_frobenius_error();
  }
}

// The two cuBLAS baselines through cuBLASLt: the heuristic's first pick named on its member, the
// best of at least 8 candidates timed, chosen and named, and a stored choice launched as given.
// Both compute what the GPU reference computes, on every dtype.
TEST_F(WorkerGpu, TheBestCublasAlgorithmIsTimedChosenAndNamed) {
  Timed heuristic = Measure(kCublas, 4096);
  ASSERT_TRUE(heuristic.ok()) << heuristic.error();
  const apb::LibraryAlgo& h = heuristic.member().library();
  EXPECT_EQ(h.library_pick(), "heuristic");
  EXPECT_GE(h.library_algo_id(), 0);
  EXPECT_EQ(h.library_rank(), 0);
  EXPECT_FALSE(h.library_tile().empty()) << h.library_config();
  EXPECT_GE(heuristic.window.launched_cycles(), heuristic.window.cycles());

  Timed best = Measure("cublas_bf16_best", 4096);
  ASSERT_TRUE(best.ok()) << best.error();
  const v1::LibraryTuning& tuning = best.member().tuning();
  ASSERT_GE(tuning.candidates_size(), 8) << "cuBLASLt offered fewer than 8 candidates";
  EXPECT_EQ(tuning.launches(), kTuningLaunches);
  int timed = 0;
  for (const auto& c : tuning.candidates()) {
    EXPECT_EQ(c.algo_data().size(), 64u);
    timed += c.median_ms() > 0 ? 1 : 0;
    if (c.median_ms() > 0) EXPECT_LE(tuning.candidates(tuning.chosen()).median_ms(), c.median_ms());
  }
  EXPECT_GE(timed, 8);
  const apb::LibraryAlgo& b = best.member().library();
  EXPECT_EQ(b.library_pick(), "best of " + std::to_string(tuning.candidates_size()) + " timed");
  EXPECT_EQ(b.library_rank(), tuning.chosen());
  std::printf("cublas_bf16 4096^3: heuristic %s; best %s (candidate %d of %d)\n",
              h.library_config().c_str(), b.library_config().c_str(), tuning.chosen(),
              tuning.candidates_size());
  // The chosen algorithm resident: not timed again in this worker.
  Timed again = Measure("cublas_bf16_best", 4096);
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_EQ(again.member().tuning().candidates_size(), 0);
  // A stored choice is launched as given: the heuristic's last candidate, whatever was timed.
  v1::MeasureTask task = Task("cublas_bf16_best", 2048, 2048, 2048);
  Timed first = Measure(task);
  ASSERT_TRUE(first.ok()) << first.error();
  const auto& last =
      first.member().tuning().candidates(first.member().tuning().candidates_size() - 1);
  auto* stored = task.add_library_choices();
  stored->set_variant("cublas_bf16_best");
  stored->set_algo(last.algo_data());
  Timed given = Measure(task);
  ASSERT_TRUE(given.ok()) << given.error();
  EXPECT_EQ(given.member().library().library_algo_id(), last.algo().library_algo_id());
  for (const char* dtype : {"bf16", "fp16", "fp32", "tf32", "int8"}) {
    SCOPED_TRACE(dtype);
    apb::VerifyResult r =
        Verify("cublas_" + std::string(dtype) + "_best", 136, 72, 40, apb::REFERENCE_GPU, dtype);
    EXPECT_EQ(r.error(), "");
    EXPECT_TRUE(r.passed()) << "rel frobenius " << r.rel_frobenius_error();
  }
}

TEST_F(WorkerGpu, RefusesWhatCannotRun) {
  Timed r = Measure("no_such_variant", 512);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error().find("unknown variant"), std::string::npos) << r.error();
  // Far beyond any device's memory: refused before allocating, and the worker stays up.
  v1::WorkerRequest req;
  auto* m = req.mutable_measure();
  m->add_variants(kCublas);
  m->set_dtype("bf16");
  m->mutable_shape()->set_m(1 << 20);
  m->mutable_shape()->set_n(1 << 20);
  m->mutable_shape()->set_k(1 << 10);
  v1::WorkerReply reply = Call(req);
  EXPECT_FALSE(reply.measure().ok());
  EXPECT_NE(reply.measure().error().find("does not fit in device memory"), std::string::npos)
      << reply.measure().error();
  ExpectGoodTiming(Measure(kCublas, 512), apb::L2_MODE_COLD_ROTATED);
}

TEST_F(WorkerGpu, ConsecutiveMeasurementsOfAProblemFindItsInputsResident) {
  v1::WorkerRequest release;
  release.mutable_release()->set_task_id(1);
  ASSERT_TRUE(Call(release).has_release());  // nothing left from the tests before
  v1::MeasureTask t = Task(kAblation, 4096, 4096, 4096);
  const Timed first = Measure(t);
  ExpectGoodTiming(first, apb::L2_MODE_COLD_ROTATED);
  EXPECT_FALSE(first.cost().inputs_reused());
  const Timed second = Measure(t);
  ExpectGoodTiming(second, apb::L2_MODE_COLD_ROTATED);
  EXPECT_TRUE(second.cost().inputs_reused());
  EXPECT_LT(second.cost().setup_seconds(), first.cost().setup_seconds());
  // The warm-up is its count and its 50 ms (the task's warmup_seconds), no more: the clocks are
  // the daemon's regime's business.
  EXPECT_GE(second.cost().warmup_seconds(), 0.05) << second.cost().ShortDebugString();
  EXPECT_LT(second.cost().warmup_seconds(), 0.08) << second.cost().ShortDebugString();
  for (const Timed* r : {&first, &second}) {
    const apb::Cost& c = r->cost();
    ASSERT_TRUE(c.has_worker_seconds() && c.has_setup_seconds() && c.has_warmup_seconds() &&
                c.has_sampling_seconds());
    EXPECT_LE(c.setup_seconds() + c.warmup_seconds() + c.sampling_seconds(), c.worker_seconds());
    // The loop's wall time holds the samples' GPU time, and little else.
    EXPECT_GE(c.sampling_seconds(), r->window.gpu_seconds());
    EXPECT_LT(c.sampling_seconds(), 1.2 * r->window.gpu_seconds() + 0.01) << c.ShortDebugString();
  }
  // B as N x K: the same A and B, with B^T and its copies made for it.
  v1::MeasureTask nk = Task("abl_L1_R1_bl1_s3_sw1", 4096, 4096, 4096);
  const Timed transposed = Measure(nk);
  ExpectGoodTiming(transposed, apb::L2_MODE_COLD_ROTATED);
  EXPECT_FALSE(transposed.cost().inputs_reused());
  EXPECT_TRUE(Measure(nk).cost().inputs_reused());
  // Another seed is another set of values, made again.
  t.set_seed(8);
  EXPECT_FALSE(Measure(t).cost().inputs_reused());
  // A verification on the resident inputs (written again from the seed, C poisoned) passes.
  EXPECT_TRUE(Verify(kAblation, 4096, apb::REFERENCE_CUBLAS).passed());
  const v1::WorkerReply released = Call(release);
  ASSERT_TRUE(released.has_release());
  EXPECT_GT(released.release().released_bytes(), 0);
  EXPECT_GE(released.release().released_problems(), 2);
  EXPECT_FALSE(Measure(t).cost().inputs_reused());
}

TEST_F(WorkerGpu, AWindowInterleavesItsVariantsOneSampleACycleEach) {
  // Two layouts of B, an ablation variant and cuBLAS: one window, sample c of each from cycle c.
  v1::MeasureTask t = Task(kAblation, 4096, 4096, 4096);
  t.add_variants("abl_L1_R1_bl1_s3_sw1");
  t.add_variants(kCublas);
  t.set_window_seconds(0.5);
  const Timed w = Measure(t);
  ExpectGoodTiming(w, apb::L2_MODE_COLD_ROTATED);
  ASSERT_EQ(w.window.members_size(), 3);
  EXPECT_EQ(w.window.members(2).variant(), kCublas);
  // Each sample holds one launch: cuBLAS is several times faster than the 1-stage variant in
  // every cycle, not only in the medians.
  const auto& slow = w.window.members(0);
  const auto& fast = w.window.members(2);
  int faster = 0;
  for (int c = 0; c < w.window.cycles(); ++c) faster += fast.sample_ms(c) < slow.sample_ms(c);
  EXPECT_EQ(faster, w.window.cycles());
  // The window's clock is the GPU-time-weighted mean of every sample's.
  EXPECT_GT(w.window.sm_mhz(), 500);
  std::printf("window of 3 at 4096^3: %d cycles, %.3f s of GPU time in %.3f s, %.0f MHz\n",
              w.window.cycles(), w.window.gpu_seconds(), w.cost().sampling_seconds(),
              w.window.sm_mhz());
}

TEST_F(WorkerGpu, AShortWindowEndsWithinABatchOfItsSpan) {
  // A burst window: 20 ms of cuBLAS at 4096^3 (about 0.19 ms a sample), not a 50 ms batch.
  v1::MeasureTask t = Task(kCublas, 4096, 4096, 4096);
  t.set_window_seconds(0.02);
  t.set_min_cycles(1);
  t.set_warmup(false);
  const Timed w = Measure(t);
  ASSERT_TRUE(w.ok()) << w.error();
  EXPECT_GE(w.cost().sampling_seconds(), 0.02);
  EXPECT_LT(w.cost().sampling_seconds(), 0.045) << "overshot by more than a batch";
  EXPECT_GT(w.window.cycles(), 50);
  EXPECT_LT(w.window.cycles(), 250);
}

}  // namespace
}  // namespace ablation::worker
