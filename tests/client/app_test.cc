// ablation-client end to end against a tiny in-process fake daemon: the real argument parsing,
// the real gRPC calls, and what the user sees on stdout and stderr.
#include "client/app.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <filesystem>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <thread>

#include "ablation/v1/ablation.grpc.pb.h"
#include "ablation/v1/report.pb.h"
#include "client/cli/exit_codes.h"
#include "client/output/json.h"

namespace ablation::client {
namespace {

v1::Measurement MakeMeasurement(std::string variant, std::string status, double median_ms) {
  v1::Measurement m;
  m.set_variant(std::move(variant));
  m.set_dtype("bf16");
  m.mutable_shape()->set_m(4096);
  m.mutable_shape()->set_n(4096);
  m.mutable_shape()->set_k(4096);
  m.set_status(status == "ok" ? v1::MEASUREMENT_STATUS_OK : v1::MEASUREMENT_STATUS_FAILED);
  if (status == "ok") {
    m.mutable_stats()->set_median_ms(median_ms);
    m.mutable_stats()->set_samples(40);
    m.mutable_stats()->set_noise(0.004);
    m.set_tflops(2.0 * 4096 * 4096 * 4096 / (median_ms * 1e-3) / 1e12);
  } else {
    m.set_error("illegal memory access");
  }
  return m;
}

// Answers from canned data and records what it was asked.
class FakeAblation final : public v1::Ablation::Service {
 public:
  grpc::Status RunAblation(grpc::ServerContext* context, const v1::RunRequest* request,
                           grpc::ServerWriter<v1::RunEvent>* writer) override {
    std::vector<v1::RunEvent> events;
    {
      std::lock_guard lock(mutex_);
      run_requests_.push_back(*request);
      events = run_events_;
    }
    for (const v1::RunEvent& event : events) writer->Write(event);
    if (wait_for_cancel_) {
      interrupt_->store(true);  // what the SIGINT handler would do
      // The client asks for the run to be cancelled (CancelRun); the run then ends cancelled.
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (cancelled_run_.load() == 0 && !context->IsCancelled() &&
             std::chrono::steady_clock::now() < give_up) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      saw_cancel_.store(cancelled_run_.load() != 0);
      v1::RunEvent finished;
      finished.mutable_finished()->set_run_id(cancelled_run_.load());
      finished.mutable_finished()->set_state(v1::RUN_STATE_CANCELLED);
      writer->Write(finished);
      return grpc::Status::OK;
    }
    return run_status_;
  }

  grpc::Status ListVariants(grpc::ServerContext*, const v1::ListVariantsRequest* request,
                            v1::ListVariantsResponse* response) override {
    std::lock_guard lock(mutex_);
    last_glob_ = request->glob();
    v1::Variant* v = response->add_variants();
    v->set_name("abl_L1_R1_bl0_s3_sw1");
    v->set_family("ablation");
    v->add_dtypes("bf16");
    v->set_tile_m(128);
    v->set_tile_n(256);
    v->set_tile_k(32);
    v->set_threads(256);
    v->set_smem_bytes(98304);
    v = response->add_variants();
    v->set_name("cublas_default");
    v->set_family("cublas");
    v->add_dtypes("bf16");
    v->add_dtypes("fp16");
    return grpc::Status::OK;
  }

  grpc::Status GetDevice(grpc::ServerContext*, const v1::GetDeviceRequest* request,
                         v1::GetDeviceResponse* response) override {
    response->set_available(false);
    response->set_unavailable_reason("no NVIDIA driver loaded (libnvidia-ml.so.1 not found)");
    response->mutable_device()->set_index(request->device());
    return grpc::Status::OK;
  }

  // Pages of two runs, ids counting down from 5.
  grpc::Status ListRuns(grpc::ServerContext*, const v1::ListRunsRequest* request,
                        v1::ListRunsResponse* response) override {
    std::lock_guard lock(mutex_);
    list_runs_requests_.push_back(*request);
    int next = request->page_token().empty() ? 5 : std::stoi(request->page_token());
    for (int i = 0; i < std::min(2, request->page_size()) && next > 0; ++i, --next) {
      v1::Run* run = response->add_runs();
      run->set_id(next);
      run->set_state(v1::RUN_STATE_SUCCEEDED);
      // With latest_is_verify: runs 5 and 4 verified, the rest measured.
      run->set_kind(latest_is_verify && next >= 4 ? v1::RUN_KIND_VERIFY : v1::RUN_KIND_ABLATION);
    }
    if (next > 0) response->set_next_page_token(std::to_string(next));
    return grpc::Status::OK;
  }

  // The queued events, as for RunAblation: what a watch sees after it joins.
  grpc::Status WatchRun(grpc::ServerContext*, const v1::WatchRunRequest*,
                        grpc::ServerWriter<v1::RunEvent>* writer) override {
    std::vector<v1::RunEvent> events;
    {
      std::lock_guard lock(mutex_);
      events = run_events_;
    }
    for (const v1::RunEvent& event : events) writer->Write(event);
    return grpc::Status::OK;
  }

  grpc::Status GetRun(grpc::ServerContext*, const v1::GetRunRequest* request,
                      v1::GetRunResponse* response) override {
    if (request->run_id() == 404) return grpc::Status(grpc::StatusCode::NOT_FOUND, "no run 404");
    response->mutable_run()->set_id(request->run_id() == 0 ? 9 : request->run_id());
    response->mutable_run()->set_state(v1::RUN_STATE_SUCCEEDED);
    response->mutable_run()->set_kind(
        latest_is_verify && request->run_id() == 0 ? v1::RUN_KIND_VERIFY : v1::RUN_KIND_ABLATION);
    response->mutable_run()->add_tags("nightly");
    *response->add_measurements() = MakeMeasurement("abl_L1_R1_bl0_s3_sw1", "ok", 1.5);
    *response->add_measurements() = MakeMeasurement("cublas_default", "ok", 0.75);
    for (auto& m : *response->mutable_measurements())
      for (int i = 0; i < 20; ++i) m.add_sample_ms(m.stats().median_ms() * (1 + 0.001 * (i % 3)));
    return grpc::Status::OK;
  }

