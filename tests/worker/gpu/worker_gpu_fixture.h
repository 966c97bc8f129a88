// The worker on a real GPU, through its binary and protocol (as the daemon drives it): one worker
// per test suite, requests built as the daemon builds them, and the checks every good measurement
// passes. Skips with "no CUDA device: ..." where there is none. Used by worker_test.cc and
// worker_timing_test.cc.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "server/protocol/sampling.h"
#include "server/protocol/window_stats.h"
#include "tests/support/test_paths.h"
#include "tests/worker/worker_client.h"

#ifndef ABLATION_WORKER_BIN
#error "ABLATION_WORKER_BIN must name the worker executable"
#endif

namespace ablation::worker {

namespace apb = ::ablation::v1;

inline constexpr const char* kAblation = "abl_L0_R1_bl0_s1_sw1";
inline constexpr const char* kCublas = "cublas_bf16";

/// A window's reply seen through its first variant, as most tests time one: the window's
/// outcome, L2 mode and cost, and that variant's samples, statistics and occupancy.
struct Timed {
  v1::MeasureResult window;
  const v1::MemberResult& member() const {
    static const v1::MemberResult kNone;
    return window.members_size() > 0 ? window.members(0) : kNone;
  }
  bool ok() const { return window.ok(); }
  const std::string& error() const { return window.error(); }
  apb::L2Mode l2() const { return window.l2(); }
  const apb::Cost& cost() const { return window.cost(); }
  const apb::TimingStats& stats() const { return member().stats(); }
  const apb::Occupancy& occupancy() const { return member().occupancy(); }
  int sample_ms_size() const { return member().sample_ms_size(); }
  const google::protobuf::RepeatedField<double>& sample_ms() const { return member().sample_ms(); }
  const google::protobuf::RepeatedField<double>& sample_sm_mhz() const {
    return member().sample_sm_mhz();
  }
  int sample_sm_mhz_size() const { return member().sample_sm_mhz_size(); }
  int sample_cycles_size() const { return member().sample_cycles_size(); }
};

class WorkerGpu : public ::testing::Test {
 protected:
  // One worker for the suite: a context and cuBLAS handles per test would only add minutes.
  static void SetUpTestSuite() {
    worker_ = std::make_unique<testing::WorkerClient>();
    setup_error_.clear();
    skip_reason_.clear();
    if (!worker_->Start(ablation::testing::TestBinary(ABLATION_WORKER_BIN), {"--device", "0"})) {
      setup_error_ = "cannot start " + ablation::testing::TestBinary(ABLATION_WORKER_BIN);
      return;
    }
    v1::WorkerReply reply;
    std::string err;
    if (worker_->Receive(&reply, &err, 120000) != protocol::ReadStatus::kOk || !reply.has_hello()) {
      setup_error_ = "no hello from the worker: " + err;
      return;
    }
    hello_ = reply.hello();
    if (!hello_.device_present()) {
      skip_reason_ = hello_.no_device_reason();  // "no CUDA device: ..."
      return;
    }
    int khz = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0) == cudaSuccess) max_mhz_ = khz / 1e3;
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

