// The gRPC service in-process: a real server on an in-process channel over the real core (an
// in-process worker, a temporary database), so every handler's status mapping, the run stream and
// the deferred answers are tested without a daemon process.
#include "server/rpc/service.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>

#include "tests/support/in_process_worker.h"

namespace ablation::rpc {
namespace {

using testing::WorkerScript;

class ServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kernels::RegisterCatalog(registry_);
    path_ = std::filesystem::temp_directory_path() /
            ("service_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    std::filesystem::remove(path_);
  }
  void Start() {
    core::CoreOptions options;
    options.db_path = path_.string();
    options.readers = 2;
    options.runs.worker_factory = testing::InProcessWorkers(script_, log_);
    options.runs.timing.min_seconds = 0.01;
    auto presets = std::make_shared<core::Presets>();
    ASSERT_TRUE(presets
                    ->LoadText("[pair]\ndescription = \"two\"\ndtype = \"bf16\"\n"
                               "variants = [\"abl_L1_R1_bl0_s3_sw1\", \"cublas_bf16\"]\n",
                               "test.toml")
                    .ok());
    options.runs.presets = presets;
    ASSERT_TRUE(core::DaemonCore::Open(options, &registry_, &core_).ok());
    service_ = std::make_unique<AblationService>(core_.get());
    grpc::ServerBuilder builder;
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    stub_ = v1::Ablation::NewStub(server_->InProcessChannel(grpc::ChannelArguments()));
  }
  void TearDown() override {
    if (server_) server_->Shutdown();
    if (core_) core_->Shutdown();
    server_.reset();
    core_.reset();
    for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(path_.string() + ext);
  }
  std::vector<v1::RunEvent> Run(const v1::RunRequest& request, grpc::Status* status) {
    grpc::ClientContext ctx;
    auto reader = stub_->RunAblation(&ctx, request);
    std::vector<v1::RunEvent> events;
    v1::RunEvent e;
    while (reader->Read(&e)) events.push_back(e);
    *status = reader->Finish();
    return events;
  }
  static v1::RunRequest Request(std::vector<std::string> variants) {
    v1::RunRequest r;
    for (auto& v : variants) r.add_variants(v);
    auto* s = r.add_shapes();
    s->set_m(128);
    s->set_n(128);
    s->set_k(128);
    return r;
  }

  kernels::Registry registry_;
  std::filesystem::path path_;
  std::shared_ptr<WorkerScript> script_ = std::make_shared<WorkerScript>();
  std::shared_ptr<testing::WorkerLog> log_ = std::make_shared<testing::WorkerLog>();
  std::unique_ptr<core::DaemonCore> core_;
  std::unique_ptr<AblationService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::Ablation::Stub> stub_;
};

TEST_F(ServiceTest, RunAblationStreamsEveryEventAndTheQueriesSeeTheStoredRun) {
  Start();
  grpc::Status status;
  auto events = Run(Request({"L1_R1_s3", "cublas_bf16"}), &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(events.size(), 5u);  // queued, started, 2 measurements, finished
  EXPECT_TRUE(events[0].has_queued());
  EXPECT_EQ(events[1].started().device().uuid(), "GPU-test-0000");
  EXPECT_EQ(events[2].measurement().variant(), "abl_L1_R1_bl0_s3_sw1");
  EXPECT_EQ(events[2].measurement().sample_ms_size(), 0);  // the stream carries no samples
  EXPECT_EQ(events[2].measurement().sample_cycles_size(), 0);
  EXPECT_EQ(events[2].measurement().sample_sm_mhz_size(), 0);
  EXPECT_EQ(events[4].finished().state(), v1::RUN_STATE_SUCCEEDED);
  const int64_t id = events[0].queued().run_id();

  grpc::ClientContext get_ctx;
  v1::GetRunRequest get;
  get.set_run_id(id);
  get.set_include_samples(true);
  v1::GetRunResponse run;
  ASSERT_TRUE(stub_->GetRun(&get_ctx, get, &run).ok());
  EXPECT_EQ(run.run().state(), v1::RUN_STATE_SUCCEEDED);
  ASSERT_EQ(run.measurements_size(), 2);
  EXPECT_EQ(run.measurements(0).sample_ms_size(), 4);

  grpc::ClientContext list_ctx;
  v1::ListRunsRequest list;
  list.set_state(v1::RUN_STATE_SUCCEEDED);
  v1::ListRunsResponse runs;
  ASSERT_TRUE(stub_->ListRuns(&list_ctx, list, &runs).ok());
  ASSERT_EQ(runs.runs_size(), 1);
  EXPECT_EQ(runs.runs(0).id(), id);
  EXPECT_EQ(runs.runs(0).ok(), 2);

  grpc::ClientContext q_ctx;
  v1::QueryMeasurementsRequest q;
  q.set_variant_glob("L1_R1_s3");  // a short name selects its canonical variant
  v1::QueryMeasurementsResponse rows;
  ASSERT_TRUE(stub_->QueryMeasurements(&q_ctx, q, &rows).ok());
  ASSERT_EQ(rows.measurements_size(), 1);
  EXPECT_EQ(rows.measurements(0).status(), v1::MEASUREMENT_STATUS_OK);
}

TEST_F(ServiceTest, BadRequestsGetInvalidArgumentNamingTheField) {
  Start();
  grpc::Status status;
  auto events = Run(Request({"abl_nope"}), &status);
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message().rfind("variants[0]", 0), 0u) << status.error_message();

  grpc::ClientContext ctx;
  v1::QueryMeasurementsRequest q;
  q.set_page_size(5000);
  v1::QueryMeasurementsResponse rows;
  grpc::Status st = stub_->QueryMeasurements(&ctx, q, &rows);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message(), "page_size: at most 1000");