  // One made-up section: a ladder of two rungs, the second compared with the first.
  grpc::Status ListPresets(grpc::ServerContext*, const v1::ListPresetsRequest*,
                           v1::ListPresetsResponse* response) override {
    v1::Preset* p = response->add_presets();
    p->set_name("toy-ladder");
    p->set_description("made up");
    v1::PresetReport* report = p->mutable_report();
    report->set_title("Toy ladder: one step");
    report->set_scope("{dtype}, {shape}");
    report->add_notes("T1 against T0.");
    v1::PresetBlock* block = report->add_blocks();
    block->set_dtype("bf16");
    auto add = [&](const char* id, const char* label, const char* variant, const char* against) {
      v1::PresetRung* r = block->add_rungs();
      r->set_id(id);
      r->set_label(label);
      r->set_variant(variant);
      r->set_dtype("bf16");
      r->add_resolved(variant);
      if (*against) r->add_against(against);
    };
    add("T0", "the base", "cublas_default", "");
    add("T1", "the step", "abl_L1_R1_bl0_s3_sw1", "T0");
    add("T2", "not built", "abl_future", "T1");
    v1::Preset* plain = response->add_presets();
    plain->set_name("no-rungs");
    return grpc::Status::OK;
  }

  grpc::Status QueryMeasurements(grpc::ServerContext*, const v1::QueryMeasurementsRequest* request,
                                 v1::QueryMeasurementsResponse* response) override {
    std::lock_guard lock(mutex_);
    query_requests_.push_back(*request);
    // Three pages of one measurement each.
    int page = request->page_token().empty() ? 0 : std::stoi(request->page_token());
    *response->add_measurements() = MakeMeasurement("v" + std::to_string(page), "ok", 1 + page);
    if (page < 2) response->set_next_page_token(std::to_string(page + 1));
    return grpc::Status::OK;
  }

  grpc::Status Verify(grpc::ServerContext*, const v1::VerifyRequest* request,
                      v1::VerifyResponse* response) override {
    {
      std::lock_guard lock(mutex_);
      last_verify_ = *request;
    }
    response->set_run_id(11);
    for (const std::string& variant : request->variants()) {
      v1::VerifyResult* r = response->add_results();
      r->set_variant(variant);
      r->set_passed(variant != "broken");
      if (!r->passed()) r->set_error("3 mismatches");
    }
    return grpc::Status::OK;
  }

  grpc::Status CancelRun(grpc::ServerContext*, const v1::CancelRunRequest* request,
                         v1::CancelRunResponse* response) override {
    cancelled_run_.store(request->run_id());
    const bool running = request->run_id() == 3;
    response->set_state(running ? v1::RUN_STATE_RUNNING : v1::RUN_STATE_SUCCEEDED);
    response->set_cancelling(running);
    return grpc::Status::OK;
  }

  std::mutex mutex_;
  std::vector<v1::RunEvent> run_events_;
  grpc::Status run_status_;
  std::vector<v1::RunRequest> run_requests_;
  std::string last_glob_;
  v1::VerifyRequest last_verify_;
  std::vector<v1::ListRunsRequest> list_runs_requests_;
  bool latest_is_verify = false;  // the newest runs are verifications
  std::vector<v1::QueryMeasurementsRequest> query_requests_;
  bool wait_for_cancel_ = false;
  std::atomic<bool>* interrupt_ = nullptr;
  std::atomic<bool> saw_cancel_{false};
  std::atomic<int64_t> cancelled_run_{0};
};

class AppTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_GT(port_, 0);
  }
  void TearDown() override { server_->Shutdown(); }

  int Run(std::vector<std::string> args) {
    args.insert(args.begin(),
                {"ablation-client", "--server", "127.0.0.1:" + std::to_string(port_)});
    std::ostringstream out, err;
    int code = RunApp(args, out, err, &interrupted_);
    out_ = out.str();
    err_ = err.str();
    return code;
  }

  void QueueEvents(std::initializer_list<v1::RunEvent> events) { service_.run_events_ = events; }

  static v1::RunEvent Queued(int position) {
    v1::RunEvent e;
    e.mutable_queued()->set_run_id(7);
    e.mutable_queued()->set_position(position);
    return e;
  }
  static v1::RunEvent Started(int total) {
    v1::RunEvent e;
    e.mutable_started()->set_run_id(7);
    e.mutable_started()->set_total(total);
    e.mutable_started()->mutable_device()->set_name("NVIDIA H200");
    return e;
  }
  static v1::RunEvent Measured(std::string variant, std::string status, double ms) {
    v1::RunEvent e;
    *e.mutable_measurement() = MakeMeasurement(std::move(variant), std::move(status), ms);
    return e;
  }
  static v1::RunEvent Finished(v1::RunState state, int ok, int failed) {
    v1::RunEvent e;
    e.mutable_finished()->set_run_id(7);
    e.mutable_finished()->set_state(state);
    e.mutable_finished()->set_ok(ok);
    e.mutable_finished()->set_failed(failed);
    return e;
  }
  static v1::RunEvent Failed(std::string reason) {
    v1::RunEvent e;
    e.mutable_failed()->set_run_id(7);
    e.mutable_failed()->set_reason(std::move(reason));
    return e;
  }

