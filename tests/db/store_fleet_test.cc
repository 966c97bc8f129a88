// The Store's side of a fleet's export (schema v17): the daemon's identity and the outbox that
// triggers fill in the transaction that makes a run final.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "db/migrations.h"
#include "tests/db/old_schemas.h"
#include "tests/db/store_test_support.h"

namespace ablation::db {
namespace {

using ::testing::ElementsAre;

class StoreFleetTest : public testing::StoreTest {
 protected:
  std::vector<int64_t> Pending() {
    std::vector<int64_t> ids;
    for (const OutboxEntry& e : store_->PendingExports(100)) ids.push_back(e.run_id);
    return ids;
  }
};

TEST_F(StoreFleetTest, TheDaemonIdIsMadeOnceAndKept) {
  const std::string id = store_->DaemonId();
  EXPECT_EQ(id.size(), 32u);
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
  store_.reset();
  store_ = Store::Open(path_);
  EXPECT_EQ(store_->DaemonId(), id);
  const std::string elsewhere = PathOf("other.db");  // another database: another daemon
  EXPECT_NE(Store::Open(elsewhere)->DaemonId(), id);
}

TEST_F(StoreFleetTest, ARunEntersTheOutboxWhenItBecomesFinalAndLeavesWhenExported) {
  const int64_t a = store_->CreateRun(testing::MakeRun());
  const int64_t b = store_->CreateRun(testing::MakeRun());
  const int64_t c = store_->CreateRun(testing::MakeRun());
  EXPECT_TRUE(Pending().empty());  // queued runs wait for their end
  store_->MarkRunStarted(a, testing::H200(), testing::kBaseMs + 1);
  EXPECT_TRUE(Pending().empty());
  store_->FinishRun(a, v1::RUN_STATE_SUCCEEDED, "", testing::kBaseMs + 2);
  store_->FinishRun(b, v1::RUN_STATE_CANCELLED, "cancelled", testing::kBaseMs + 3);
  // A daemon that died: its unfinished run is made final at the next start, and so enqueued.
  store_->MarkInterruptedRuns(testing::kBaseMs + 4, "interrupted");
  EXPECT_THAT(Pending(), ElementsAre(a, b, c));
  EXPECT_EQ(store_->ExportBacklog().runs, 3);
  EXPECT_EQ(store_->ExportBacklog().oldest_enqueued_at_ms, testing::kBaseMs + 2);

  store_->RecordExportFailure(a, "connection refused");
  store_->RecordExportFailure(a, "connection refused again");
  const std::vector<OutboxEntry> entries = store_->PendingExports(1);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].attempts, 2);
  EXPECT_EQ(entries[0].last_error, "connection refused again");

  store_->MarkExported(a);
  store_->MarkExported(a);  // again, after a crash: nothing
  EXPECT_THAT(Pending(), ElementsAre(b, c));
  // A state change after the end (none happens today) enqueues nothing twice.
  store_->UpdateRunState(b, v1::RUN_STATE_FAILED);
  EXPECT_THAT(Pending(), ElementsAre(b, c));
}

// v16 -> v17: the runs finished before are enqueued, so the first export sends the history.
TEST_F(StoreFleetTest, AV16DatabaseEnqueuesItsFinishedRuns) {
  const int64_t done = store_->CreateRun(testing::MakeRun());
  store_->FinishRun(done, v1::RUN_STATE_SUCCEEDED, "", testing::kBaseMs + 5);
  const int64_t queued = store_->CreateRun(testing::MakeRun());
  store_.reset();
  {
    testing::RawDb raw(path_);
    testing::UndoV18(raw);
    raw.Exec("DROP TRIGGER runs_final_to_outbox");
    raw.Exec("DROP TRIGGER runs_created_final_to_outbox");
    raw.Exec("DROP TABLE fleet_outbox");
    raw.Exec("DROP TABLE daemon_identity");
    raw.Exec("PRAGMA user_version = 16");
  }
  store_ = Store::Open(path_);
  testing::RawDb raw(path_);
  EXPECT_EQ(raw.Int("PRAGMA user_version"), kSchemaVersion);
  EXPECT_THAT(Pending(), ElementsAre(done));
  EXPECT_EQ(store_->DaemonId().size(), 32u);
  store_->FinishRun(queued, v1::RUN_STATE_FAILED, "x", testing::kBaseMs + 6);
  EXPECT_THAT(Pending(), ElementsAre(done, queued));
}

}  // namespace
}  // namespace ablation::db
