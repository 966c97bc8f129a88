// The worker test double (tests/support/fake_worker.cc) speaks worker.proto as the real worker
// does: the daemon's end-to-end tests store what it sends, so its statistics must be the ones
// the real worker computes from the same samples, and it must refuse what the real one refuses.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "server/protocol/clocks.h"
#include "server/protocol/verify_reference.h"
#include "server/protocol/window_stats.h"
#include "tests/support/test_paths.h"
#include "tests/worker/worker_client.h"

#ifndef FAKE_WORKER_BIN
#error "FAKE_WORKER_BIN must name the fake-worker executable"
#endif

namespace ablation::worker {
namespace {

using testing::WorkerClient;
namespace apb = ::ablation::v1;

class FakeWorker : public ::testing::Test {
 protected:
  void SetUp() override { Start({}); }
  void TearDown() override { Stop(); }

  void Start(const std::vector<std::string>& env) {
    ASSERT_TRUE(w_.Start(ablation::testing::TestBinary(FAKE_WORKER_BIN), {}, env));
    v1::WorkerReply reply;
    std::string err;
    ASSERT_EQ(w_.Receive(&reply, &err), protocol::ReadStatus::kOk) << err;
    ASSERT_TRUE(reply.has_hello());
    ASSERT_TRUE(reply.hello().device_present());
  }
  void Stop() {
    w_.CloseStdin();
    int st = w_.Wait();
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
  }
  /// A fresh double with these environment variables ("K=V") set.
  void Restart(const std::vector<std::string>& env) {
    Stop();
    Start(env);
  }

  v1::WorkerReply Call(const v1::WorkerRequest& req) {
    v1::WorkerReply reply;
    std::string err = w_.Send(req);
    EXPECT_EQ(err, "");
    EXPECT_EQ(w_.Receive(&reply, &err), protocol::ReadStatus::kOk) << err;
    return reply;
  }

  v1::MeasureResult Measure(bool hot_l2, int min_cycles, bool flush_l2 = false,
                            std::vector<std::string> variants = {"abl_L0_R1_bl0_s1_sw1"},
                            double window_seconds = 0) {
    v1::WorkerRequest req;
    auto* m = req.mutable_measure();
    m->set_task_id(5);
    for (const auto& v : variants) m->add_variants(v);
    m->set_min_cycles(min_cycles);
    m->set_window_seconds(window_seconds);
    m->set_dtype("bf16");
    m->mutable_shape()->set_m(1024);
    m->mutable_shape()->set_n(1024);
    m->mutable_shape()->set_k(1024);
    m->mutable_timing()->set_hot_l2(hot_l2);
    m->mutable_timing()->set_flush_l2(flush_l2);
    v1::WorkerReply reply = Call(req);
    EXPECT_TRUE(reply.has_measure());
    return reply.measure();
  }

  apb::VerifyResult Verify(apb::Reference reference, const std::string& reference_variant = "",
                           int64_t size = 256) {
    v1::WorkerRequest req;
    auto* v = req.mutable_verify();
    v->set_variant("abl_L0_R1_bl0_s1_sw1");
    v->set_dtype("bf16");
    v->mutable_shape()->set_m(size);
    v->mutable_shape()->set_n(size);
    v->mutable_shape()->set_k(size);
    v->set_reference(reference);
    v->set_reference_variant(reference_variant);
    v1::WorkerReply reply = Call(req);
    EXPECT_TRUE(reply.has_verify());
    return reply.verify();
  }