  FakeAblation service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::atomic<bool> interrupted_{false};
  std::string out_, err_;
};

TEST_F(AppTest, VariantsPrintsTable) {
  EXPECT_EQ(Run({"variants", "abl_*"}), kExitOk);
  EXPECT_EQ(service_.last_glob_, "abl_*");
  EXPECT_NE(out_.find("name"), std::string::npos);
  EXPECT_NE(out_.find("family"), std::string::npos);
  EXPECT_NE(out_.find("abl_L1_R1_bl0_s3_sw1  ablation  bf16       128x256x32      256   96 KiB"),
            std::string::npos)
      << out_;
  // cuBLAS picks its own kernel: no tile, block or shared memory of one, said so.
  EXPECT_NE(out_.find("cublas_default        cublas    bf16,fp16  library     library  library"),
            std::string::npos)
      << out_;
}

TEST_F(AppTest, VariantsAsJsonAndCsv) {
  EXPECT_EQ(Run({"--format", "json", "variants"}), kExitOk);
  std::vector<v1::Variant> variants;
  ASSERT_EQ(ReadJsonEnvelope(out_, "variants", &variants), "") << out_;
  ASSERT_EQ(variants.size(), 2u);
  EXPECT_EQ(variants[0].name(), "abl_L1_R1_bl0_s3_sw1");
  // Global options also after the subcommand, case-insensitive.
  EXPECT_EQ(Run({"variants", "--format", "CSV"}), kExitOk);
  EXPECT_EQ(out_.substr(0, out_.find('\r')), "name,family,dtypes,tile,threads,smem_bytes");
  EXPECT_NE(out_.find("cublas_default,cublas,\"bf16,fp16\""), std::string::npos);
}

TEST_F(AppTest, RunShowsProgressThenTable) {
  QueueEvents({Queued(1), Queued(0), Started(2), Measured("abl_L1_R1_bl0_s3_sw1", "ok", 1.25),
               Measured("abl_L1_R1_bl0_s4_sw1", "ok", 1.125),
               Finished(v1::RUN_STATE_SUCCEEDED, 2, 0)});
  EXPECT_EQ(Run({"run", "--variant", "L1_R1_s3", "-v", "L1_R1_s4", "--tag", "nightly",
                 "--min-samples", "20", "--hot-l2"}),
            kExitOk)
      << err_;
  // Progress, in order, on stderr.
  const std::size_t queued = err_.find("run 7 queued: 1 run ahead");
  const std::size_t next = err_.find("run 7 queued: next to start");
  const std::size_t started = err_.find("run 7 started on NVIDIA H200 (GPU 0): 2 measurements");
  const std::size_t first = err_.find("[1/2] abl_L1_R1_bl0_s3_sw1 bf16 4096x4096x4096: 1.250 ms");
  const std::size_t second = err_.find("[2/2] abl_L1_R1_bl0_s4_sw1");
  const std::size_t finished = err_.find("run 7 succeeded: 2 ok, 0 failed");
  ASSERT_NE(finished, std::string::npos) << err_;
  EXPECT_LT(queued, next);
  EXPECT_LT(next, started);
  EXPECT_LT(started, first);
  EXPECT_LT(first, second);
  EXPECT_LT(second, finished);
  // The table, on stdout only.
  EXPECT_NE(out_.find("median ms"), std::string::npos);
  EXPECT_NE(out_.find("1.250"), std::string::npos);
  EXPECT_NE(out_.find("110.0"), std::string::npos) << out_;  // 2*4096^3 / 1.25 ms
  EXPECT_EQ(out_.find("queued"), std::string::npos);
  // What was asked.
  ASSERT_EQ(service_.run_requests_.size(), 1u);
  const v1::RunRequest& request = service_.run_requests_[0];
  ASSERT_EQ(request.variants_size(), 2);
  EXPECT_EQ(request.variants(1), "L1_R1_s4");
  ASSERT_EQ(request.shapes_size(), 1);
  EXPECT_EQ(request.shapes(0).k(), 4096);
  EXPECT_EQ(request.tags(0), "nightly");
  EXPECT_EQ(request.timing().min_samples(), 20);
  EXPECT_TRUE(request.timing().hot_l2());
  // Who asked is the daemon's to say, from the caller's credentials.
  EXPECT_TRUE(request.requested_by().empty());
}

TEST_F(AppTest, RunProgressSaysTheTimeSoFarAndWhatIsLeft) {
  QueueEvents({Started(2), Measured("abl_L1_R1_bl0_s3_sw1", "ok", 1.25),
               Measured("abl_L1_R1_bl0_s4_sw1", "ok", 1.125),
               Finished(v1::RUN_STATE_SUCCEEDED, 2, 0)});
  ASSERT_EQ(Run({"run", "--variant", "L1_R1_s3", "-v", "L1_R1_s4"}), kExitOk) << err_;
  EXPECT_THAT(err_, ::testing::ContainsRegex("\\[1/2\\] abl_L1_R1_bl0_s3_sw1 .* \\| [0-9]+s "
                                             "elapsed, ETA [0-9]+s\n"));
  EXPECT_THAT(err_, ::testing::ContainsRegex("\\[2/2\\] .* elapsed, ETA 0s\n"));
}

