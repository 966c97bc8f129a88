// ablationd and ablation-client end to end over real gRPC on loopback with a real SQLite file.
// The worker is the test double (tests/support/fake_worker.cc), so this runs without a GPU and
// exercises the daemon's whole run path: validation, queue, stream, store, crash recovery.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gmock/gmock.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "db/store.h"
#include "tests/e2e/harness.h"

namespace ablation::testing {
namespace {

using ::testing::HasSubstr;

class E2E : public ::testing::Test {
 protected:
  void StartDaemon(std::map<std::string, std::string> env = {}) {
    dir_ = MakeTempDir();
    ASSERT_FALSE(dir_.empty());
    daemon_ = std::make_unique<Daemon>(dir_, FAKE_WORKER_PATH, std::move(env));
    std::string err = daemon_->Start();
    ASSERT_EQ(err, "");
  }
  void TearDown() override {
    if (daemon_) daemon_->Stop(SIGTERM);
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::unique_ptr<db::Store> OpenDb() { return db::Store::OpenReadOnly(daemon_->db_path()); }

  // Runs RunAblation through a stub and collects every event until the stream ends.
  grpc::Status RunStream(const v1::RunRequest& req, std::vector<v1::RunEvent>* events) {
    auto stub = daemon_->Stub();
    grpc::ClientContext ctx;
    auto reader = stub->RunAblation(&ctx, req);
    v1::RunEvent ev;
    while (reader->Read(&ev)) events->push_back(ev);
    return reader->Finish();
  }

  static v1::RunRequest Request(std::vector<std::string> variants, int64_t m, int64_t n,
                                int64_t k) {
    v1::RunRequest req;
    for (auto& v : variants) req.add_variants(v);
    auto* s = req.add_shapes();
    s->set_m(m);
    s->set_n(n);
    s->set_k(k);
    req.mutable_timing()->set_min_seconds(0.001);
    return req;
  }

  std::string dir_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(E2E, WithoutGpuTheDaemonServesQueriesAndRefusesRuns) {
  StartDaemon({{"ABLATION_FAKE_NO_DEVICE", "no CUDA device: CUDA driver not found (test)"}});
  auto device = daemon_->Client({"device"});
  EXPECT_EQ(device.exit_code, 0) << device.err;
  EXPECT_THAT(device.out + device.err, HasSubstr("CUDA driver not found"));

  auto variants = daemon_->Client({"variants"});
  EXPECT_EQ(variants.exit_code, 0) << variants.err;
  EXPECT_THAT(variants.out, HasSubstr("abl_L0_R1_bl0_s1_sw1"));
  EXPECT_THAT(variants.out, HasSubstr("cublas_bf16"));

  auto run = daemon_->Client({"run", "--variant", "L0_R1_s1", "--shape", "256x256x256"});
  EXPECT_NE(run.exit_code, 0);
  EXPECT_THAT(run.err, HasSubstr("FAILED_PRECONDITION"));
  EXPECT_THAT(run.err, HasSubstr("CUDA driver not found"));

  auto runs = daemon_->Client({"runs", "--format", "json"});
  EXPECT_EQ(runs.exit_code, 0) << runs.err;
  EXPECT_FALSE(OpenDb()->LatestRun().has_value()) << "a refused run must write nothing";
}

TEST_F(E2E, ClientRunStoresAndPrintsMeasurementsOfBothKernels) {
  StartDaemon();
  auto run = daemon_->Client({"run", "--variant", "L0_R1_s1", "--variant", "cublas_bf16", "--shape",
                              "256x256x256", "--shape", "512x512x512", "--tag", "e2e",
                              "--min-samples", "10"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  // Output shows canonical names only.
  EXPECT_THAT(run.out, HasSubstr("abl_L0_R1_bl0_s1_sw1"));
  EXPECT_THAT(run.out, HasSubstr("cublas_bf16"));

  auto store = OpenDb();
  auto latest = store->LatestRun();
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->state(), v1::RUN_STATE_SUCCEEDED);
  EXPECT_EQ(latest->planned(), 4);
  EXPECT_EQ(latest->ok(), 4);
  EXPECT_EQ(latest->device().name(), "Fake GPU (test double)");
  EXPECT_FALSE(latest->daemon_version().empty());
  EXPECT_FALSE(latest->git_revision().empty());
  ASSERT_EQ(latest->tags_size(), 1);
  EXPECT_EQ(latest->tags(0), "e2e");
  auto ms = store->MeasurementsOfRun(latest->id(), true);
  ASSERT_EQ(ms.size(), 4u);
  for (const auto& m : ms) {
    EXPECT_EQ(m.status(), v1::MEASUREMENT_STATUS_OK);
    EXPECT_GE(m.stats().samples(), 10);
    EXPECT_EQ(m.sample_ms_size(), size_t(m.stats().samples()));
    EXPECT_GT(m.tflops(), 0);
    EXPECT_EQ(m.l2(), v1::L2_MODE_COLD_ROTATED) << "L2 cold by rotation is the default";
  }

  // The stored results are there for queries through the client too.
  auto results = daemon_->Client({"results", "--variant", "abl_*", "--format", "csv"});
  EXPECT_EQ(results.exit_code, 0) << results.err;
  EXPECT_THAT(results.out, HasSubstr("abl_L0_R1_bl0_s1_sw1"));
  EXPECT_EQ(results.out.find("cublas_bf16"), std::string::npos);
  auto runs = daemon_->Client({"runs"});
  EXPECT_EQ(runs.exit_code, 0);
  EXPECT_THAT(runs.out, HasSubstr("succeeded"));
}

TEST_F(E2E, StreamGivesQueuedStartedEveryMeasurementThenFinished) {
  StartDaemon();
  std::vector<v1::RunEvent> events;
  auto req = Request({"abl_L0_R1_bl0_s1_sw1", "cublas_bf16"}, 256, 256, 256);
  ASSERT_TRUE(RunStream(req, &events).ok());
  ASSERT_GE(events.size(), 5u);
  EXPECT_TRUE(events.front().has_queued());
  EXPECT_EQ(events.front().queued().position(), 0);
  int started = 0, measurements = 0;
  for (const auto& e : events) {
    started += e.has_started();
    measurements += e.has_measurement();
  }
  EXPECT_EQ(started, 1);
  EXPECT_EQ(measurements, 2);
  ASSERT_TRUE(events.back().has_finished());
  EXPECT_EQ(events.back().finished().state(), v1::RUN_STATE_SUCCEEDED);
  // Each measurement event carries the id of the row already committed.
  auto store = OpenDb();
  for (const auto& e : events)
    if (e.has_measurement()) {
      auto page = store->QueryMeasurements({.run_id = e.measurement().run_id()});
      bool found = false;
      for (const auto& m : page.measurements) found |= m.id() == e.measurement().id();
      EXPECT_TRUE(found);
    }
}

TEST_F(E2E, BadInputIsRefusedNamingTheFieldAndNothingIsWritten) {
  StartDaemon({{"ABLATION_FAKE_MEMORY_MB", "1024"}});
  auto stub = daemon_->Stub();
  struct Case {
    v1::RunRequest request;
    std::string expect;
  };
  std::vector<Case> cases;
  cases.push_back({v1::RunRequest(), "variants"});  // empty request
  cases.push_back({Request({"L9_R1_s3"}, 256, 256, 256), "closest known: abl_"});
  {
    auto r = Request({"abl_L0_R1_bl0_s1_sw1"}, 256, 256, 256);
    r.set_dtype("fp32");
    cases.push_back({r, "has no fp32 kernel"});
  }
  {
    auto r = Request({"abl_L0_R1_bl0_s1_sw1"}, 256, 256, 256);
    r.set_dtype("bf15");
    cases.push_back({r, "dtype: unknown dtype 'bf15'"});
  }
  cases.push_back(
      {Request({"abl_L0_R1_bl0_s1_sw1"}, 0, 256, 256), "shapes[0]: M, N and K must be positive"});
  cases.push_back({Request({"abl_L0_R1_bl0_s1_sw1"}, -4, 256, 256), "shapes[0]"});
  cases.push_back({Request({"abl_L0_R1_bl0_s1_sw1"}, 200, 256, 256), "cannot run 200x256x256"});
  cases.push_back({Request({"abl_L0_R1_bl0_s1_sw1"}, 16384, 16384, 16384), "MiB of device memory"});
  cases.push_back({Request({"nothing_*"}, 256, 256, 256), "matches no variant"});
  {
    auto r = Request({"abl_L0_R1_bl0_s1_sw1"}, 256, 256, 256);
    r.mutable_timing()->set_target_noise(2);
    cases.push_back({r, "timing.target_noise"});
  }
  {
    auto r = Request({"abl_L0_R1_bl0_s1_sw1"}, 256, 256, 256);
    r.mutable_clocks()->set_mode(static_cast<v1::ClockMode>(7));
    cases.push_back({r, "clocks.mode"});
  }
  for (const auto& c : cases) {
    std::vector<v1::RunEvent> events;
    grpc::Status st = RunStream(c.request, &events);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.expect;
    EXPECT_THAT(st.error_message(), HasSubstr(c.expect));
    EXPECT_TRUE(events.empty());
  }
  // The client says it too, with a non-zero exit code.
  auto run = daemon_->Client({"run", "--variant", "L1_R1_s9"});
  EXPECT_NE(run.exit_code, 0);
  EXPECT_THAT(run.err, HasSubstr("INVALID_ARGUMENT"));
  EXPECT_THAT(run.err, HasSubstr("unknown variant 'L1_R1_s9'"));

  EXPECT_FALSE(OpenDb()->LatestRun().has_value()) << "refused requests must write nothing";
}

TEST_F(E2E, WorkerThatDiesMidRunIsRecordedAndReplacedAndTheRunGoesOn) {
  StartDaemon({{"ABLATION_FAKE_CRASH_ON", "abl_L0_R1_bl0_s1_sw1"}});
  std::vector<v1::RunEvent> events;
  auto req =
      Request({"cublas_bf16", "abl_L0_R1_bl0_s1_sw1", "abl_L1_R1_bl0_s3_sw1"}, 256, 256, 256);
  ASSERT_TRUE(RunStream(req, &events).ok());
  std::vector<v1::Measurement> ms;
  for (const auto& e : events)
    if (e.has_measurement()) ms.push_back(e.measurement());
  ASSERT_EQ(ms.size(), 3u);
  EXPECT_EQ(ms[0].status(), v1::MEASUREMENT_STATUS_OK);
  EXPECT_EQ(ms[1].status(), v1::MEASUREMENT_STATUS_FAILED);
  EXPECT_THAT(ms[1].error(), HasSubstr("worker died"));
  EXPECT_THAT(ms[1].error(), HasSubstr("signal 6"));
  EXPECT_EQ(ms[2].status(), v1::MEASUREMENT_STATUS_OK) << "a new worker must take over";
  ASSERT_TRUE(events.back().has_finished());
  EXPECT_EQ(events.back().finished().state(), v1::RUN_STATE_PARTIAL);

  auto store = OpenDb();
  auto run = store->LatestRun();
  ASSERT_TRUE(run);
  EXPECT_EQ(run->state(), v1::RUN_STATE_PARTIAL);
  EXPECT_EQ(run->failed(), 1);
  // The daemon goes on serving.
  auto device = daemon_->Client({"device"});
  EXPECT_EQ(device.exit_code, 0);
  // And the client reports the failure with a non-zero exit code.
  auto again = daemon_->Client({"run", "--variant", "L0_R1_s1", "--shape", "256x256x256"});
  EXPECT_NE(again.exit_code, 0);
}

TEST_F(E2E, CancelStopsARunAtTheNextMeasurementBoundary) {
  StartDaemon({{"ABLATION_FAKE_SLEEP_MS", "300"}});
  auto req = Request({"abl_L1_R1_bl0_s*_sw1"}, 256, 256, 256);  // 4 variants
  req.add_shapes()->CopyFrom(req.shapes(0));
  req.mutable_shapes(1)->set_k(512);  // 8 measurements, ~2.4 s
  auto stub = daemon_->Stub();
  grpc::ClientContext ctx;
  auto reader = stub->RunAblation(&ctx, req);
  v1::RunEvent ev;
  int64_t run_id = 0;
  std::vector<v1::RunEvent> events;
  while (reader->Read(&ev)) {
    events.push_back(ev);
    if (ev.has_queued()) run_id = ev.queued().run_id();
    if (ev.has_measurement()) {
      grpc::ClientContext cctx;
      v1::CancelRunRequest creq;
      creq.set_run_id(run_id);
      v1::CancelRunResponse cresp;
      ASSERT_TRUE(stub->CancelRun(&cctx, creq, &cresp).ok());
      EXPECT_EQ(cresp.cancelling(), true);
      break;
    }
  }
  while (reader->Read(&ev)) events.push_back(ev);
  ASSERT_TRUE(reader->Finish().ok());
  ASSERT_TRUE(events.back().has_finished());
  EXPECT_EQ(events.back().finished().state(), v1::RUN_STATE_CANCELLED);
  auto run = OpenDb()->GetRun(run_id);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->state(), v1::RUN_STATE_CANCELLED);
  EXPECT_LT(run->ok(), 8);
  EXPECT_GE(run->ok(), 1);
}

TEST_F(E2E, ClientThatDisconnectsLeavesItsRunRunning) {
  StartDaemon({{"ABLATION_FAKE_SLEEP_MS", "100"}});
  auto req = Request({"abl_L1_R1_bl0_s*_sw1"}, 256, 256, 256);  // 4 measurements
  int64_t run_id = 0;
  {
    auto stub = daemon_->Stub();
    grpc::ClientContext ctx;
    auto reader = stub->RunAblation(&ctx, req);
    v1::RunEvent ev;
    while (reader->Read(&ev)) {
      if (ev.has_queued()) run_id = ev.queued().run_id();
      if (ev.has_started()) break;
    }
    ctx.TryCancel();
    while (reader->Read(&ev)) {
    }
    reader->Finish();
  }
  ASSERT_GT(run_id, 0);
  // The run is the daemon's: it goes on to its end (only CancelRun stops it).
  v1::RunState state = v1::RUN_STATE_UNSPECIFIED;
  for (int i = 0; i < 100; ++i) {
    auto run = OpenDb()->GetRun(run_id);
    state = run ? run->state() : v1::RUN_STATE_UNSPECIFIED;
    if (state != v1::RUN_STATE_QUEUED && state != v1::RUN_STATE_RUNNING) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(state, v1::RUN_STATE_SUCCEEDED);
  EXPECT_EQ(OpenDb()->GetRun(run_id)->ok(), 4);
}

TEST_F(E2E, RunsQueueFifoOnOneGpu) {
  StartDaemon({{"ABLATION_FAKE_SLEEP_MS", "200"}});
  auto req = Request({"abl_L1_R1_bl0_s*_sw1"}, 256, 256, 256);  // ~0.8 s
  std::vector<v1::RunEvent> first, second;
  std::thread t1([&] { RunStream(req, &first); });
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  std::thread t2([&] { RunStream(req, &second); });
  t1.join();
  t2.join();
  ASSERT_FALSE(second.empty());
  ASSERT_TRUE(second.front().has_queued());
  EXPECT_EQ(second.front().queued().position(), 0) << "next to start behind the running run";
  ASSERT_TRUE(first.back().has_finished());
  ASSERT_TRUE(second.back().has_finished());
  auto store = OpenDb();
  auto a = store->GetRun(first.back().finished().run_id());
  auto b = store->GetRun(second.back().finished().run_id());
  ASSERT_TRUE(a && b);
  EXPECT_LE(a->finished_at_ms(), b->started_at_ms())
      << "the second run starts after the first ends";
}

TEST_F(E2E, RunLeftUnfinishedByAKilledDaemonIsMarkedAtRestart) {
  StartDaemon({{"ABLATION_FAKE_SLEEP_MS", "500"}});
  auto req = Request({"abl_L1_R1_bl0_s*_sw1"}, 256, 256, 256);
  int64_t run_id = 0;
  std::thread streamer([&] {
    auto stub = daemon_->Stub();
    grpc::ClientContext ctx;
    auto reader = stub->RunAblation(&ctx, req);
    v1::RunEvent ev;
    while (reader->Read(&ev))
      if (ev.has_queued()) run_id = ev.queued().run_id();
    reader->Finish();
  });
  for (int i = 0; i < 100 && run_id == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  daemon_->Stop(SIGKILL);
  streamer.join();
  ASSERT_GT(run_id, 0);
  ASSERT_EQ(daemon_->Start(), "");
  auto run = OpenDb()->GetRun(run_id);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->state(), v1::RUN_STATE_FAILED);
  EXPECT_THAT(run->error(), HasSubstr("interrupted"));
}

TEST_F(E2E, VerifyIsStoredAndLinkedToItsRun) {
  StartDaemon({{"ABLATION_FAKE_FAIL_VERIFY", "abl_L1_R0_bl0_s2_sw1"}});
  auto ok = daemon_->Client({"verify", "--variant", "L1_R1_s2", "--shape", "256x256x256"});
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  auto bad = daemon_->Client({"verify", "--variant", "L1_R0_s2", "--shape", "256x256x256"});
  EXPECT_NE(bad.exit_code, 0);
  auto store = OpenDb();
  auto run = store->LatestRun();
  ASSERT_TRUE(run);
  EXPECT_EQ(run->kind(), v1::RUN_KIND_VERIFY);
  auto v = store->VerificationsOfRun(run->id());
  ASSERT_EQ(v.size(), 1u);
  EXPECT_FALSE(v[0].passed());
  EXPECT_EQ(v[0].reference(), v1::REFERENCE_CPU);

  // run --verify: a failing variant is marked failed, the sweep goes on.
  auto run2 = daemon_->Client({"run", "--verify", "--variant", "L1_R0_s2", "--variant", "L1_R1_s2",
                               "--shape", "256x256x256"});
  EXPECT_NE(run2.exit_code, 0);
  auto latest = store->LatestRun();
  ASSERT_TRUE(latest);
  auto ms = store->MeasurementsOfRun(latest->id(), false);
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_EQ(ms[0].status(), v1::MEASUREMENT_STATUS_FAILED);
  EXPECT_THAT(ms[0].error(), HasSubstr("verification failed"));
  EXPECT_EQ(ms[1].status(), v1::MEASUREMENT_STATUS_OK);
  EXPECT_EQ(ms[1].verification(), "passed");
}

// Calls a unary method by name with raw bytes, as a tool like grpcurl would.
grpc::Status RawUnary(const std::string& address, const std::string& method,
                      const std::string& request, std::string* response) {
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue cq;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::Slice slice(request);
  grpc::ByteBuffer req_buf(&slice, 1), resp_buf;
  auto call = stub.PrepareUnaryCall(&ctx, method, req_buf, &cq);
  call->StartCall();
  grpc::Status status;
  call->Finish(&resp_buf, &status, reinterpret_cast<void*>(1));
  void* tag = nullptr;
  bool ok = false;
  cq.Next(&tag, &ok);
  std::vector<grpc::Slice> slices;
  if (status.ok()) (void)resp_buf.Dump(&slices);
  response->clear();
  for (auto& s : slices) response->append(reinterpret_cast<const char*>(s.begin()), s.size());
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  return status;
}

TEST_F(E2E, HealthIsServing) {
  StartDaemon();
  std::string body;
  grpc::Status st = RawUnary(daemon_->address(), "/grpc.health.v1.Health/Check", "", &body);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(body, std::string("\x08\x01", 2)) << "HealthCheckResponse{status: SERVING}";
}

// HealthCheckRequest{service: name}, answered with HealthCheckResponse{status}.
std::string HealthOf(const std::string& address, const std::string& service) {
  std::string body;
  std::string request = "\x0a" + std::string(1, char(service.size())) + service;
  grpc::Status st = RawUnary(address, "/grpc.health.v1.Health/Check", request, &body);
  if (!st.ok()) return "error " + st.error_message();
  return body == std::string("\x08\x01", 2) ? "SERVING" : "NOT_SERVING";
}

TEST_F(E2E, HealthIsPerServiceRunsNeedAUsableGpu) {
  StartDaemon({{"ABLATION_FAKE_NO_DEVICE", "no CUDA device (test)"}});
  EXPECT_EQ(HealthOf(daemon_->address(), "ablation.v1.Runs"), "NOT_SERVING");
  EXPECT_EQ(HealthOf(daemon_->address(), "ablation.v1.Inspection"), "NOT_SERVING");
  EXPECT_EQ(HealthOf(daemon_->address(), "ablation.v1.Queries"), "SERVING");
  EXPECT_EQ(HealthOf(daemon_->address(), "ablation.v1.Kernels"), "SERVING");
  EXPECT_EQ(HealthOf(daemon_->address(), "ablation.v1.Ablation"), "SERVING")
      << "the whole service by its own name";
  EXPECT_EQ(HealthOf(daemon_->address(), ""), "SERVING");
  // Health names only services that exist.
  EXPECT_THAT(HealthOf(daemon_->address(), "ablation.v1.Nothing"), HasSubstr("error"));
}

TEST_F(E2E, HealthSaysRunsServeWithAGpu) {
  StartDaemon();
  EXPECT_EQ(HealthOf(daemon_->address(), "ablation.v1.Runs"), "SERVING");
  EXPECT_EQ(HealthOf(daemon_->address(), "ablation.v1.Inspection"), "SERVING");
}

// Every service health names is served and listed by reflection, and a method called under its
// own service answers as it does under Ablation: same handler, same answer.
TEST_F(E2E, TheSplitServicesAnswerAsAblationDoes) {
  StartDaemon();
  auto channel = grpc::CreateChannel(daemon_->address(), grpc::InsecureChannelCredentials());
  auto queries = v1::Queries::NewStub(channel);
  auto runs = v1::Runs::NewStub(channel);
  auto kernels = v1::Kernels::NewStub(channel);
  {
    grpc::ClientContext ctx;
    v1::RunRequest request;
    request.add_variants("cublas_bf16");
    v1::Shape* shape = request.add_shapes();
    shape->set_m(256);
    shape->set_n(256);
    shape->set_k(256);
    auto reader = runs->RunAblation(&ctx, request);
    v1::RunEvent event;
    int measurements = 0;
    while (reader->Read(&event)) measurements += event.has_measurement();
    ASSERT_TRUE(reader->Finish().ok());
    EXPECT_EQ(measurements, 1);
  }
  grpc::ClientContext a, b;
  v1::ListRunsResponse split, whole;
  ASSERT_TRUE(queries->ListRuns(&a, v1::ListRunsRequest(), &split).ok());
  ASSERT_TRUE(daemon_->Stub()->ListRuns(&b, v1::ListRunsRequest(), &whole).ok());
  EXPECT_EQ(split.SerializeAsString(), whole.SerializeAsString());
  EXPECT_EQ(split.runs_size(), 1);
  grpc::ClientContext c;
  v1::ListKernelsResponse listed;
  EXPECT_TRUE(kernels->ListKernels(&c, v1::ListKernelsRequest(), &listed).ok());
  // A method under a service that lacks it is named with that service.
  std::string body;
  grpc::Status st = RawUnary(daemon_->address(), "/ablation.v1.Queries/RunAblation", "", &body);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_THAT(st.error_message(), HasSubstr("ablation.v1.Queries has no method 'RunAblation'"));
}

// ServerReflectionRequest{list_services: ""} on the reflection stream `method`; the answer.
std::string ListServicesThrough(const std::string& address, const std::string& method) {
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue cq;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto call = stub.PrepareCall(&ctx, method, &cq);
  void* tag = nullptr;
  bool ok = false;
  // Waits for the completion of the operation tagged `id`; its success.
  auto step = [&](intptr_t id) {
    while (cq.Next(&tag, &ok))
      if (reinterpret_cast<intptr_t>(tag) == id) return ok;
    return false;
  };
  std::string body;
  call->StartCall(reinterpret_cast<void*>(1));
  if (step(1)) {
    // Field 7 (list_services), length-delimited, empty.
    grpc::Slice req(std::string("\x3a\x00", 2));
    grpc::ByteBuffer req_buf(&req, 1);
    call->Write(req_buf, reinterpret_cast<void*>(2));
    grpc::ByteBuffer resp_buf;
    std::vector<grpc::Slice> slices;
    if (step(2)) call->Read(&resp_buf, reinterpret_cast<void*>(3));
    if (step(3) && resp_buf.Dump(&slices).ok())
      for (auto& sl : slices) body.append(reinterpret_cast<const char*>(sl.begin()), sl.size());
    call->WritesDone(reinterpret_cast<void*>(4));
    step(4);
  }
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(5));
  step(5);
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  return body;
}

TEST_F(E2E, ServerReflectionV1alphaAndV1ListTheServices) {
  StartDaemon();
  for (const char* method : {"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
                             "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"}) {
    const std::string body = ListServicesThrough(daemon_->address(), method);
    EXPECT_THAT(body, HasSubstr("ablation.v1.Ablation")) << method;
    EXPECT_THAT(body, HasSubstr("grpc.health.v1.Health")) << method;
    for (const char* split : {"ablation.v1.Runs", "ablation.v1.Queries", "ablation.v1.Inspection",
                              "ablation.v1.Kernels"})
      EXPECT_THAT(body, HasSubstr(split)) << method;
  }
}

TEST_F(E2E, BudgetShowsTheSharedMemoryTable) {
  StartDaemon();
  auto ga104 = daemon_->Client({"budget", "L1_R1_s4", "--arch", "sm_86"});
  ASSERT_EQ(ga104.exit_code, 0) << ga104.err;
  EXPECT_THAT(ga104.out, HasSubstr("abl_L1_R1_bl0_s4_sw1 on sm_86"));
  EXPECT_THAT(ga104.out, HasSubstr("64 KB"));
  EXPECT_THAT(ga104.out, HasSubstr("past the 50 KB cliff"));
  auto csv =
      daemon_->Client({"budget", "abl_L1_R1_bl0_s3_sw1", "--arch", "sm_80", "--format", "csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_THAT(csv.out, HasSubstr("49152"));
  auto bad = daemon_->Client({"budget", "L1_R1_s3", "--arch", "sm_70"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.err, HasSubstr("arch: unknown architecture 'sm_70'"));
  auto lib = daemon_->Client({"budget", "cublas_bf16", "--arch", "sm_90"});
  EXPECT_NE(lib.exit_code, 0);
  EXPECT_THAT(lib.err, HasSubstr("no budget"));
}

TEST_F(E2E, ReportOfARunWhoseSamplesExceedFourMegabytes) {
  StartDaemon();
  // 8 measurements x 100000 samples x 8 bytes: 6.4 MB of samples, past gRPC's 4 MB default.
  auto run = daemon_->Client({"run", "--variant", "abl_L1_R1_bl0_s*_sw1", "--variant",
                              "abl_L1_R1_bl0_s*_sw1_rb1", "--shape", "256", "--min-samples",
                              "100000", "-q"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto report = daemon_->Client({"report", "latest", "--format", "md"});
  EXPECT_EQ(report.exit_code, 0) << report.err;
  EXPECT_THAT(report.out, HasSubstr("abl_L1_R1_bl0_s4_sw1_rb1"));
}

// The unit file grants clock locking as an ambient CAP_SYS_ADMIN; the daemon keeps it, the
// worker that runs user kernels must not inherit it.
TEST_F(E2E, WorkersDoNotInheritTheDaemonsAmbientCapabilities) {
  if (::geteuid() != 0 || !std::filesystem::exists("/usr/bin/setpriv"))
    GTEST_SKIP() << "needs root and setpriv to start the daemon with an ambient capability";
  dir_ = MakeTempDir();
  daemon_ = std::make_unique<Daemon>(dir_, FAKE_WORKER_PATH);
  daemon_->set_launcher(
      {"/usr/bin/setpriv", "--inh-caps", "+sys_admin", "--ambient-caps", "+sys_admin"});
  ASSERT_EQ(daemon_->Start(), "");
  auto workers = ChildrenNamed(daemon_->pid(), "fake-worker");
  ASSERT_EQ(workers.size(), 1u);
  auto read_caps = [](pid_t pid, const std::string& field) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line))
      if (line.rfind(field + ":", 0) == 0) return line.substr(field.size() + 1);
    return std::string();
  };
  EXPECT_THAT(read_caps(workers[0], "CapAmb"), HasSubstr("0000000000000000"));
  EXPECT_THAT(read_caps(workers[0], "CapInh"), ::testing::Not(HasSubstr("0000000000000000")))
      << "the launcher did hand out the capability, so the check above means something";
}

}  // namespace
}  // namespace ablation::testing
