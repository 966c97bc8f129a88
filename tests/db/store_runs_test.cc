// The Store's runs: lifecycle, refusals, counts, listing and recovery.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "db/error.h"
#include "db/page_token.h"
#include "db/store.h"
#include "tests/db/db_test_support.h"
#include "tests/db/store_test_support.h"

namespace ablation::db {
namespace {

using testing::BareRun;
using testing::CodeOf;
using ::testing::ElementsAre;
using testing::FullMeasurement;
using testing::H200;
using ::testing::HasSubstr;
using testing::kBaseMs;
using testing::MakeRun;
using testing::RawDb;
using testing::SameMessage;
using testing::StoreTest;
using testing::TempDirTest;

TEST_F(StoreTest, RunRoundTripsWithTagsAndDeviceThroughItsLifecycle) {
  v1::Run run = MakeRun({"nightly", "h200", "nightly"});
  run.set_kind(v1::RUN_KIND_VERIFY);
  run.set_id(777);    // ignored: SQLite assigns the id
  run.set_ok(5);      // ignored: computed on read
  run.set_failed(6);  // ignored: computed on read
  const int64_t id = store_->CreateRun(run);
  EXPECT_GT(id, 0);
  EXPECT_NE(id, 777);

  auto read = store_->GetRun(id);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->id(), id);
  EXPECT_EQ(read->kind(), v1::RUN_KIND_VERIFY);
  EXPECT_EQ(read->state(), v1::RUN_STATE_QUEUED);
  EXPECT_EQ(read->daemon_version(), "0.1.0");
  EXPECT_EQ(read->git_revision(), "0123456789ab");
  EXPECT_EQ(read->request_json(), run.request_json());
  EXPECT_EQ(read->requested_by(), "alice@node7");
  EXPECT_THAT(read->tags(), ElementsAre("nightly", "h200"));  // given order, duplicate once
  EXPECT_EQ(read->created_at_ms(), kBaseMs);
  EXPECT_EQ(read->started_at_ms(), 0);
  EXPECT_EQ(read->finished_at_ms(), 0);
  EXPECT_EQ(read->planned(), 12);
  EXPECT_EQ(read->clock_policy(), "observe");
  EXPECT_EQ(read->ok(), 0);
  EXPECT_EQ(read->failed(), 0);
  EXPECT_EQ(read->device().name(), "");
  {
    RawDb raw(path_);
    EXPECT_EQ(raw.Text("SELECT coalesce(started_at_ms, 'null') FROM runs"), "null");
    EXPECT_EQ(raw.Text("SELECT coalesce(finished_at_ms, 'null') FROM runs"), "null");
    // The enums as the dashboards read them.
    EXPECT_EQ(raw.Text("SELECT kind FROM runs"), "verify");
    EXPECT_EQ(raw.Text("SELECT state FROM runs"), "queued");
  }