// A watch that joins a run half-way counts on from what the run has stored (the fake's GetRun
// holds 2 measurements), not from 1.
TEST_F(AppTest, AWatchThatJoinsLateCountsOnFromWhatIsStored) {
  QueueEvents({Started(4), Measured("abl_L1_R1_bl0_s3_sw1", "ok", 1.25),
               Measured("abl_L1_R1_bl0_s4_sw1", "ok", 1.125),
               Finished(v1::RUN_STATE_SUCCEEDED, 4, 0)});
  ASSERT_EQ(Run({"watch", "7"}), kExitOk) << err_;
  EXPECT_NE(err_.find("[3/4] abl_L1_R1_bl0_s3_sw1"), std::string::npos) << err_;
  EXPECT_NE(err_.find("[4/4] abl_L1_R1_bl0_s4_sw1"), std::string::npos) << err_;
  EXPECT_EQ(err_.find("[1/4]"), std::string::npos) << err_;
}

TEST_F(AppTest, RunQuietPrintsNoProgress) {
  QueueEvents({Started(1), Measured("a", "ok", 1), Finished(v1::RUN_STATE_SUCCEEDED, 1, 0)});
  EXPECT_EQ(Run({"-q", "run", "-v", "a", "-s", "128x256x64", "-s", "512"}), kExitOk);
  EXPECT_EQ(err_, "");
  const v1::RunRequest& request = service_.run_requests_[0];
  ASSERT_EQ(request.shapes_size(), 2);
  EXPECT_EQ(request.shapes(0).n(), 256);
  EXPECT_EQ(request.shapes(1).m(), 512);
}

TEST_F(AppTest, RunLocksClocksOnlyWhenAsked) {
  QueueEvents({Started(1), Measured("a", "ok", 1), Finished(v1::RUN_STATE_SUCCEEDED, 1, 0)});
  EXPECT_EQ(Run({"-q", "run", "-v", "a"}), kExitOk);
  EXPECT_FALSE(service_.run_requests_[0].has_clocks());
  EXPECT_EQ(Run({"-q", "run", "-v", "a", "--lock-sm-clock", "max"}), kExitOk);
  EXPECT_EQ(service_.run_requests_[1].clocks().mode(), v1::CLOCK_MODE_LOCK);
  EXPECT_EQ(service_.run_requests_[1].clocks().sm_mhz(), "max");
  EXPECT_EQ(Run({"run", "-v", "a", "--lock-mem-clock", "fast"}), kExitUsage);
  EXPECT_NE(err_.find("expected a clock in MHz"), std::string::npos) << err_;
}

TEST_F(AppTest, ServerAddressFromEnvironment) {
  setenv("ABLATION_SERVER", ("127.0.0.1:" + std::to_string(port_)).c_str(), 1);
  std::ostringstream out, err;
  const int code = RunApp({"ablation-client", "variants"}, out, err);
  unsetenv("ABLATION_SERVER");
  EXPECT_EQ(code, kExitOk) << err.str();
  EXPECT_NE(out.str().find("cublas_default"), std::string::npos);
}

TEST_F(AppTest, RunFailedEventExitsOne) {
  QueueEvents({Queued(0), Started(2), Measured("a", "ok", 1), Failed("worker could not restart")});
  EXPECT_EQ(Run({"run", "--variant", "a"}), kExitFailed);
  EXPECT_NE(err_.find("run 7 failed: worker could not restart"), std::string::npos) << err_;
  EXPECT_NE(out_.find("median ms"), std::string::npos);  // what arrived is still shown
}

TEST_F(AppTest, RunFailedMeasurementExitsOne) {
  QueueEvents({Started(2), Measured("a", "ok", 1), Measured("b", "failed", 0),
               Finished(v1::RUN_STATE_PARTIAL, 1, 1)});
  EXPECT_EQ(Run({"run", "--variant", "*"}), kExitFailed);
  EXPECT_NE(err_.find("[2/2] b bf16 4096x4096x4096: FAILED: illegal memory access"),
            std::string::npos);
  EXPECT_NE(out_.find("illegal memory access"), std::string::npos);
  EXPECT_NE(err_.find("1 of 2 measurements failed"), std::string::npos);
}

TEST_F(AppTest, RunRefusedByTheDaemonExitsDataErrorWithCodeName) {
  service_.run_status_ = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                      "variants[0]: unknown variant 'L9'; closest: L1_R1_s3");
  EXPECT_EQ(Run({"run", "--variant", "L9"}), kExitDataError);
  EXPECT_NE(err_.find("error: INVALID_ARGUMENT: variants[0]: unknown variant 'L9'; closest: "
                      "L1_R1_s3"),
            std::string::npos)
      << err_;
  EXPECT_EQ(out_, "");
}

TEST_F(AppTest, RunInterruptSendsCancelRunForTheRun) {
  service_.wait_for_cancel_ = true;
  service_.interrupt_ = &interrupted_;
  QueueEvents({Queued(0), Started(3)});
  EXPECT_EQ(Run({"run", "--variant", "a"}), kExitInterrupted);
  // The client returns as soon as it cancels; the daemon side notices a moment later.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!service_.saw_cancel_.load() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(service_.saw_cancel_.load());
  EXPECT_EQ(service_.cancelled_run_.load(), 7) << "the run named by the Queued event";
  EXPECT_NE(err_.find("interrupted: run 7 "), std::string::npos) << err_;
  EXPECT_NE(err_.find("cancelled; the daemon stops it at the next measurement boundary"),
            std::string::npos)
      << err_;
}

