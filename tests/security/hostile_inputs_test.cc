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
#include <mutex>
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

// One plan limit for every kind of run: Verify and Profile are held to the limit RunAblation is
// (Verify over abl_* x 1024 shapes planned 131,072 items before), and Verify refuses the tags
// RunAblation refuses.
TEST_F(Hostile, VerifyAndProfileMeetTheSamePlanLimitAndTags) {
  StartDaemon("[limits]\nmax_measurements_per_run = 100\n");
  auto stub = daemon_->Stub();
  v1::VerifyRequest verify;
  verify.add_variants("abl_*");  // 128 variants x 1 shape: over 100
  auto* s = verify.add_shapes();
  s->set_m(256);
  s->set_n(256);
  s->set_k(256);
  v1::VerifyResponse verified;
  grpc::ClientContext c1;
  grpc::Status st = stub->Verify(&c1, verify, &verified);
  ExpectRefused(st, grpc::StatusCode::INVALID_ARGUMENT, "max_measurements_per_run");
  EXPECT_THAT(st.error_message(), HasSubstr("128 verifications"));

  v1::VerifyRequest tagged;
  tagged.add_variants("cublas_bf16");
  *tagged.add_shapes() = *s;
  tagged.add_tags(std::string(100, 't'));  // within the 128-character name bound, over 64
  grpc::ClientContext c2;
  ExpectRefused(stub->Verify(&c2, tagged, &verified), grpc::StatusCode::INVALID_ARGUMENT,
                "tags[0]: a tag has 1 to 64 characters");
  v1::RunRequest run = Valid();
  run.add_tags(std::string(100, 't'));
  ExpectRefused(Run(run), grpc::StatusCode::INVALID_ARGUMENT,
                "tags[0]: a tag has 1 to 64 characters");

  v1::ProfileRequest profile;
  profile.add_variants("abl_*");
  *profile.add_shapes() = *s;
  v1::ProfileResponse profiled;
  grpc::ClientContext c3;
  st = stub->Profile(&c3, profile, &profiled);
  ExpectRefused(st, grpc::StatusCode::INVALID_ARGUMENT, "max_measurements_per_run");
  EXPECT_THAT(st.error_message(), HasSubstr("128 profiles"));
  ExpectNothingWritten();
}

// A Profile holds the GPU as a run does: it takes a place of the caller's quota.
TEST_F(Hostile, ProfileTakesAShareOfTheCallersQuota) {
  StartDaemon("[limits]\nmax_runs_per_identity = 1\n", {{"ABLATION_FAKE_SLEEP_MS", "300"}});
  auto stub = daemon_->Stub();
  grpc::ClientContext run_ctx;
  v1::RunRequest long_run = Valid();
  long_run.set_rounds(20);
  auto reader = stub->RunAblation(&run_ctx, long_run);
  v1::RunEvent event;
  ASSERT_TRUE(reader->Read(&event));  // queued: the caller's one place is taken
  v1::ProfileRequest profile;
  profile.add_variants("cublas_bf16");
  v1::ProfileResponse profiled;
  grpc::ClientContext c;
  grpc::Status st = stub->Profile(&c, profile, &profiled);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << st.error_message();
  EXPECT_THAT(st.error_message(), HasSubstr("max_runs_per_identity"));
  run_ctx.TryCancel();
  while (reader->Read(&event)) {
  }
  (void)reader->Finish();
}

// Samples are bounded per measurement (a million was 22.9 MB stored per measurement).
TEST_F(Hostile, SamplesPerMeasurementAreBoundedByALimitNamedInTheError) {
  StartDaemon("[limits]\nmax_samples_per_measurement = 5000\n");
  v1::RunRequest request = Valid();
  request.mutable_timing()->set_min_samples(50000);
  grpc::Status st = Run(request);
  ExpectRefused(st, grpc::StatusCode::INVALID_ARGUMENT, "timing.min_samples: 50000 samples");
  EXPECT_THAT(st.error_message(), HasSubstr("limits.max_samples_per_measurement"));
  request.mutable_timing()->set_min_samples(10);
  request.mutable_timing()->set_max_samples(900000);
  ExpectRefused(Run(request), grpc::StatusCode::INVALID_ARGUMENT, "timing.max_samples");
  ExpectNothingWritten();
}

