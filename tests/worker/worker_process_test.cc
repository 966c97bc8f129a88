// The ablation-worker binary as the daemon sees it, on any machine: without a GPU it must still
// say hello, answer every request with the reason, and exit 0 at EOF.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include "tests/support/run_capture.h"
#include "tests/support/test_paths.h"

#include <cstdio>
#include <string>

#include <cuda_runtime_api.h>

#include "tests/worker/worker_client.h"

#ifndef ABLATION_WORKER_BIN
#error "ABLATION_WORKER_BIN must name the worker executable"
#endif

namespace ablation::worker {
namespace {

using testing::WorkerClient;
namespace apb = ::ablation::v1;

/// What the worker should find: the same CUDA query the worker makes.
bool MachineHasDevice() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

v1::Hello ReadHello(WorkerClient& w) {
  v1::WorkerReply reply;
  std::string err;
  EXPECT_EQ(w.Receive(&reply, &err), protocol::ReadStatus::kOk) << err;
  EXPECT_TRUE(reply.has_hello());
  return reply.hello();
}

v1::WorkerRequest MeasureRequest(const std::string& variant) {
  v1::WorkerRequest req;
  auto* m = req.mutable_measure();
  m->set_task_id(11);
  m->add_variants(variant);
  m->set_dtype("bf16");
  m->mutable_shape()->set_m(128);
  m->mutable_shape()->set_n(128);
  m->mutable_shape()->set_k(128);
  m->set_seed(1);
  return req;
}

v1::WorkerRequest VerifyRequest(const std::string& variant, apb::Reference reference,
                                const std::string& reference_variant = "") {
  v1::WorkerRequest req;
  auto* v = req.mutable_verify();
  v->set_task_id(12);
  v->set_variant(variant);
  v->set_dtype("bf16");
  v->mutable_shape()->set_m(128);
  v->mutable_shape()->set_n(128);
  v->mutable_shape()->set_k(128);
  v->set_reference(reference);
  v->set_reference_variant(reference_variant);
  v->set_seed(1);
  return req;
}

TEST(WorkerProcess, HelpExitsZero) {
  std::string cmd = ablation::testing::TestBinary(ABLATION_WORKER_BIN) + " --help";
  int st = 0;
  const std::string out = ablation::testing::RunCapture(cmd, &st);
  ASSERT_NE(st, -1) << "cannot run " << cmd;
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  EXPECT_NE(out.find("usage: ablation-worker --device N"), std::string::npos) << out;
}

// The algorithm a profiler hands a one-shot worker is checked before any device is opened: a
// cuBLASLt algorithm is 64 bytes, two hexadecimal digits each.
TEST(WorkerProcess, ProfileOnceRefusesALibraryAlgorithmThatIsNotOne) {
  const std::string good(128, 'a');
  for (const std::string& bad : {std::string("zz"), good.substr(1), good + "00", "0x" + good}) {
    SCOPED_TRACE(bad);
    const std::string cmd = ablation::testing::TestBinary(ABLATION_WORKER_BIN) +
                            " --profile-once --variant cublas_bf16_best --shape 64 "
                            "--library-algo '" +
                            bad + "' 2>&1";
    int st = 0;
    const std::string out = ablation::testing::RunCapture(cmd, &st);
    ASSERT_NE(st, -1) << "cannot run " << cmd;
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 2) << st << ": " << out;
    EXPECT_NE(
        out.find("--library-algo wants 128 hexadecimal digits (a cuBLASLt algorithm), got \"" +
                 bad + "\""),
        std::string::npos)
        << out;
  }
}

TEST(WorkerProcess, BadArgumentIsAUsageError) {
  WorkerClient w;
  ASSERT_TRUE(w.Start(ablation::testing::TestBinary(ABLATION_WORKER_BIN), {"--bogus"}));
  int st = w.Wait();
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 2) << st;
}