  store_->MarkRunStarted(id, H200(), kBaseMs + 10);
  read = store_->GetRun(id);
  EXPECT_EQ(read->state(), v1::RUN_STATE_RUNNING);
  EXPECT_EQ(read->started_at_ms(), kBaseMs + 10);
  EXPECT_TRUE(SameMessage(read->device(), H200()));
  EXPECT_EQ(read->device().index(), 1);
  EXPECT_EQ(read->device().smem_per_sm(), 233'472);
  {
    // DeviceIdentity's column options: index, name, uuid are device_index, _name, _uuid.
    RawDb raw(path_);
    EXPECT_EQ(raw.Int("SELECT device_index FROM runs"), 1);
    EXPECT_EQ(raw.Text("SELECT device_name FROM runs"), "NVIDIA H200");
    EXPECT_EQ(raw.Text("SELECT device_uuid FROM runs"), "GPU-0f1e2d3c");
    EXPECT_EQ(raw.Int("SELECT l2_bytes FROM runs"), 52'428'800);
    EXPECT_EQ(raw.Text("SELECT state FROM runs"), "running");
  }

  store_->UpdateRunState(id, v1::RUN_STATE_RUNNING);
  store_->FinishRun(id, v1::RUN_STATE_PARTIAL, "2 of 12 failed", kBaseMs + 99);
  read = store_->GetRun(id);
  EXPECT_EQ(read->state(), v1::RUN_STATE_PARTIAL);
  EXPECT_EQ(read->error(), "2 of 12 failed");
  EXPECT_EQ(read->finished_at_ms(), kBaseMs + 99);
  RawDb raw(path_);
  EXPECT_EQ(raw.Text("SELECT state FROM runs"), "partial");
}

TEST_F(StoreTest, CreatedAtDefaultsToNow) {
  v1::Run run = BareRun();
  run.set_created_at_ms(0);
  const auto before = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const int64_t id = store_->CreateRun(run);
  EXPECT_GE(store_->GetRun(id)->created_at_ms(), before);
}

TEST_F(StoreTest, StartedAndFinishedTimesAreStoredWhenGiven) {
  v1::Run run = MakeRun();
  run.set_state(v1::RUN_STATE_SUCCEEDED);
  run.set_started_at_ms(kBaseMs + 1);
  run.set_finished_at_ms(kBaseMs + 2);
  const int64_t id = store_->CreateRun(run);
  EXPECT_EQ(store_->GetRun(id)->started_at_ms(), kBaseMs + 1);
  EXPECT_EQ(store_->GetRun(id)->finished_at_ms(), kBaseMs + 2);
  EXPECT_EQ(store_->GetRun(id)->state(), v1::RUN_STATE_SUCCEEDED);
}

TEST_F(StoreTest, UnknownRunsAndStatesAreRefusedClearly) {
  const int64_t id = store_->CreateRun(MakeRun());
  std::string message;
  EXPECT_EQ(CodeOf([&] { store_->FinishRun(999, v1::RUN_STATE_SUCCEEDED, "", 1); }, &message),
            Error::Code::kNotFound);
  EXPECT_THAT(message, HasSubstr("run 999"));
  EXPECT_EQ(CodeOf([&] { store_->MarkRunStarted(999, H200(), 1); }), Error::Code::kNotFound);
  EXPECT_EQ(CodeOf([&] { store_->UpdateRunState(999, v1::RUN_STATE_RUNNING); }),
            Error::Code::kNotFound);
  EXPECT_EQ(CodeOf([&] { store_->FinishRun(id, v1::RUN_STATE_RUNNING, "", 1); }, &message),
            Error::Code::kInvalidArgument);
  EXPECT_THAT(message, HasSubstr("'running'"));
  EXPECT_EQ(CodeOf([&] { store_->FinishRun(id, v1::RUN_STATE_UNSPECIFIED, "", 1); }),
            Error::Code::kInvalidArgument);
  EXPECT_EQ(CodeOf([&] { store_->UpdateRunState(id, static_cast<v1::RunState>(42)); }, &message),
            Error::Code::kInvalidArgument);
  EXPECT_THAT(message, HasSubstr("42"));
  EXPECT_EQ(CodeOf([&] { store_->UpdateRunState(id, v1::RUN_STATE_UNSPECIFIED); }, &message),
            Error::Code::kInvalidArgument);
  EXPECT_THAT(message, HasSubstr("unspecified"));

  // CreateRun refuses an unspecified (or unknown) state or kind.
  v1::Run bad = MakeRun();
  bad.set_kind(v1::RUN_KIND_UNSPECIFIED);
  EXPECT_EQ(CodeOf([&] { store_->CreateRun(bad); }, &message), Error::Code::kInvalidArgument);
  EXPECT_THAT(message, HasSubstr("run kind unspecified"));
  bad.set_kind(static_cast<v1::RunKind>(9));
  EXPECT_EQ(CodeOf([&] { store_->CreateRun(bad); }), Error::Code::kInvalidArgument);
  bad = MakeRun();
  bad.set_state(v1::RUN_STATE_UNSPECIFIED);
  EXPECT_EQ(CodeOf([&] { store_->CreateRun(bad); }, &message), Error::Code::kInvalidArgument);
  EXPECT_THAT(message, HasSubstr("run state unspecified"));
  bad.set_state(static_cast<v1::RunState>(17));
  EXPECT_EQ(CodeOf([&] { store_->CreateRun(bad); }), Error::Code::kInvalidArgument);

  v1::Measurement orphan = FullMeasurement(12345);
  EXPECT_EQ(CodeOf([&] { store_->InsertMeasurement(orphan); }, &message), Error::Code::kNotFound);
  EXPECT_THAT(message, HasSubstr("run 12345"));
  v1::VerifyResult lost;
  lost.set_run_id(12345);
  EXPECT_EQ(CodeOf([&] { store_->InsertVerification(lost); }), Error::Code::kNotFound);

  EXPECT_FALSE(store_->GetRun(999).has_value());
  EXPECT_EQ(store_->GetRun(id)->state(), v1::RUN_STATE_QUEUED);  // nothing half-applied
  RawDb raw(path_);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM runs"), 1);
}

TEST_F(StoreTest, LatestRunIsTheNewest) {
  EXPECT_FALSE(store_->LatestRun().has_value());
  store_->CreateRun(MakeRun());
  const int64_t second = store_->CreateRun(MakeRun({"x"}));
  auto latest = store_->LatestRun();
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->id(), second);
  EXPECT_THAT(latest->tags(), ElementsAre("x"));
}

TEST_F(StoreTest, RunCountsOkAndFailedByKind) {
  const int64_t ablation = store_->CreateRun(MakeRun());
  for (v1::MeasurementStatus status :
       {v1::MEASUREMENT_STATUS_OK, v1::MEASUREMENT_STATUS_OK, v1::MEASUREMENT_STATUS_FAILED,
        v1::MEASUREMENT_STATUS_SKIPPED}) {
    v1::Measurement x = FullMeasurement(ablation);
    x.set_status(status);
    store_->InsertMeasurement(x);
  }
  v1::Run verify_run = MakeRun();
  verify_run.set_kind(v1::RUN_KIND_VERIFY);
  const int64_t verify = store_->CreateRun(verify_run);
  for (bool passed : {true, false, false}) {
    v1::VerifyResult v;
    v.set_run_id(verify);
    v.set_variant("abl_L0_R0_bl0_s1_sw1");
    v.set_passed(passed);
    store_->InsertVerification(v);
  }
  EXPECT_EQ(store_->GetRun(ablation)->ok(), 2);
  EXPECT_EQ(store_->GetRun(ablation)->failed(), 1);  // skipped is neither
  EXPECT_EQ(store_->GetRun(verify)->ok(), 1);
  EXPECT_EQ(store_->GetRun(verify)->failed(), 2);
}

// ---------------------------------------------------------------- ListRuns

TEST_F(StoreTest, ListRunsPagesNewestFirstAndFilters) {
  std::vector<int64_t> ids;
  for (int i = 0; i < 8; ++i) {
    ids.push_back(store_->CreateRun(
        MakeRun(i % 2 == 0 ? std::vector<std::string>{"nightly"} : std::vector<std::string>{})));
  }
  store_->FinishRun(ids[1], v1::RUN_STATE_SUCCEEDED, "", kBaseMs);
  store_->FinishRun(ids[4], v1::RUN_STATE_SUCCEEDED, "", kBaseMs);
  store_->FinishRun(ids[6], v1::RUN_STATE_FAILED, "no GPU", kBaseMs);

  RunFilter f;
  f.page_size = 3;
  std::vector<int64_t> seen;
  std::vector<size_t> sizes;
  while (true) {
    const RunPage page = store_->ListRuns(f);
    sizes.push_back(page.runs.size());
    for (const auto& run : page.runs) seen.push_back(run.id());
    if (page.next_page_token.empty()) break;
    f.page_token = page.next_page_token;
  }
  EXPECT_THAT(sizes, ElementsAre(3, 3, 2));
  EXPECT_EQ(seen, std::vector<int64_t>(ids.rbegin(), ids.rend()));

  f = {};
  f.tag = "nightly";
  std::vector<int64_t> tagged;
  for (const auto& run : store_->ListRuns(f).runs) {
    tagged.push_back(run.id());
    EXPECT_THAT(run.tags(), ElementsAre("nightly"));
  }
  EXPECT_THAT(tagged, ElementsAre(ids[6], ids[4], ids[2], ids[0]));

  f = {};
  f.state = v1::RUN_STATE_SUCCEEDED;
  std::vector<int64_t> succeeded;
  for (const auto& run : store_->ListRuns(f).runs) succeeded.push_back(run.id());
  EXPECT_THAT(succeeded, ElementsAre(ids[4], ids[1]));

  f.tag = "nightly";
  ASSERT_EQ(store_->ListRuns(f).runs.size(), 1u);
  EXPECT_EQ(store_->ListRuns(f).runs[0].id(), ids[4]);

  f = {};
  f.state = static_cast<v1::RunState>(99);
  EXPECT_EQ(CodeOf([&] { store_->ListRuns(f); }), Error::Code::kInvalidArgument);
}

TEST_F(StoreTest, RunPageTokensKeepTheirFormAcrossTheEnumChange) {
  // Tokens fingerprint the state's text, as when states were strings: a token handed out by the
  // previous daemon for state "failed" still pages the same listing.
  int64_t last = 0;
  for (int i = 0; i < 3; ++i) {
    last = store_->CreateRun(MakeRun());
    store_->FinishRun(last, v1::RUN_STATE_FAILED, "x", kBaseMs);
  }
  RunFilter f;
  f.state = v1::RUN_STATE_FAILED;
  f.page_size = 1;
  EXPECT_EQ(store_->ListRuns(f).next_page_token,
            EncodePageToken('r', last, FilterFingerprint({"", "failed"})));
}

// ---------------------------------------------------------------- recovery

TEST_F(StoreTest, InterruptedRunsAreMarkedFailedNeverDeleted) {
  const int64_t queued = store_->CreateRun(MakeRun());
  const int64_t running = store_->CreateRun(MakeRun());
  const int64_t done = store_->CreateRun(MakeRun());
  const int64_t running_with_error = store_->CreateRun(MakeRun());
  store_->MarkRunStarted(running, H200(), kBaseMs + 1);
  store_->MarkRunStarted(running_with_error, H200(), kBaseMs + 1);
  store_->InsertMeasurement(FullMeasurement(running));
  store_->FinishRun(done, v1::RUN_STATE_SUCCEEDED, "", kBaseMs + 2);
  // An error recorded before the crash, with the run still running.
  store_->FinishRun(running_with_error, v1::RUN_STATE_FAILED, "worker died", kBaseMs + 3);
  store_->UpdateRunState(running_with_error, v1::RUN_STATE_RUNNING);

  EXPECT_THAT(store_->RunsInState(v1::RUN_STATE_QUEUED), ElementsAre(queued));
  EXPECT_THAT(store_->RunsInState(v1::RUN_STATE_RUNNING), ElementsAre(running, running_with_error));
  EXPECT_EQ(CodeOf([&] { store_->RunsInState(v1::RUN_STATE_UNSPECIFIED); }),
            Error::Code::kInvalidArgument);

  // As at the next daemon start: a new Store on the same file.
  store_.reset();
  store_ = Store::Open(path_);
  const auto marked = store_->MarkInterruptedRuns(kBaseMs + 500, "daemon restarted");
  EXPECT_THAT(marked, ElementsAre(queued, running, running_with_error));
  EXPECT_TRUE(store_->RunsInState(v1::RUN_STATE_QUEUED).empty());
  EXPECT_TRUE(store_->RunsInState(v1::RUN_STATE_RUNNING).empty());
  EXPECT_THAT(store_->RunsInState(v1::RUN_STATE_FAILED),
              ElementsAre(queued, running, running_with_error));

  auto r = store_->GetRun(running);
  EXPECT_EQ(r->state(), v1::RUN_STATE_FAILED);
  EXPECT_EQ(r->error(), "daemon restarted");
  EXPECT_EQ(r->finished_at_ms(), kBaseMs + 500);
  EXPECT_EQ(r->started_at_ms(), kBaseMs + 1);
  EXPECT_EQ(r->ok(), 1);
  EXPECT_EQ(store_->MeasurementsOfRun(running, false).size(), 1u);
  EXPECT_EQ(store_->GetRun(running_with_error)->error(), "worker died; daemon restarted");
  EXPECT_EQ(store_->GetRun(done)->state(), v1::RUN_STATE_SUCCEEDED);
  EXPECT_EQ(store_->GetRun(done)->finished_at_ms(), kBaseMs + 2);

  EXPECT_TRUE(store_->MarkInterruptedRuns(kBaseMs + 600, "again").empty());
}

}  // namespace