TEST_F(AppTest, RunJsonIsTheEnvelopeOfItsMeasurements) {
  QueueEvents({Started(1), Measured("a", "ok", 2), Finished(v1::RUN_STATE_SUCCEEDED, 1, 0)});
  EXPECT_EQ(Run({"run", "-v", "a", "--format", "json"}), kExitOk);
  std::vector<v1::Measurement> measurements;
  ParsedEnvelope envelope;
  ASSERT_EQ(ReadJsonEnvelope(out_, "measurements", &measurements, &envelope), "") << out_;
  ASSERT_EQ(measurements.size(), 1u);
  EXPECT_EQ(measurements[0].variant(), "a");
  EXPECT_EQ(measurements[0].status(), v1::MEASUREMENT_STATUS_OK);
  EXPECT_NE(out_.find("\"status\":\"ok\""), std::string::npos) << out_;
  // How the run ended, beside its rows, in the CSV's words.
  EXPECT_EQ(envelope.Field("state"), "\"succeeded\"");
}

TEST_F(AppTest, BadShapeIsRefusedBeforeAnyCall) {
  EXPECT_EQ(Run({"run", "--variant", "a", "--shape", "4096x0x4096"}), kExitUsage);
  EXPECT_NE(err_.find("--shape"), std::string::npos) << err_;
  EXPECT_NE(err_.find("N must be positive"), std::string::npos) << err_;
  EXPECT_EQ(Run({"results", "--shape", "big"}), kExitUsage);
  EXPECT_NE(err_.find("not a number"), std::string::npos) << err_;
  EXPECT_TRUE(service_.run_requests_.empty());
  EXPECT_TRUE(service_.query_requests_.empty());
}

TEST_F(AppTest, BadUsageExitsTwo) {
  EXPECT_EQ(Run({"--format", "yaml", "variants"}), kExitUsage);
  EXPECT_EQ(Run({"run"}), kExitUsage);  // --variant is required
  EXPECT_EQ(Run({}), kExitUsage);       // a subcommand is required
  EXPECT_EQ(Run({"results", "--since", "last tuesday"}), kExitUsage);
  EXPECT_NE(err_.find("--since"), std::string::npos) << err_;
  EXPECT_EQ(Run({"show", "abc"}), kExitUsage);
  EXPECT_EQ(Run({"runs", "--state", "weird"}), kExitUsage);
}

TEST_F(AppTest, HelpExitsZeroAndDocumentsExitCodes) {
  EXPECT_EQ(Run({"--help"}), kExitOk);
  EXPECT_NE(out_.find("Exit codes"), std::string::npos) << out_;
  EXPECT_NE(out_.find("ABLATION_SERVER"), std::string::npos);
}

TEST_F(AppTest, AMistypedCommandIsNamedWithTheClosestOnes) {
  EXPECT_EQ(Run({"rnu"}), kExitUsage);
  EXPECT_NE(err_.find("error: unknown command 'rnu'; did you mean 'run' or 'runs'?"),
            std::string::npos)
      << err_;
  // Global options and their values before it are read past.
  EXPECT_EQ(Run({"--format", "json", "-o", "-", "rpeort", "3"}), kExitUsage);
  EXPECT_NE(err_.find("unknown command 'rpeort'; did you mean 'report'?"), std::string::npos)
      << err_;
  EXPECT_EQ(Run({"kernel", "ad", "x.cu"}), kExitUsage);
  EXPECT_NE(err_.find("unknown kernel command 'ad'; did you mean 'add'?"), std::string::npos)
      << err_;
  EXPECT_NE(err_.find("(ablation-client kernel --help lists them)"), std::string::npos) << err_;
  // Nothing close: no guess.
  EXPECT_EQ(Run({"xyzzy"}), kExitUsage);
  EXPECT_NE(err_.find("unknown command 'xyzzy'\n"), std::string::npos) << err_;
  EXPECT_EQ(err_.find("did you mean"), std::string::npos) << err_;
  // A known command's own arguments are not commands.
  EXPECT_EQ(Run({"variants", "rnu"}), kExitOk) << err_;
  EXPECT_TRUE(service_.run_requests_.empty());
}

TEST_F(AppTest, ANumberThatIsNoNumberIsSaidToBeNone) {
  EXPECT_EQ(Run({"run", "-v", "a", "--rounds", "abc"}), kExitUsage);
  EXPECT_NE(err_.find("--rounds: 'abc' is not a number"), std::string::npos) << err_;
  EXPECT_EQ(err_.find("range"), std::string::npos) << err_;
  EXPECT_EQ(Run({"run", "-v", "a", "--rounds", "0"}), kExitUsage);
  EXPECT_NE(err_.find("--rounds: '0' is out of range: 1 to 100"), std::string::npos) << err_;
  EXPECT_EQ(Run({"run", "-v", "a", "--min-samples", "2.5"}), kExitUsage);
  EXPECT_NE(err_.find("--min-samples: '2.5' is not a whole number"), std::string::npos) << err_;
  EXPECT_EQ(Run({"run", "-v", "a", "--max-seconds", "ten"}), kExitUsage);
  EXPECT_NE(err_.find("--max-seconds: 'ten' is not a number"), std::string::npos) << err_;
  EXPECT_EQ(Run({"--timeout", "0", "runs"}), kExitUsage);
  EXPECT_NE(err_.find("--timeout: '0' must be more than 0"), std::string::npos) << err_;
  EXPECT_EQ(Run({"runs", "--limit", "-1"}), kExitUsage);
  EXPECT_NE(err_.find("'-1' is below 0"), std::string::npos) << err_;
  EXPECT_TRUE(service_.run_requests_.empty());
}

TEST_F(AppTest, AShapeWithAnotherSeparatorSaysToUseX) {
  EXPECT_EQ(Run({"run", "-v", "a", "--shape", "4096*4096*4096"}), kExitUsage);
  EXPECT_NE(err_.find("--shape: '4096*4096*4096': separate M, N and K with 'x', not '*' (e.g. "
                      "4096x4096x4096)"),
            std::string::npos)
      << err_;
}

