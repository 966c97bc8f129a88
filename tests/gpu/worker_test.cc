// The worker on a real GPU, through its binary and protocol (as the daemon drives it). Skips
// with "no CUDA device: ..." where there is none.
#include <gtest/gtest.h>
#include "tests/support/test_paths.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include <cuda_runtime_api.h>

#include "server/worker/sampling.h"
#include "server/worker/timing_stats.h"
#include "tests/worker/worker_client.h"

#ifndef ABLATION_WORKER_BIN
#error "ABLATION_WORKER_BIN must name the worker executable"
#endif

namespace ablation::worker {
namespace {

using testing::WorkerClient;
namespace apb = ::ablation::v1;

constexpr const char* kAblation = "abl_L0_R1_bl0_s1_sw1";
constexpr const char* kCublas = "cublas_bf16";

class WorkerGpu : public ::testing::Test {
 protected:
  // One worker for the suite: a context and cuBLAS handles per test would only add minutes.
  static void SetUpTestSuite() {
    worker_ = std::make_unique<WorkerClient>();
    if (!worker_->Start(ablation::testing::TestBinary(ABLATION_WORKER_BIN), {"--device", "0"})) {
      setup_error_ = "cannot start " + ablation::testing::TestBinary(ABLATION_WORKER_BIN);
      return;
    }
    v1::WorkerReply reply;
    std::string err;
    if (worker_->Receive(&reply, &err, 120000) != ReadStatus::kOk || !reply.has_hello()) {
      setup_error_ = "no hello from the worker: " + err;
      return;
    }
    hello_ = reply.hello();
    if (!hello_.device_present())
      skip_reason_ = hello_.no_device_reason();  // "no CUDA device: ..."
  }
  static void TearDownTestSuite() {
    if (worker_) {
      worker_->CloseStdin();
      worker_->Wait();
    }
    worker_.reset();
  }
  void SetUp() override {
    // A worker that does not start is a failure; a machine without a device is a skip.
    if (!setup_error_.empty()) FAIL() << setup_error_;
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
  }

  static v1::WorkerReply Call(const v1::WorkerRequest& req) {
    v1::WorkerReply reply;
    std::string err = worker_->Send(req);
    EXPECT_EQ(err, "");
    EXPECT_EQ(worker_->Receive(&reply, &err, 300000), ReadStatus::kOk) << err;
    return reply;
  }

  static v1::MeasureResult Measure(const std::string& variant, int64_t size, bool hot = false) {
    v1::WorkerRequest req;
    auto* m = req.mutable_measure();
    m->set_task_id(uint64_t(size));
    m->set_variant(variant);
    m->set_dtype("bf16");
    m->mutable_shape()->set_m(size);
    m->mutable_shape()->set_n(size);
    m->mutable_shape()->set_k(size);
    m->set_seed(7);
    auto* t = m->mutable_timing();
    t->set_min_samples(10);
    t->set_min_seconds(0.2);
    t->set_max_seconds(5);
    t->set_target_noise(0.005);
    t->set_warmup_count(3);
    t->set_warmup_seconds(0.05);
    t->set_hot_l2(hot);
    t->set_max_samples(100000);
    v1::WorkerReply reply = Call(req);
    EXPECT_TRUE(reply.has_measure());
    return reply.measure();
  }

  static apb::VerifyResult Verify(const std::string& variant, int64_t size,
                                  apb::Reference reference) {
    v1::WorkerRequest req;
    auto* v = req.mutable_verify();
    v->set_variant(variant);
    v->set_dtype("bf16");
    v->mutable_shape()->set_m(size);
    v->mutable_shape()->set_n(size);
    v->mutable_shape()->set_k(size);
    v->set_reference(reference);
    v->set_seed(7);
    v1::WorkerReply reply = Call(req);
    EXPECT_TRUE(reply.has_verify());
    return reply.verify();
  }

  static void ExpectGoodTiming(const v1::MeasureResult& r, apb::L2Mode l2) {
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_GE(r.sample_ms_size(), 10);
    EXPECT_EQ(r.l2(), l2);
    std::vector<double> xs(r.sample_ms().begin(), r.sample_ms().end());
    SampleStats s = ComputeStats(xs);
    EXPECT_GT(s.min_ms, 0);
    EXPECT_TRUE(std::isfinite(s.noise));
    // Either the noise target or the 5 s cap ended it.
    EXPECT_TRUE(s.noise <= 0.005 || s.sum_ms >= 5000) << "noise " << s.noise;
    // The daemon stores the reply's statistics as they are: exactly those of its samples.
    v1::MeasureResult expected;
    *expected.mutable_sample_ms() = r.sample_ms();
    SetStatsFromSamples(&expected);
    EXPECT_EQ(r.stats().SerializeAsString(), expected.stats().SerializeAsString())
        << r.stats().ShortDebugString();
    EXPECT_EQ(r.stats().samples(), r.sample_ms_size());
    EXPECT_EQ(r.stats().noise(), s.noise);
  }

  static inline std::unique_ptr<WorkerClient> worker_;
  static inline v1::Hello hello_;
  static inline std::string skip_reason_;
  static inline std::string setup_error_;
};

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

TEST_F(WorkerGpu, MeasureAblationVariantWithOccupancy) {
  for (int64_t size : {512, 4096}) {
    SCOPED_TRACE(size);
    v1::MeasureResult r = Measure(kAblation, size);
    ExpectGoodTiming(r, apb::L2_MODE_COLD);
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
    v1::MeasureResult r = Measure(kCublas, size);
    ExpectGoodTiming(r, apb::L2_MODE_COLD);
    EXPECT_EQ(r.occupancy().registers_per_thread(), 0);
    EXPECT_EQ(r.occupancy().limiter(), "");
  }
}

TEST_F(WorkerGpu, HotL2IsReported) {
  ExpectGoodTiming(Measure(kCublas, 512, /*hot=*/true), apb::L2_MODE_HOT);
}

TEST_F(WorkerGpu, CublasAt4096IsInTheExpectedRange) {
  // H200 bf16 4096^3 is ~720 TFLOPS through PyTorch; anything far off means the timing is wrong.
  v1::MeasureResult r = Measure(kCublas, 4096);
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
  EXPECT_NE(r.error().find("too large for the CPU reference, use --against cublas"),
            std::string::npos)
      << r.error();
}

TEST_F(WorkerGpu, RefusesWhatCannotRun) {
  v1::MeasureResult r = Measure("no_such_variant", 512);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error().find("unknown variant"), std::string::npos) << r.error();
  // Far beyond any device's memory: refused before allocating, and the worker stays up.
  v1::WorkerRequest req;
  auto* m = req.mutable_measure();
  m->set_variant(kCublas);
  m->set_dtype("bf16");
  m->mutable_shape()->set_m(1 << 20);
  m->mutable_shape()->set_n(1 << 20);
  m->mutable_shape()->set_k(1 << 10);
  v1::WorkerReply reply = Call(req);
  EXPECT_FALSE(reply.measure().ok());
  EXPECT_NE(reply.measure().error().find("does not fit in device memory"), std::string::npos)
      << reply.measure().error();
  ExpectGoodTiming(Measure(kCublas, 512), apb::L2_MODE_COLD);
}

}  // namespace
}  // namespace ablation::worker