// Bytes per run are bounded up front (a 20,000-measurement run of 100,000 samples each would
// store 48 GB): the refusal names the limit and the figures, for RunAblation, Verify and Profile
// alike, before anything is queued or written.
TEST_F(Hostile, ARunThatCouldStoreMoreThanTheByteBoundIsRefusedUpFront) {
  StartDaemon("[limits]\nmax_stored_bytes_per_run = 2097152\n");  // 2 MiB
  v1::RunRequest request = Valid();
  request.clear_variants();
  request.add_variants("abl_*");  // 128 measurements x 100,000 samples (the default) x 32 bytes
  request.set_unpaired(true);
  grpc::Status st = Run(request);
  ExpectRefused(st, grpc::StatusCode::INVALID_ARGUMENT, "limits.max_stored_bytes_per_run");
  EXPECT_THAT(st.error_message(), HasSubstr("128 measurements x up to 100000 samples x 32 bytes"));
  EXPECT_THAT(st.error_message(), HasSubstr("could store 390.8 MiB"));
  EXPECT_THAT(st.error_message(), HasSubstr("at most 2.0 MiB"));
  // One measurement of up to 100,000 samples does not fit either (2.3 MiB); of up to 50,000 it
  // does, and runs.
  v1::RunRequest one = Valid();
  one.mutable_timing()->set_max_samples(100000);
  ExpectRefused(Run(one), grpc::StatusCode::INVALID_ARGUMENT, "could store 3.1 MiB");
  one.mutable_timing()->set_max_samples(50000);
  EXPECT_TRUE(Run(one).ok());

  // Verify and Profile store no samples, only rows: 128 x 16 shapes x 1024 bytes = 2 MiB and more.
  v1::VerifyRequest verify;
  verify.add_variants("abl_*");
  for (int i = 0; i < 17; ++i) {
    auto* s = verify.add_shapes();
    s->set_m(256 + 128 * i);
    s->set_n(256);
    s->set_k(256);
  }
  auto stub = daemon_->Stub();
  v1::VerifyResponse verified;
  grpc::ClientContext c1;
  st = stub->Verify(&c1, verify, &verified);
  ExpectRefused(st, grpc::StatusCode::INVALID_ARGUMENT, "limits.max_stored_bytes_per_run");
  EXPECT_THAT(st.error_message(), HasSubstr("2176 verifications (+ 1024 bytes of rows each)"));
  v1::ProfileRequest profile;
  profile.add_variants("abl_*");
  *profile.mutable_shapes() = verify.shapes();
  v1::ProfileResponse profiled;
  grpc::ClientContext c2;
  st = stub->Profile(&c2, profile, &profiled);
  ExpectRefused(st, grpc::StatusCode::INVALID_ARGUMENT, "limits.max_stored_bytes_per_run");
  EXPECT_THAT(st.error_message(), HasSubstr("2176 profiles"));
}

// A reply over limits.max_reply_bytes (GetRun with every raw sample) is refused by name; the same
// run without samples answers.
TEST_F(Hostile, AGetRunReplyOverTheByteCapIsRefusedWithWhatToDoInstead) {
  StartDaemon("[limits]\nmax_reply_bytes = 16384\n");
  v1::RunRequest request = Valid();
  request.mutable_timing()->set_min_samples(3000);
  int64_t run_id = 0;
  ASSERT_TRUE(Run(request, &run_id).ok());
  auto stub = daemon_->Stub();
  v1::GetRunRequest get;
  get.set_run_id(run_id);
  get.set_include_samples(true);
  v1::GetRunResponse response;
  grpc::ClientContext c1;
  grpc::Status st = stub->GetRun(&c1, get, &response);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << st.error_message();
  EXPECT_THAT(st.error_message(), HasSubstr("limits.max_reply_bytes"));
  EXPECT_THAT(st.error_message(), HasSubstr("QueryMeasurements"));
  get.set_include_samples(false);
  grpc::ClientContext c2;
  EXPECT_TRUE(stub->GetRun(&c2, get, &response).ok());
}

