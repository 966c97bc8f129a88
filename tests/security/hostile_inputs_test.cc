// Hostile inputs (oversized or control-character text, plans of millions of items, shapes whose
// size wraps, non-finite timings, long globs), each against a real daemon (fake worker, loopback,
// no tokens): refused quickly, with a message that names the field, quotes at most a short prefix
// of the input, and never carries SQL or a path; nothing is written.
#include <signal.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "db/store.h"
#include "tests/e2e/harness.h"

namespace ablation::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class Hostile : public ::testing::Test {
 protected:
  void StartDaemon(const std::string& config = "", std::map<std::string, std::string> env = {}) {
    dir_ = MakeTempDir();
    ASSERT_FALSE(dir_.empty());
    daemon_ = std::make_unique<Daemon>(dir_, FAKE_WORKER_PATH, std::move(env));
    if (!config.empty()) {
      std::ofstream(dir_ + "/ablationd.toml") << config;
      daemon_->set_extra_args({"--config", dir_ + "/ablationd.toml"});
    }
    ASSERT_EQ(daemon_->Start(), "");
  }
  void TearDown() override {
    if (daemon_) daemon_->Stop(SIGTERM);
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  grpc::Status Run(const v1::RunRequest& request, int64_t* run_id = nullptr) {
    auto stub = daemon_->Stub();
    grpc::ClientContext ctx;
    auto reader = stub->RunAblation(&ctx, request);
    v1::RunEvent event;
    while (reader->Read(&event))
      if (event.has_queued() && run_id) *run_id = event.queued().run_id();
    return reader->Finish();
  }
  static v1::RunRequest Valid() {
    v1::RunRequest request;
    request.add_variants("cublas_bf16");
    auto* s = request.add_shapes();
    s->set_m(256);
    s->set_n(256);
    s->set_k(256);
    request.mutable_timing()->set_min_seconds(0.001);
    return request;
  }
  // What every refusal must be: the code, a short message naming `field`, no SQL, no path.
  void ExpectRefused(const grpc::Status& st, grpc::StatusCode code, const std::string& field) {
    EXPECT_EQ(st.error_code(), code) << st.error_message();
    EXPECT_THAT(st.error_message(), HasSubstr(field));
    EXPECT_LT(st.error_message().size(), 400u) << st.error_message();
    EXPECT_THAT(st.error_message(), Not(HasSubstr("SELECT")));
    EXPECT_THAT(st.error_message(), Not(HasSubstr(dir_)));
  }
  void ExpectNothingWritten() {
    EXPECT_FALSE(db::Store::OpenReadOnly(daemon_->db_path())->LatestRun().has_value());
  }

  std::string dir_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(Hostile, AMegabyteNameIsRefusedAtOnceWithoutAnEditDistance) {
  StartDaemon();
  v1::RunRequest request = Valid();
  request.set_variants(0, std::string(1 << 20, 'x'));
  const auto start = std::chrono::steady_clock::now();
  grpc::Status st = Run(request);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Over the 1 MiB message limit, gRPC itself refuses it; just under, the name's length does.
  EXPECT_FALSE(st.ok());
  request.set_variants(0, std::string(200000, 'x'));
  ExpectRefused(Run(request), grpc::StatusCode::INVALID_ARGUMENT, "variants[0]: 200000 characters");
  EXPECT_LT(seconds, 2.0);
  ExpectNothingWritten();
}

TEST_F(Hostile, HugeRequestedByIsRefusedByTheMessageLimit) {
  StartDaemon();
  v1::RunRequest request = Valid();
  request.set_requested_by(std::string(3900000, 'a'));
  EXPECT_EQ(Run(request).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  ExpectNothingWritten();
}

TEST_F(Hostile, ControlCharactersInNamesAndTagsAreRefused) {
  StartDaemon();
  v1::RunRequest request = Valid();
  request.add_tags("nightly\x1b]0;owned\x07");
  grpc::Status st = Run(request);
  ExpectRefused(st, grpc::StatusCode::INVALID_ARGUMENT, "tags[0]: control characters");
  EXPECT_THAT(st.error_message(), HasSubstr("\\x1b"));  // quoted escaped, never raw
  EXPECT_THAT(st.error_message(), Not(HasSubstr("\x1b")));
  ExpectNothingWritten();
}

TEST_F(Hostile, APlanOfMillionsOfMeasurementsIsRefused) {
  StartDaemon();
  v1::RunRequest request = Valid();
  request.set_variants(0, "abl_*");  // 128 variants ...
  request.clear_shapes();
  for (int i = 1; i <= 200; ++i) {  // ... x 200 shapes: 25,600 measurements
    auto* s = request.add_shapes();
    s->set_m(256 * i);
    s->set_n(256);
    s->set_k(256);
  }
  ExpectRefused(Run(request), grpc::StatusCode::INVALID_ARGUMENT, "max_measurements_per_run");
  ExpectNothingWritten();
}

TEST_F(Hostile, ShapesWhoseProductWrapsAreRefused) {
  StartDaemon();
  v1::RunRequest request = Valid();
  const int64_t big = int64_t(1) << 32;
  request.mutable_shapes(0)->set_m(big);
  request.mutable_shapes(0)->set_n(big);
  request.mutable_shapes(0)->set_k(big);
  ExpectRefused(Run(request), grpc::StatusCode::INVALID_ARGUMENT, "shapes[0]");
  ExpectNothingWritten();
}

TEST_F(Hostile, TimingOptionsMustBeFiniteAndInRange) {
  StartDaemon();
  for (double bad : {std::numeric_limits<double>::infinity(), 1e300, std::nan("")}) {
    v1::RunRequest request = Valid();
    request.mutable_timing()->set_warmup_seconds(bad);
    ExpectRefused(Run(request), grpc::StatusCode::INVALID_ARGUMENT, "timing.warmup_seconds");
  }
  v1::RunRequest request = Valid();
  request.mutable_timing()->set_min_samples(std::numeric_limits<int32_t>::max());
  grpc::Status st = Run(request);
  ExpectRefused(st, grpc::StatusCode::INVALID_ARGUMENT, "timing.min_samples");
  EXPECT_THAT(st.error_message(), HasSubstr("[0, 1e+06]"));
  ExpectNothingWritten();
}

TEST_F(Hostile, ALongGlobIsRefusedNotAnInternalErrorWithSql) {
  StartDaemon();
  auto stub = daemon_->Stub();
  grpc::ClientContext ctx;
  v1::QueryMeasurementsRequest request;
  request.set_variant_glob(std::string(50000, '*') + "[");
  v1::QueryMeasurementsResponse response;
  ExpectRefused(stub->QueryMeasurements(&ctx, request, &response),
                grpc::StatusCode::INVALID_ARGUMENT, "variant_glob");
  // A short glob that matches nothing answers with nothing, quickly.
  grpc::ClientContext ctx2;
  request.set_variant_glob("*matches_nothing*");
  EXPECT_TRUE(stub->QueryMeasurements(&ctx2, request, &response).ok());
  EXPECT_EQ(response.measurements_size(), 0);
}

TEST_F(Hostile, ErrorMessagesQuoteAShortPrefixOfTheInput) {
  StartDaemon();
  v1::RunRequest request = Valid();
  request.set_variants(0, std::string(100, 'q'));
  grpc::Status st = Run(request);
  ExpectRefused(st, grpc::StatusCode::INVALID_ARGUMENT, "variants[0]: unknown variant");
  EXPECT_THAT(st.error_message(), HasSubstr(std::string(64, 'q') + "'... (100 characters)"));
  EXPECT_THAT(st.error_message(), Not(HasSubstr(std::string(65, 'q'))));
}

TEST_F(Hostile, RunsInFlightPerCallerAreLimitedWithoutARace) {
  StartDaemon("[limits]\nmax_runs_per_identity = 2\n", {{"ABLATION_FAKE_SLEEP_MS", "300"}});
  // Six submissions at once from one caller: exactly two get in.
  std::vector<std::thread> threads;
  std::mutex mu;
  int ok = 0, refused = 0;
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&] {
      v1::RunRequest request = Valid();
      request.set_rounds(3);
      grpc::Status st = Run(request);
      std::lock_guard lock(mu);
      if (st.ok()) ++ok;
      if (st.error_code() == grpc::StatusCode::FAILED_PRECONDITION &&
          st.error_message().find("max_runs_per_identity") != std::string::npos)
        ++refused;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, 2);
  EXPECT_EQ(refused, 4);
  // Places come back when runs end.
  EXPECT_TRUE(Run(Valid()).ok());
}

}  // namespace
}  // namespace ablation::testing