// Every command's help, and each subcommand's of kernel, ends with the global options and the
// exit codes.
TEST_F(AppTest, EveryCommandsHelpListsTheGlobalOptionsAndTheExitCodes) {
  const std::vector<std::vector<std::string>> commands = {{"variants"},
                                                          {"device"},
                                                          {"run"},
                                                          {"runs"},
                                                          {"show"},
                                                          {"results"},
                                                          {"history"},
                                                          {"cancel"},
                                                          {"verify"},
                                                          {"advise"},
                                                          {"sass"},
                                                          {"presets"},
                                                          {"sweep"},
                                                          {"report"},
                                                          {"compare"},
                                                          {"budget"},
                                                          {"watch"},
                                                          {"profile"},
                                                          {"kernel"},
                                                          {"kernel", "add"},
                                                          {"kernel", "list"},
                                                          {"kernel", "show"},
                                                          {"kernel", "remove"}};
  for (std::vector<std::string> command : commands) {
    const std::string name = command.back();
    command.push_back("--help");
    ASSERT_EQ(Run(command), kExitOk) << name << ": " << err_;
    const std::size_t global = out_.find("Global options (before or after the command):");
    ASSERT_NE(global, std::string::npos) << name << ":\n" << out_;
    for (const char* option : {"--server", "-f,--format", "-o,--output FILE", "--token-file"})
      EXPECT_NE(out_.find(option, global), std::string::npos) << name << ": " << option;
    EXPECT_NE(out_.find("Exit codes", global), std::string::npos) << name;
    EXPECT_NE(out_.find("  65   the daemon refused the input", global), std::string::npos) << name;
    EXPECT_EQ(out_.find("Exit codes"), out_.rfind("Exit codes")) << name << ": once";
  }
}

// The main commands' help shows examples, and each example is a command line the client takes:
// against the fake daemon it gets past the parser (no usage error).
TEST_F(AppTest, TheMainCommandsHelpShowsExamplesThatParse) {
  int examples = 0;
  for (std::vector<std::string> command : std::vector<std::vector<std::string>>{
           {"run"}, {"sweep"}, {"report"}, {"compare"}, {"results"}, {"kernel", "add"}}) {
    command.push_back("--help");
    ASSERT_EQ(Run(command), kExitOk);
    const std::string help = out_;
    const std::size_t start = help.find("Examples:\n");
    ASSERT_NE(start, std::string::npos) << command[0] << ":\n" << help;
    std::istringstream lines(help.substr(start, help.find("\n\n", start) - start));
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("  ablation-client ", 0) != 0) continue;
      if (line.find("--fleet-db") != std::string::npos) continue;  // needs a PostgreSQL
      std::vector<std::string> words;
      std::istringstream split(line);
      for (std::string word; split >> word;) {
        word.erase(std::remove(word.begin(), word.end(), '\''), word.end());
        if (word.rfind("examples/", 0) == 0) word = std::string(ABLATION_SOURCE_DIR) + "/" + word;
        // An example's -o FILE is written: into a scratch folder, never the checkout.
        if (!words.empty() && (words.back() == "-o" || words.back() == "--output"))
          word = (std::filesystem::temp_directory_path() /
                  ("ablation-example-" + std::to_string(::getpid()) + "-" + word))
                     .string();
        words.push_back(word);
      }
      words.erase(words.begin());  // ablation-client: Run() adds it with --server
      EXPECT_NE(Run(words), kExitUsage) << line << "\n" << err_;
      for (std::size_t i = 1; i < words.size(); ++i)
        if (words[i - 1] == "-o" || words[i - 1] == "--output") std::filesystem::remove(words[i]);
      ++examples;
    }
  }
  EXPECT_GE(examples, 12);
}

TEST_F(AppTest, UnreachableDaemonExitsUnavailable) {
  std::ostringstream out, err;
  // Port 1 on loopback: nothing listens there, so the connection is refused at once.
  int code = RunApp({"ablation-client", "--server", "127.0.0.1:1", "--timeout", "5", "variants"},
                    out, err);
  EXPECT_EQ(code, kExitUnavailable);
  EXPECT_NE(err.str().find("error: UNAVAILABLE"), std::string::npos) << err.str();
}

TEST_F(AppTest, DeviceUnavailableIsReportedPlainly) {
  EXPECT_EQ(Run({"device", "--device", "1"}), kExitOk);
  EXPECT_EQ(out_.substr(0, out_.find('\n')),
            "GPU 1 unavailable: no NVIDIA driver loaded (libnvidia-ml.so.1 not found)");
}

TEST_F(AppTest, RunsFollowsPagesUpToLimit) {
  EXPECT_EQ(Run({"runs", "--limit", "3", "--tag", "nightly"}), kExitOk);
  ASSERT_EQ(service_.list_runs_requests_.size(), 2u);
  EXPECT_EQ(service_.list_runs_requests_[0].tag(), "nightly");
  EXPECT_EQ(service_.list_runs_requests_[1].page_token(), "3");
  EXPECT_EQ(service_.list_runs_requests_[1].page_size(), 1);
  EXPECT_NE(out_.find("\n 5  succeeded"), std::string::npos) << out_;
  EXPECT_NE(out_.find("\n 3  succeeded"), std::string::npos);
  EXPECT_EQ(out_.find("\n 2  succeeded"), std::string::npos);
  EXPECT_NE(err_.find("showing the newest 3 runs; --limit 0 for all"), std::string::npos) << err_;
  service_.list_runs_requests_.clear();
  EXPECT_EQ(Run({"runs", "--limit", "0"}), kExitOk);  // all: 5 runs in 3 pages
  EXPECT_EQ(service_.list_runs_requests_.size(), 3u);
  EXPECT_NE(out_.find("\n 1  succeeded"), std::string::npos);
  EXPECT_EQ(err_, "");
}