// The queue's check and push happen under one count: many submissions at once never overfill it.
TEST_F(Hostile, AFullQueueAdmitsNoMoreThanItsSizeUnderARace) {
  constexpr int kQueue = 16, kSubmissions = 60;
  StartDaemon("[queue]\nmax_queued_per_gpu = " + std::to_string(kQueue) +
                  "\n[limits]\nmax_runs_per_identity = 500\n",
              {{"ABLATION_FAKE_SLEEP_MS", "1000"}});
  auto stub = daemon_->Stub();
  // One run holds the GPU (started, so off the queue) while the others race for places.
  grpc::ClientContext first_ctx;
  v1::RunRequest long_run = Valid();
  long_run.set_rounds(30);
  auto first = stub->RunAblation(&first_ctx, long_run);
  v1::RunEvent event;
  while (first->Read(&event) && !event.has_started()) {
  }
  std::vector<std::thread> threads;
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts(kSubmissions);
  std::mutex mu;
  int queued = 0, refused = 0;
  for (int i = 0; i < kSubmissions; ++i) {
    contexts[i] = std::make_unique<grpc::ClientContext>();
    threads.emplace_back([&, ctx = contexts[i].get()] {
      auto reader = stub->RunAblation(ctx, Valid());
      v1::RunEvent e;
      const bool got = reader->Read(&e);
      {
        std::lock_guard lock(mu);
        if (got && e.has_queued()) ++queued;
      }
      if (got) ctx->TryCancel();  // leave; the queued run stays until the daemon stops
      while (reader->Read(&e)) {
      }
      grpc::Status st = reader->Finish();
      std::lock_guard lock(mu);
      if (!got && st.error_code() == grpc::StatusCode::FAILED_PRECONDITION &&
          st.error_message().find("runs queued") != std::string::npos)
        ++refused;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(queued, kQueue);
  EXPECT_EQ(refused, kSubmissions - kQueue);
  first_ctx.TryCancel();
  while (first->Read(&event)) {
  }
  (void)first->Finish();
}

// A unary call through the generic stub: `path` with `body` as its bytes; the status.
grpc::Status CallRaw(const std::string& address, const std::string& path, const std::string& body) {
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  grpc::GenericStub generic(channel);
  grpc::CompletionQueue cq;
  grpc::ClientContext ctx;
  grpc::Slice slice(body);
  grpc::ByteBuffer request(&slice, 1);
  auto call = generic.PrepareUnaryCall(&ctx, path, request, &cq);
  call->StartCall();
  grpc::ByteBuffer response;
  grpc::Status st;
  call->Finish(&response, &st, reinterpret_cast<void*>(1));
  void* tag = nullptr;
  bool ok = false;
  EXPECT_TRUE(cq.Next(&tag, &ok));
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  return st;
}

// Bytes that are no ListRunsRequest: gRPC 1.51's callback handler answers such a call itself,
// before any handler of the daemon runs, with UNIMPLEMENTED and no message
// (server_callback_handlers.h: a failed Deserialize makes an UnimplementedUnaryReactor); an
// interceptor (unknown_calls.h) turns that into INVALID_ARGUMENT naming the message expected.
// The daemon goes on answering.
TEST_F(Hostile, AnUnparsableRequestIsRefusedByNameAndTheDaemonGoesOn) {
  StartDaemon();
  grpc::Status st = CallRaw(daemon_->address(), "/ablation.v1.Ablation/ListRuns",
                            "\xff\xff\xff\xff\x0f garbage that is no protobuf");
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << st.error_message();
  EXPECT_THAT(st.error_message(),
              HasSubstr("the request of /ablation.v1.Ablation/ListRuns does not parse as "
                        "ablation.v1.ListRunsRequest"));
  auto stub = daemon_->Stub();
  grpc::ClientContext after;
  v1::ListRunsResponse runs;
  EXPECT_TRUE(stub->ListRuns(&after, v1::ListRunsRequest(), &runs).ok());
}

// A method nobody serves gets UNIMPLEMENTED with a sentence naming it and what is served, rather
// than gRPC's empty message; a method missing from ablation.v1.Ablation says so.
TEST_F(Hostile, AnUnknownMethodIsNamedWithTheServicesThisDaemonServes) {
  StartDaemon();
  grpc::Status st = CallRaw(daemon_->address(), "/x.Y/Z", "");
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_THAT(st.error_message(), HasSubstr("unknown method '/x.Y/Z': this daemon serves "
                                            "ablation.v1.Ablation, grpc.health.v1.Health"));
  st = CallRaw(daemon_->address(), "/ablation.v1.Ablation/RunEverything", "");
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_THAT(st.error_message(),
              HasSubstr("ablation.v1.Ablation has no method 'RunEverything' in this daemon"));
  auto stub = daemon_->Stub();
  grpc::ClientContext after;
  v1::ListRunsResponse runs;
  EXPECT_TRUE(stub->ListRuns(&after, v1::ListRunsRequest(), &runs).ok());
}

}  // namespace
}  // namespace ablation::testing