  WorkerClient w_;
};

TEST_F(FakeWorker, MeasureStatsAreTheWorkersOwn) {
  const v1::MeasureResult window = Measure(/*hot_l2=*/false, /*min_cycles=*/12);
  ASSERT_TRUE(window.ok()) << window.error();
  EXPECT_EQ(window.task_id(), 5u);
  EXPECT_EQ(window.l2(), apb::L2_MODE_COLD_ROTATED) << "the default: cold by rotation";
  EXPECT_EQ(window.cycles(), 12);
  EXPECT_EQ(window.sm_mhz(), 1980);
  ASSERT_EQ(window.members_size(), 1);
  const v1::MemberResult& r = window.members(0);
  EXPECT_TRUE(r.ok());
  ASSERT_EQ(r.sample_ms_size(), 12);
  ASSERT_TRUE(r.has_stats());
  // Every sample at the fake device's maximum clock, its cycles the real worker's definition.
  ASSERT_EQ(r.sample_sm_mhz_size(), 12);
  ASSERT_EQ(r.sample_cycles_size(), 12);
  std::vector<double> clocks(r.sample_sm_mhz().begin(), r.sample_sm_mhz().end());
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(r.sample_sm_mhz(i), 1980);
    EXPECT_EQ(r.sample_cycles(i), protocol::SampleCycles(r.sample_ms(i), 1980));
  }
  v1::MemberResult expected;
  *expected.mutable_sample_ms() = r.sample_ms();
  protocol::SetSampleClocks(&expected, clocks);
  protocol::SetStatsFromSamples(&expected, {.max_sm_mhz = 1980});
  EXPECT_EQ(r.stats().SerializeAsString(), expected.stats().SerializeAsString())
      << "got " << r.stats().ShortDebugString() << "\nwant " << expected.stats().ShortDebugString();
  EXPECT_EQ(r.stats().samples(), 12);
  EXPECT_GT(r.stats().noise(), 0);
  EXPECT_GT(r.stats().total_seconds(), 0);
  EXPECT_EQ(r.stats().median_sm_mhz(), 1980);
  EXPECT_TRUE(r.stats().has_low_clock_samples());
  EXPECT_EQ(r.stats().low_clock_samples(), 0);
  EXPECT_GT(r.stats().median_cycles(), 0);
}

TEST_F(FakeWorker, FlushL2IsReportedAsCold) {
  EXPECT_EQ(Measure(/*hot_l2=*/false, 0, /*flush_l2=*/true).l2(), apb::L2_MODE_COLD);
  EXPECT_EQ(Measure(/*hot_l2=*/true, 0, /*flush_l2=*/true).l2(), apb::L2_MODE_HOT)
      << "hot_l2 wins, as in the real worker";
}

TEST_F(FakeWorker, LowClockSamplesAreCountedAndTakeTheSameCycles) {
  Restart({"ABLATION_FAKE_LOW_CLOCK_SAMPLES=3"});
  const v1::MeasureResult window = Measure(/*hot_l2=*/false, /*min_cycles=*/12);
  ASSERT_TRUE(window.ok()) << window.error();
  const v1::MemberResult& r = window.members(0);
  EXPECT_EQ(r.stats().low_clock_samples(), 3);
  EXPECT_EQ(r.stats().median_sm_mhz(), 1980);
  ASSERT_EQ(r.sample_sm_mhz_size(), 12);
  EXPECT_EQ(r.sample_sm_mhz(0), 990);
  EXPECT_EQ(r.sample_sm_mhz(3), 1980);
  // Throttled samples take twice the time and the same work in cycles.
  EXPECT_NEAR(r.sample_ms(0) / r.sample_ms(3), 2.0, 0.01);
  EXPECT_NEAR(r.sample_cycles(0) / r.sample_cycles(3), 1.0, 0.01);
}

TEST_F(FakeWorker, ItsClockComesFromTheEnvironment) {
  Restart({"ABLATION_FAKE_SM_MHZ=1400"});
  const v1::MeasureResult window = Measure(/*hot_l2=*/false, /*min_cycles=*/10);
  ASSERT_TRUE(window.ok()) << window.error();
  const v1::MemberResult& r = window.members(0);
  EXPECT_EQ(r.stats().median_sm_mhz(), 1400);
  EXPECT_EQ(r.stats().low_clock_samples(), 10) << "1400 < 0.75 * 1980";
}

TEST_F(FakeWorker, HotL2IsReported) {
  const v1::MeasureResult r = Measure(/*hot_l2=*/true, /*min_cycles=*/0);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.l2(), apb::L2_MODE_HOT);
  EXPECT_EQ(r.members(0).stats().samples(), 1) << "a window has at least one cycle";
}

TEST_F(FakeWorker, AWindowInterleavesItsVariantsCycleByCycle) {
  Restart({"ABLATION_FAKE_SPEEDUP=abl_L1_R1_bl0_s1_sw1=2"});
  const v1::MeasureResult w =
      Measure(false, /*min_cycles=*/5, false, {"abl_L0_R1_bl0_s1_sw1", "abl_L1_R1_bl0_s1_sw1"});
  ASSERT_TRUE(w.ok()) << w.error();
  ASSERT_EQ(w.members_size(), 2);
  EXPECT_EQ(w.members(0).variant(), "abl_L0_R1_bl0_s1_sw1");
  EXPECT_EQ(w.members(1).variant(), "abl_L1_R1_bl0_s1_sw1");
  EXPECT_EQ(w.cycles(), 5);
  for (const auto& m : w.members()) EXPECT_EQ(m.sample_ms_size(), 5) << "one sample a cycle each";
  // Paired: sample c of one and sample c of the other, their ratio the speed-up.
  for (int c = 0; c < 5; ++c)
    EXPECT_NEAR(w.members(0).sample_ms(c) / w.members(1).sample_ms(c), 2.0, 0.005);
  double sum = 0;
  for (const auto& m : w.members())
    for (double ms : m.sample_ms()) sum += ms;
  EXPECT_NEAR(w.gpu_seconds(), sum / 1e3, 1e-12);
}