TEST_F(AppTest, ResultsFollowsPageTokensAndPassesFilters) {
  EXPECT_EQ(Run({"--format", "csv", "results", "--variant", "abl_*", "--since", "2026-11-30",
                 "--until", "1796040000000", "--status", "ok", "--shape", "4096"}),
            kExitOk)
      << err_;
  ASSERT_EQ(service_.query_requests_.size(), 3u);
  const v1::QueryMeasurementsRequest& first = service_.query_requests_[0];
  EXPECT_EQ(first.variant_glob(), "abl_*");
  EXPECT_EQ(first.since_ms(), 1795996800000);
  EXPECT_EQ(first.until_ms(), 1796040000000);
  EXPECT_EQ(first.status(), v1::MEASUREMENT_STATUS_OK);
  EXPECT_EQ(first.shape().n(), 4096);
  EXPECT_TRUE(first.newest_first()) << "a limit keeps the latest rows";
  // Every page's rows (after the identifying columns: run, device, round, window, time).
  EXPECT_NE(out_.find(",v0,"), std::string::npos) << out_;
  EXPECT_NE(out_.find(",v2,"), std::string::npos) << out_;
}

TEST_F(AppTest, ResultsRefusesAnEmptyWindow) {
  EXPECT_EQ(Run({"results", "--since", "2026-11-30", "--until", "2026-11-29"}), kExitUsage);
  EXPECT_TRUE(service_.query_requests_.empty());
}

TEST_F(AppTest, ShowLatestAndNotFound) {
  EXPECT_EQ(Run({"show", "latest"}), kExitOk);
  EXPECT_NE(out_.find("run           9"), std::string::npos) << out_;
  EXPECT_NE(out_.find("nightly"), std::string::npos);
  EXPECT_NE(out_.find("median ms"), std::string::npos);
  EXPECT_EQ(Run({"show", "404"}), kExitDataError);
  EXPECT_NE(err_.find("error: NOT_FOUND: no run 404"), std::string::npos);
}

TEST_F(AppTest, VerifyExitsOneWhenAnyFails) {
  EXPECT_EQ(Run({"verify", "--variant", "good", "--variant", "broken", "--against", "cublas"}),
            kExitFailed);
  EXPECT_NE(out_.find("FAIL"), std::string::npos);
  EXPECT_NE(out_.find("3 mismatches"), std::string::npos);
  EXPECT_EQ(Run({"verify", "--variant", "good"}), kExitOk);
  EXPECT_NE(err_.find("1 passed, 0 failed"), std::string::npos);
}

TEST_F(AppTest, CancelPrintsState) {
  EXPECT_EQ(Run({"cancel", "3"}), kExitOk);
  EXPECT_EQ(out_, "run 3: cancelling\n");
  EXPECT_EQ(Run({"cancel", "latest"}), kExitUsage);
}

TEST_F(AppTest, StateAndStatusFlagsAreTheEnums) {
  EXPECT_EQ(Run({"runs", "--state", "succeeded"}), kExitOk) << err_;
  EXPECT_EQ(service_.list_runs_requests_.back().state(), v1::RUN_STATE_SUCCEEDED);
  EXPECT_EQ(Run({"runs"}), kExitOk);
  EXPECT_EQ(service_.list_runs_requests_.back().state(), v1::RUN_STATE_UNSPECIFIED);
  EXPECT_EQ(Run({"runs", "--state", "weird"}), kExitUsage);
  EXPECT_NE(err_.find("--state: 'weird' is not a run state; use queued, running, succeeded, "
                      "partial, failed or cancelled"),
            std::string::npos)
      << err_;
  EXPECT_EQ(Run({"results", "--status", "failed"}), kExitOk);
  EXPECT_EQ(service_.query_requests_.back().status(), v1::MEASUREMENT_STATUS_FAILED);
  EXPECT_EQ(Run({"results", "--status", "broken"}), kExitUsage);
  EXPECT_NE(err_.find("--status: 'broken' is not a measurement status; use ok, failed or skipped"),
            std::string::npos)
      << err_;
}

TEST_F(AppTest, VerifyAgainstIsTheReference) {
  EXPECT_EQ(Run({"verify", "-v", "good", "--against", "cublas"}), kExitOk);
  EXPECT_EQ(service_.last_verify_.reference(), v1::REFERENCE_CUBLAS);
  EXPECT_EQ(Run({"verify", "-v", "good", "--against", "L1_R1_s3"}), kExitOk);
  EXPECT_EQ(service_.last_verify_.reference(), v1::REFERENCE_VARIANT);
  EXPECT_EQ(service_.last_verify_.reference_variant(), "L1_R1_s3");
  EXPECT_EQ(Run({"verify", "-v", "good"}), kExitOk);
  EXPECT_EQ(service_.last_verify_.reference(), v1::REFERENCE_UNSPECIFIED);
  EXPECT_EQ(Run({"verify", "-v", "good", "--against", "variant"}), kExitUsage);
  EXPECT_NE(
      err_.find("--against: name the variant itself; use cpu, cublas, gpu, own or a variant name"),
      std::string::npos)
      << err_;
}

TEST_F(AppTest, CancelOfAFinishedRunPrintsItsState) {
  EXPECT_EQ(Run({"cancel", "4"}), kExitOk);
  EXPECT_EQ(out_, "run 4: succeeded\n");
  EXPECT_EQ(Run({"--format", "csv", "cancel", "3"}), kExitOk);
  EXPECT_EQ(out_, "run_id,state\r\n3,cancelling\r\n");
}