TEST(WorkerProcess, HelloRequestsAndExitOnEof) {
  WorkerClient w;
  ASSERT_TRUE(w.Start(ablation::testing::TestBinary(ABLATION_WORKER_BIN), {"--device", "0"}));
  v1::Hello hello = ReadHello(w);
  EXPECT_GT(hello.pid(), 0);
  ASSERT_EQ(hello.device_present(), MachineHasDevice()) << hello.no_device_reason();

  // A measurement: without a device it fails with the reason; with one, an unknown variant fails
  // with a clear message. Either way the worker stays up.
  ASSERT_EQ(w.Send(MeasureRequest("no_such_variant")), "");
  v1::WorkerReply reply;
  std::string err;
  ASSERT_EQ(w.Receive(&reply, &err), protocol::ReadStatus::kOk) << err;
  ASSERT_TRUE(reply.has_measure());
  EXPECT_EQ(reply.measure().task_id(), 11u);
  EXPECT_FALSE(reply.measure().ok());
  EXPECT_EQ(reply.measure().cycles(), 0);
  for (const auto& m : reply.measure().members())
    EXPECT_FALSE(m.has_stats()) << "a failed window has no statistics";
  if (hello.device_present()) {
    EXPECT_FALSE(hello.device().name().empty());
    EXPECT_EQ(hello.device().uuid().rfind("GPU-", 0), 0u) << hello.device().uuid();
    EXPECT_EQ(hello.device().uuid().size(), 40u);
    EXPECT_GT(hello.device().sm_count(), 0);
    EXPECT_GT(hello.device().l2_bytes(), 0);
    EXPECT_GE(hello.device_count(), 1);
    EXPECT_NE(reply.measure().error().find("unknown variant"), std::string::npos)
        << reply.measure().error();
  } else {
    EXPECT_EQ(hello.no_device_reason().rfind("no CUDA device: ", 0), 0u)
        << hello.no_device_reason();
    EXPECT_EQ(hello.device_count(), 0);
    EXPECT_EQ(reply.measure().error(), hello.no_device_reason());
  }

  ASSERT_EQ(w.Send(VerifyRequest("no_such_variant", apb::REFERENCE_CPU)), "");
  ASSERT_EQ(w.Receive(&reply, &err), protocol::ReadStatus::kOk) << err;
  ASSERT_TRUE(reply.has_verify());
  EXPECT_FALSE(reply.verify().passed());
  EXPECT_EQ(reply.verify().variant(), "no_such_variant");
  EXPECT_EQ(reply.verify().reference(), apb::REFERENCE_CPU);
  EXPECT_EQ(reply.verify().reference_variant(), "");
  if (!hello.device_present()) {
    EXPECT_EQ(reply.verify().error(), hello.no_device_reason());
  } else {
    EXPECT_NE(reply.verify().error().find("unknown variant"), std::string::npos)
        << reply.verify().error();
  }

  // An empty request is answered, not ignored.
  ASSERT_EQ(w.Send(v1::WorkerRequest()), "");
  ASSERT_EQ(w.Receive(&reply, &err), protocol::ReadStatus::kOk) << err;
  EXPECT_FALSE(reply.measure().ok());

  w.CloseStdin();
  int st = w.Wait();
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
}

// The daemon always chooses the reference; the worker has no default and says which field is
// wrong, on any machine (the check comes before the device is looked at).
TEST(WorkerProcess, VerifyWithoutAReferenceNamesTheField) {
  WorkerClient w;
  ASSERT_TRUE(w.Start(ablation::testing::TestBinary(ABLATION_WORKER_BIN), {"--device", "0"}));
  ReadHello(w);
  v1::WorkerReply reply;
  std::string err;
  ASSERT_EQ(w.Send(VerifyRequest("abl_L0_R1_bl0_s1_sw1", apb::REFERENCE_UNSPECIFIED)), "");
  ASSERT_EQ(w.Receive(&reply, &err), protocol::ReadStatus::kOk) << err;
  ASSERT_TRUE(reply.has_verify());
  EXPECT_FALSE(reply.verify().passed());
  EXPECT_EQ(reply.verify().reference(), apb::REFERENCE_UNSPECIFIED);
  EXPECT_EQ(reply.verify().error().rfind("VerifyTask.reference is unspecified", 0), 0u)
      << reply.verify().error();

  ASSERT_EQ(w.Send(VerifyRequest("abl_L0_R1_bl0_s1_sw1", apb::REFERENCE_VARIANT)), "");
  ASSERT_EQ(w.Receive(&reply, &err), protocol::ReadStatus::kOk) << err;
  EXPECT_FALSE(reply.verify().passed());
  EXPECT_EQ(reply.verify().error().rfind("VerifyTask.reference_variant is empty", 0), 0u)
      << reply.verify().error();

  w.CloseStdin();
  int st = w.Wait();
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
}