TEST_F(FakeWorker, AWindowRunsItsGpuTimeAndThinsWhatItReturns) {
  // 1024^3 at 100 TFLOPS: 0.0215 ms a sample, so 1 s is some 46,500 cycles: 2,000 come back.
  const v1::MeasureResult w = Measure(false, 1, false, {"abl_L0_R1_bl0_s1_sw1"}, 1.0);
  ASSERT_TRUE(w.ok()) << w.error();
  EXPECT_EQ(w.cycles(), 2000);
  EXPECT_NEAR(w.gpu_seconds(), 1.0, 0.001) << "the whole window's GPU time";
}

TEST_F(FakeWorker, ItsPowerCapLowersTheClockWithBusyTimeAndACoolDownRestoresIt) {
  Restart({"ABLATION_FAKE_POWER=1500:0.5"});
  const double first = Measure(false, 1, false, {"abl_L0_R1_bl0_s1_sw1"}, 0.05).sm_mhz();
  double last = first;
  for (int i = 0; i < 40; ++i)
    last = Measure(false, 1, false, {"abl_L0_R1_bl0_s1_sw1"}, 0.1).sm_mhz();
  EXPECT_GT(first, 1900);
  EXPECT_NEAR(last, 1500, 15) << "settled after 4 s of GPU time at tau 0.5 s";
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_GT(Measure(false, 1, false, {"abl_L0_R1_bl0_s1_sw1"}, 0.05).sm_mhz(), 1900)
      << "cooled down";
}

TEST_F(FakeWorker, VerifyEchoesTheReference) {
  apb::VerifyResult r = Verify(apb::REFERENCE_VARIANT, "abl_L1_R1_bl0_s1_sw1");
  EXPECT_TRUE(r.passed()) << r.error();
  EXPECT_EQ(r.reference(), apb::REFERENCE_VARIANT);
  EXPECT_EQ(r.reference_variant(), "abl_L1_R1_bl0_s1_sw1");
  EXPECT_EQ(r.dtype(), "bf16");
  EXPECT_EQ(r.shape().k(), 256);
  r = Verify(apb::REFERENCE_CUBLAS);
  EXPECT_TRUE(r.passed()) << r.error();
  EXPECT_EQ(r.reference(), apb::REFERENCE_CUBLAS);
  r = Verify(apb::REFERENCE_GPU);
  EXPECT_TRUE(r.passed()) << r.error();
  EXPECT_EQ(r.reference(), apb::REFERENCE_GPU);
}

TEST_F(FakeWorker, AReferenceThatCannotRunSaysSo) {
  // The real worker's limit of the CPU reference, in its words.
  apb::VerifyResult r = Verify(apb::REFERENCE_CPU, "", 4096);
  EXPECT_FALSE(r.passed());
  v1::VerifyTask task;
  task.mutable_shape()->set_m(4096);
  task.mutable_shape()->set_n(4096);
  task.mutable_shape()->set_k(4096);
  EXPECT_EQ(r.error(), protocol::CpuReferenceRefusal(task.shape()));
  EXPECT_EQ(r.error().rfind("reference: ", 0), 0u) << r.error();
  EXPECT_TRUE(Verify(apb::REFERENCE_CPU, "", 2048).passed()) << "2^33 multiply-adds: allowed";
  Restart({"ABLATION_FAKE_REFERENCE_FAIL=abl_L0_R1_bl0_s1_sw1"});
  r = Verify(apb::REFERENCE_CUBLAS);
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.error().rfind("reference: ", 0), 0u) << r.error();
}

TEST_F(FakeWorker, VerifyWithoutAReferenceIsRefusedAsByTheWorker) {
  const apb::VerifyResult r = Verify(apb::REFERENCE_UNSPECIFIED);
  EXPECT_FALSE(r.passed());
  v1::VerifyTask task;
  EXPECT_EQ(r.error(), protocol::CheckReference(task));
  EXPECT_EQ(r.error().rfind("VerifyTask.reference is unspecified", 0), 0u) << r.error();
}

}  // namespace
}  // namespace ablation::worker