TEST_F(AppTest, ReportSectionsComeFromThePresets) {
  ASSERT_EQ(Run({"report", "--run", "5"}), kExitOk) << err_;
  EXPECT_NE(out_.find("# Ablation report: run 5\n\nrun 5 (succeeded); tags nightly\n"),
            std::string::npos)
      << out_;
  EXPECT_NE(out_.find("\n## 1. Toy ladder: one step\n\n_bf16, 4096x4096x4096_\n"),
            std::string::npos)
      << out_;
  EXPECT_NE(out_.find("| T0 | the base | `cublas_default` | bf16 | 183.3 | 100.0% | - | - |  |\n"),
            std::string::npos)
      << out_;
  // T1 takes twice as long as T0: -50%.
  EXPECT_NE(out_.find("| T1 | the step | `abl_L1_R1_bl0_s3_sw1` | bf16 | 91.6 | 50.0% | T0 | "
                      "-50.0% ["),
            std::string::npos)
      << out_;
  // T2 was not measured: named under the table, not tabled as "missing".
  EXPECT_EQ(out_.find("| T2 |"), std::string::npos) << out_;
  EXPECT_NE(out_.find("\nNot measured in this run: T2.\n"), std::string::npos) << out_;
  EXPECT_NE(out_.find("Reading notes:\n\n- T1 against T0.\n"), std::string::npos) << out_;
  EXPECT_NE(out_.find("## 2. All measurements of the run"), std::string::npos) << out_;
  EXPECT_EQ(out_.find("no-rungs"), std::string::npos) << out_;  // a preset without rungs
}

TEST_F(AppTest, ReportLatestIsTheLatestRunThatMeasuredNotAVerification) {
  service_.latest_is_verify = true;
  ASSERT_EQ(Run({"report", "latest"}), kExitOk) << err_;
  EXPECT_NE(out_.find("# Ablation report: run 3\n"), std::string::npos) << out_;
  EXPECT_EQ(err_,
            "run 9 (the latest) is a verification; reporting run 3, the latest that measured\n");
}

TEST_F(AppTest, PresetsShowsWhatAPresetsSectionIs) {
  ASSERT_EQ(Run({"presets", "toy-ladder"}), kExitOk) << err_;
  EXPECT_NE(out_.find("\nreport       Toy ladder: one step (rungs T0, T1, T2)\n"),
            std::string::npos)
      << out_;
}

TEST_F(AppTest, ReportJsonParsesBackIntoTheModel) {
  ASSERT_EQ(Run({"report", "--run", "5", "--format", "json"}), kExitOk) << err_;
  std::vector<v1::Report> reports;
  ASSERT_EQ(ReadJsonEnvelope(out_, "report", &reports), "") << out_;
  ASSERT_EQ(reports.size(), 1u);
  const v1::Report& report = reports[0];
  EXPECT_EQ(report.schema_version(), 1);
  EXPECT_EQ(report.run().id(), 5);
  EXPECT_EQ(report.run().state(), v1::RUN_STATE_SUCCEEDED);
  ASSERT_EQ(report.sections_size(), 2);
  const v1::ReportSection& toy = report.sections(0);
  EXPECT_EQ(toy.id(), "toy-ladder");
  EXPECT_EQ(toy.layout(), v1::SECTION_LAYOUT_LADDER);
  ASSERT_EQ(toy.rows_size(), 3);
  EXPECT_EQ(toy.rows(1).vs(), "T0");
  EXPECT_DOUBLE_EQ(toy.rows(1).change().estimate(), -0.5);
  EXPECT_DOUBLE_EQ(toy.rows(1).cublas_share(), 0.5);
  EXPECT_EQ(toy.rows(2).status(), v1::ROW_STATUS_MISSING);
  EXPECT_FALSE(toy.rows(2).has_tflops());
  EXPECT_EQ(toy.measured(), 2);
  EXPECT_EQ(toy.missing(), 1);
  EXPECT_EQ(report.sections(1).id(), "all");
  EXPECT_EQ(report.sections(1).rows_size(), 2);
  // The global --format json gives the same.
  const std::string json = out_;
  ASSERT_EQ(Run({"--format", "json", "report", "--run", "5"}), kExitOk);
  EXPECT_EQ(out_, json);
}

TEST_F(AppTest, CompareJsonParsesBackIntoTheModel) {
  ASSERT_EQ(Run({"compare", "5", "6", "--format", "json"}), kExitOk) << err_;
  std::vector<v1::Comparison> comparisons;
  ASSERT_EQ(ReadJsonEnvelope(out_, "comparison", &comparisons), "") << out_;
  ASSERT_EQ(comparisons.size(), 1u);
  const v1::Comparison& comparison = comparisons[0];
  EXPECT_EQ(comparison.schema_version(), 1);
  EXPECT_EQ(comparison.run_a(), 5);
  EXPECT_EQ(comparison.run_b(), 6);
  EXPECT_DOUBLE_EQ(comparison.threshold(), 0.03);
  ASSERT_EQ(comparison.rows_size(), 2);
  EXPECT_EQ(comparison.regressions(), 0);
  EXPECT_EQ(comparison.rows(0).verdict(), "same (within noise)");
  EXPECT_DOUBLE_EQ(comparison.rows(0).test().time_change(), 0);
  EXPECT_NE(err_.find("run 6 against run 5: 2 compared, 0 significant slowdowns beyond 3%"),
            std::string::npos)
      << err_;
}

}  // namespace
}  // namespace ablation::client
