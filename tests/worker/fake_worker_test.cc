// The worker test double (tests/support/fake_worker.cc) speaks worker.proto as the real worker
// does: the daemon's end-to-end tests store what it sends, so its statistics must be the ones
// the real worker computes from the same samples, and it must refuse what the real one refuses.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <string>

#include "server/worker/timing_stats.h"
#include "server/worker/verify_reference.h"
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
  void SetUp() override {
    ASSERT_TRUE(w_.Start(ablation::testing::TestBinary(FAKE_WORKER_BIN), {}));
    v1::WorkerReply reply;
    std::string err;
    ASSERT_EQ(w_.Receive(&reply, &err), ReadStatus::kOk) << err;
    ASSERT_TRUE(reply.has_hello());
    ASSERT_TRUE(reply.hello().device_present());
  }
  void TearDown() override {
    w_.CloseStdin();
    int st = w_.Wait();
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
  }

  v1::WorkerReply Call(const v1::WorkerRequest& req) {
    v1::WorkerReply reply;
    std::string err = w_.Send(req);
    EXPECT_EQ(err, "");
    EXPECT_EQ(w_.Receive(&reply, &err), ReadStatus::kOk) << err;
    return reply;
  }

  v1::MeasureResult Measure(bool hot_l2, int min_samples) {
    v1::WorkerRequest req;
    auto* m = req.mutable_measure();
    m->set_task_id(5);
    m->set_variant("abl_L0_R1_bl0_s1_sw1");
    m->set_dtype("bf16");
    m->mutable_shape()->set_m(1024);
    m->mutable_shape()->set_n(1024);
    m->mutable_shape()->set_k(1024);
    m->mutable_timing()->set_hot_l2(hot_l2);
    m->mutable_timing()->set_min_samples(min_samples);
    v1::WorkerReply reply = Call(req);
    EXPECT_TRUE(reply.has_measure());
    return reply.measure();
  }

  apb::VerifyResult Verify(apb::Reference reference, const std::string& reference_variant = "") {
    v1::WorkerRequest req;
    auto* v = req.mutable_verify();
    v->set_variant("abl_L0_R1_bl0_s1_sw1");
    v->set_dtype("bf16");
    v->mutable_shape()->set_m(256);
    v->mutable_shape()->set_n(256);
    v->mutable_shape()->set_k(256);
    v->set_reference(reference);
    v->set_reference_variant(reference_variant);
    v1::WorkerReply reply = Call(req);
    EXPECT_TRUE(reply.has_verify());
    return reply.verify();
  }

  WorkerClient w_;
};

TEST_F(FakeWorker, MeasureStatsAreTheWorkersOwn) {
  const v1::MeasureResult r = Measure(/*hot_l2=*/false, /*min_samples=*/12);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.task_id(), 5u);
  EXPECT_EQ(r.l2(), apb::L2_MODE_COLD);
  ASSERT_EQ(r.sample_ms_size(), 12);
  ASSERT_TRUE(r.has_stats());
  v1::MeasureResult expected;
  *expected.mutable_sample_ms() = r.sample_ms();
  SetStatsFromSamples(&expected);
  EXPECT_EQ(r.stats().SerializeAsString(), expected.stats().SerializeAsString())
      << "got " << r.stats().ShortDebugString() << "\nwant " << expected.stats().ShortDebugString();
  EXPECT_EQ(r.stats().samples(), 12);
  EXPECT_GT(r.stats().noise(), 0);
  EXPECT_GT(r.stats().total_seconds(), 0);
}

TEST_F(FakeWorker, HotL2IsReported) {
  const v1::MeasureResult r = Measure(/*hot_l2=*/true, /*min_samples=*/0);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.l2(), apb::L2_MODE_HOT);
  EXPECT_EQ(r.stats().samples(), 10);  // the double's own minimum
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
}

TEST_F(FakeWorker, VerifyWithoutAReferenceIsRefusedAsByTheWorker) {
  const apb::VerifyResult r = Verify(apb::REFERENCE_UNSPECIFIED);
  EXPECT_FALSE(r.passed());
  v1::VerifyTask task;
  EXPECT_EQ(r.error(), CheckReference(task));
  EXPECT_EQ(r.error().rfind("VerifyTask.reference is unspecified", 0), 0u) << r.error();
}

}  // namespace
}  // namespace ablation::worker