// A machine with no NVIDIA driver at all: the runtime calls that an "insufficient" driver; the
// worker names what is really missing.
TEST(WorkerProcess, AMachineWithoutADriverIsToldSoNotToUpgradeIt) {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver != nullptr) {
    dlclose(driver);
    GTEST_SKIP() << "this machine has an NVIDIA driver (libcuda.so.1 loads)";
  }
  WorkerClient w;
  ASSERT_TRUE(w.Start(ablation::testing::TestBinary(ABLATION_WORKER_BIN), {}));
  v1::Hello hello = ReadHello(w);
  EXPECT_FALSE(hello.device_present());
  EXPECT_EQ(
      hello.no_device_reason().rfind(
          "no CUDA device: no NVIDIA driver on this machine (libcuda.so.1 cannot be loaded: ", 0),
      0u)
      << hello.no_device_reason();
  EXPECT_EQ(hello.no_device_reason().find("insufficient"), std::string::npos);
  w.CloseStdin();
  w.Wait();
}

TEST(WorkerProcess, DeviceOutOfRangeIsNoDevice) {
  WorkerClient w;
  ASSERT_TRUE(w.Start(ablation::testing::TestBinary(ABLATION_WORKER_BIN), {"--device=4096"}));
  v1::Hello hello = ReadHello(w);
  EXPECT_FALSE(hello.device_present());
  EXPECT_EQ(hello.no_device_reason().rfind("no CUDA device: ", 0), 0u) << hello.no_device_reason();
  if (MachineHasDevice()) {
    EXPECT_NE(hello.no_device_reason().find("out of range"), std::string::npos);
  }
  w.CloseStdin();
  int st = w.Wait();
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
}

TEST(WorkerProcess, MalformedFrameEndsTheWorker) {
  WorkerClient w;
  ASSERT_TRUE(w.Start(ablation::testing::TestBinary(ABLATION_WORKER_BIN), {"--device", "0"}));
  ReadHello(w);
  ASSERT_TRUE(w.SendRaw(std::string("\xff\xff\xff\xff", 4)));  // length beyond the limit
  int st = w.Wait();
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 3) << st;
}

// The test-only hook the daemon's crash-recovery tests rely on: works with or without a GPU,
// because it fires before the task is looked at.
TEST(WorkerProcess, TestFaultCrashesOnTheNamedVariantOnly) {
  WorkerClient w;
  ASSERT_TRUE(w.Start(ablation::testing::TestBinary(ABLATION_WORKER_BIN), {"--device", "0"},
                      {"ABLATION_WORKER_TEST_FAULT=crash-on-variant:abl_crash_me"}));
  ReadHello(w);
  v1::WorkerReply reply;
  std::string err;
  ASSERT_EQ(w.Send(MeasureRequest("abl_other")), "");
  ASSERT_EQ(w.Receive(&reply, &err), protocol::ReadStatus::kOk) << err;
  EXPECT_FALSE(reply.measure().ok());  // unknown variant, or no device: but still alive

  ASSERT_EQ(w.Send(MeasureRequest("abl_crash_me")), "");
  EXPECT_EQ(w.Receive(&reply, &err), protocol::ReadStatus::kEof);
  int st = w.Wait();
  EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT) << st;
}

}  // namespace
}  // namespace ablation::worker