// v16: who cancelled a run is stored with it.
TEST_F(StoreTest, WhoCancelledARunIsStoredWithIt) {
  const int64_t id = store_->CreateRun(MakeRun());
  EXPECT_EQ(store_->GetRun(id)->cancelled_by(), "");
  store_->SetCancelledBy(id, "root");
  EXPECT_EQ(store_->GetRun(id)->cancelled_by(), "root");
}

// A new database is the daemon's and its group's whatever the umask (it was 0644 under 022).
TEST_F(TempDirTest, ANewDatabaseIsCreated0640WhateverTheUmask) {
  const mode_t old = ::umask(022);
  const std::string path = PathOf("private.db");
  { auto store = Store::Open(path); }
  ::umask(old);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640);
}

// Corruption in a late page is seen when the daemon opens the file, named, not as a generic
// internal error of whichever query first reads that page.
TEST_F(TempDirTest, CorruptionInALatePageIsSeenAtOpenNamingTheFile) {
  const std::string path = PathOf("late.db");
  {
    auto store = Store::Open(path);
    v1::Run run = MakeRun();
    run.set_request_json(std::string(400, 'r'));
    for (int i = 0; i < 2000; ++i) store->CreateRun(run);
  }  // the last connection checkpoints the WAL into the file
  const auto size = std::filesystem::file_size(path);
  ASSERT_GT(size, 64u * 4096);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(std::streamoff(size - 4096));
    const std::string garbage(4096, '\xff');
    f.write(garbage.data(), std::streamsize(garbage.size()));
  }
  try {
    Store::Open(path);
    ADD_FAILURE() << "a damaged database was opened";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("database '" + path + "' is damaged"));
    EXPECT_THAT(e.what(), HasSubstr("restore it from a backup"));
  }
}

}  // namespace ablation::db