  grpc::ClientContext ctx2;
  v1::GetRunRequest get;
  get.set_run_id(99);
  v1::GetRunResponse run;
  st = stub_->GetRun(&ctx2, get, &run);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(st.error_message(), "run_id: run 99 does not exist");

  grpc::ClientContext ctx3;
  v1::CancelRunRequest cancel;
  v1::CancelRunResponse cancelled;
  st = stub_->CancelRun(&ctx3, cancel, &cancelled);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ServiceTest, NoDeviceIsFailedPreconditionForRunsWhileQueriesAnswer) {
  script_->device_present = false;
  Start();
  grpc::Status status;
  Run(Request({"cublas_bf16"}), &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(status.error_message().find("no CUDA device (test)"), std::string::npos);

  grpc::ClientContext ctx;
  v1::GetDeviceRequest req;
  v1::GetDeviceResponse device;
  ASSERT_TRUE(stub_->GetDevice(&ctx, req, &device).ok());
  EXPECT_FALSE(device.available());
  EXPECT_EQ(device.unavailable_reason(), "no CUDA device (test)");

  grpc::ClientContext ctx2;
  v1::ListRunsRequest list;
  v1::ListRunsResponse runs;
  EXPECT_TRUE(stub_->ListRuns(&ctx2, list, &runs).ok());
  EXPECT_EQ(runs.runs_size(), 0);
}

TEST_F(ServiceTest, VerifyAnswersWithEveryResultAndItsRun) {
  script_->by_variant["abl_L1_R1_bl0_s4_sw1"] = WorkerScript::Action::kFailVerification;
  Start();
  v1::VerifyRequest req;
  req.add_variants("abl_L1_R1_bl0_s3_sw1");
  req.add_variants("abl_L1_R1_bl0_s4_sw1");
  *req.add_shapes() = Request({}).shapes(0);
  grpc::ClientContext ctx;
  v1::VerifyResponse response;
  ASSERT_TRUE(stub_->Verify(&ctx, req, &response).ok());
  EXPECT_GT(response.run_id(), 0);
  ASSERT_EQ(response.results_size(), 2);
  EXPECT_TRUE(response.results(0).passed());
  EXPECT_FALSE(response.results(1).passed());
  EXPECT_EQ(response.results(0).reference(), v1::REFERENCE_CPU);
}

TEST_F(ServiceTest, CatalogCallsAnswerInline) {
  Start();
  grpc::ClientContext ctx;
  v1::ListVariantsRequest req;
  req.set_glob("abl_L1_R1_*_s3_sw1");
  v1::ListVariantsResponse variants;
  ASSERT_TRUE(stub_->ListVariants(&ctx, req, &variants).ok());
  EXPECT_EQ(variants.variants_size(), 2);  // bl0 and bl1 (the rb1 names end in _rb1)

  grpc::ClientContext ctx2;
  v1::ListPresetsRequest presets_req;
  presets_req.set_name("nope");
  v1::ListPresetsResponse presets;
  grpc::Status st = stub_->ListPresets(&ctx2, presets_req, &presets);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(st.error_message(), "name: no preset 'nope'; known: pair");

  grpc::ClientContext ctx3;
  v1::BudgetRequest budget_req;
  budget_req.set_variant("abl_*");
  v1::BudgetResponse budget;
  st = stub_->GetBudget(&ctx3, budget_req, &budget);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message(), "variant: one variant, not a pattern");
}

TEST_F(ServiceTest, CancelOfAFinishedRunReportsItsState) {
  Start();
  grpc::Status status;
  auto events = Run(Request({"cublas_bf16"}), &status);
  ASSERT_TRUE(status.ok());
  grpc::ClientContext ctx;
  v1::CancelRunRequest req;
  req.set_run_id(events[0].queued().run_id());
  v1::CancelRunResponse response;
  ASSERT_TRUE(stub_->CancelRun(&ctx, req, &response).ok());
  EXPECT_EQ(response.state(), v1::RUN_STATE_SUCCEEDED);
  EXPECT_FALSE(response.cancelling());
}

}  // namespace
}  // namespace ablation::rpc