  /// The reply and, in *wall_s, the host time it took (what the method costs the daemon).
  static v1::WorkerReply Call(const v1::WorkerRequest& req, double* wall_s = nullptr) {
    v1::WorkerReply reply;
    const auto t0 = std::chrono::steady_clock::now();
    std::string err = worker_->Send(req);
    EXPECT_EQ(err, "");
    EXPECT_EQ(worker_->Receive(&reply, &err, 300000), protocol::ReadStatus::kOk) << err;
    if (wall_s) {
      *wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    return reply;
  }

  /// A window of one variant with the tests' timing: warmed up, at least 10 cycles and 0.2 s.
  static v1::MeasureTask Task(const std::string& variant, int64_t m, int64_t n, int64_t k,
                              const std::string& dtype = "bf16") {
    v1::MeasureTask task;
    task.set_task_id(uint64_t(m));
    task.add_variants(variant);
    task.set_window_seconds(0.2);
    task.set_min_cycles(10);
    task.set_warmup(true);
    task.set_dtype(dtype);
    task.mutable_shape()->set_m(m);
    task.mutable_shape()->set_n(n);
    task.mutable_shape()->set_k(k);
    task.set_seed(7);
    auto* t = task.mutable_timing();
    t->set_min_samples(10);
    t->set_min_seconds(0.2);
    t->set_max_seconds(5);
    t->set_target_noise(0.005);
    t->set_warmup_count(3);
    t->set_warmup_seconds(0.05);
    t->set_max_samples(100000);
    return task;
  }

  static Timed Measure(const v1::MeasureTask& task, double* wall_s = nullptr) {
    v1::WorkerRequest req;
    *req.mutable_measure() = task;
    v1::WorkerReply reply = Call(req, wall_s);
    EXPECT_TRUE(reply.has_measure());
    return {reply.measure()};
  }

  static Timed Measure(const std::string& variant, int64_t size, bool hot = false) {
    v1::MeasureTask task = Task(variant, size, size, size);
    task.mutable_timing()->set_hot_l2(hot);
    return Measure(task);
  }

  static apb::VerifyResult Verify(const std::string& variant, int64_t m, int64_t n, int64_t k,
                                  apb::Reference reference, const std::string& dtype = "bf16") {
    v1::WorkerRequest req;
    auto* v = req.mutable_verify();
    v->set_variant(variant);
    v->set_dtype(dtype);
    v->mutable_shape()->set_m(m);
    v->mutable_shape()->set_n(n);
    v->mutable_shape()->set_k(k);
    v->set_reference(reference);
    v->set_seed(7);
    v1::WorkerReply reply = Call(req);
    EXPECT_TRUE(reply.has_verify());
    return reply.verify();
  }

  static apb::VerifyResult Verify(const std::string& variant, int64_t size,
                                  apb::Reference reference) {
    return Verify(variant, size, size, size, reference);
  }

  static void ExpectGoodTiming(const Timed& t, apb::L2Mode l2) {
    ASSERT_TRUE(t.ok()) << t.error();
    EXPECT_EQ(t.l2(), l2);
    // The window's span (its sampling loop's wall time) and at least its 10 cycles, every
    // variant one sample a cycle.
    EXPECT_GE(t.window.cycles(), 10);
    EXPECT_GE(t.cost().sampling_seconds(), 0.2 - 1e-6);
    double gpu = 0;
    for (const v1::MemberResult& m : t.window.members()) {
      EXPECT_EQ(m.sample_ms_size(), t.window.cycles()) << m.variant();
      for (double ms : m.sample_ms()) gpu += ms / 1e3;
    }
    EXPECT_NEAR(t.window.gpu_seconds(), gpu, 1e-9);
    EXPECT_GT(t.window.sm_mhz(), 0);
    for (const v1::MemberResult& m : t.window.members()) ExpectGoodMember(m);
  }

  static void ExpectGoodMember(const v1::MemberResult& r) {
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_GE(r.sample_ms_size(), 10);
    std::vector<double> xs(r.sample_ms().begin(), r.sample_ms().end());
    protocol::SampleStats s = protocol::ComputeStats(xs);
    EXPECT_GT(s.min_ms, 0);
    EXPECT_TRUE(std::isfinite(s.noise));
    // Every sample has its clock (a probe pair on two SMs would be NaN: rare for <<<1,1>>>).
    ASSERT_EQ(r.sample_sm_mhz_size(), r.sample_ms_size());
    ASSERT_EQ(r.sample_cycles_size(), r.sample_ms_size());
    int usable = 0;
    for (double f : r.sample_sm_mhz()) usable += std::isfinite(f) ? 1 : 0;
    EXPECT_GE(usable, 0.9 * r.sample_ms_size());
    // The daemon stores the reply's statistics as they are: exactly those of its samples.
    v1::MemberResult expected;
    *expected.mutable_sample_ms() = r.sample_ms();
    protocol::SetSampleClocks(
        &expected, std::vector<double>(r.sample_sm_mhz().begin(), r.sample_sm_mhz().end()));
    protocol::SetStatsFromSamples(&expected, {.max_sm_mhz = max_mhz_});
    EXPECT_EQ(r.stats().SerializeAsString(), expected.stats().SerializeAsString())
        << r.stats().ShortDebugString();
    EXPECT_EQ(r.stats().samples(), r.sample_ms_size());
    EXPECT_EQ(r.stats().noise(), s.noise);
    // Plausible clocks (an H200 runs 1980 MHz at most) and cycles that are clock times time.
    ASSERT_TRUE(r.stats().has_median_sm_mhz());
    EXPECT_GE(r.stats().median_sm_mhz(), 500);
    EXPECT_LE(r.stats().median_sm_mhz(), 3000);
    EXPECT_LE(r.stats().median_sm_mhz(), max_mhz_ * 1.02) << "above the device's maximum";
    EXPECT_TRUE(r.stats().has_low_clock_samples());
    const double expected_cycles = r.stats().median_ms() * r.stats().median_sm_mhz() * 1e3;
    EXPECT_NEAR(r.stats().median_cycles() / expected_cycles, 1.0, 0.05);
  }

  static inline std::unique_ptr<testing::WorkerClient> worker_;
  static inline v1::Hello hello_;
  static inline std::string skip_reason_;
  static inline std::string setup_error_;
  static inline double max_mhz_ = 0;
};

}  // namespace ablation::worker
