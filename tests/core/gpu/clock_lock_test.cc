// ScopedClockLock and its journal against the stand-in NVML: every lock is followed by its
// reset, on every way out; the journal is durable before the lock; a "crashed" lock is reset by
// the next ResetAll; specs resolve against the supported clocks and wrong numbers are refused.
#include "server/core/gpu/clock_lock.h"

#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>

#include "tests/support/fake_nvml_env.h"

namespace ablation::core {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using testing::FakeNvmlTest;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::kFakeUuid;
using ::testing::Not;

// ---- Resolution, pure

SupportedClocks Table() {
  SupportedClocks t;
  t.mem_mhz = {3201, 1600};
  for (int v = 1980; v >= 345; v -= 15) t.sm_mhz_by_mem[3201].push_back(v);
  t.sm_mhz_by_mem[1600] = {1200, 1000};
  return t;
}

TEST(ResolveClockSpecsTest, NumbersBaseAndMax) {
  ClockTarget t;
  ASSERT_TRUE(ResolveClockSpecs(Table(), {1590, 3201}, "1410", "3201", &t).ok());
  EXPECT_EQ(t.sm_mhz, 1410);
  EXPECT_EQ(t.mem_mhz, 3201);
  ASSERT_TRUE(ResolveClockSpecs(Table(), {1590, 3201}, "max", "max", &t).ok());
  EXPECT_EQ(t.sm_mhz, 1980);
  EXPECT_EQ(t.mem_mhz, 3201);
  ASSERT_TRUE(ResolveClockSpecs(Table(), {1590, 3201}, "base", "base", &t).ok());
  EXPECT_EQ(t.sm_mhz, 1590);
  EXPECT_EQ(t.mem_mhz, 3201);
}

TEST(ResolveClockSpecsTest, BaseSnapsToTheNearestSupportedClock) {
  ClockTarget t;
  ASSERT_TRUE(ResolveClockSpecs(Table(), {1600, 3201}, "base", "", &t).ok());
  EXPECT_EQ(t.sm_mhz, 1605);
  EXPECT_EQ(t.mem_mhz, 0);  // memory left alone
}

TEST(ResolveClockSpecsTest, SmClocksAreThoseOfTheLockedMemoryClock) {
  ClockTarget t;
  ASSERT_TRUE(ResolveClockSpecs(Table(), {}, "max", "1600", &t).ok());
  EXPECT_EQ(t.sm_mhz, 1200);
  Status s = ResolveClockSpecs(Table(), {}, "1410", "1600", &t);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("nearest supported: 1200"));
}

TEST(ResolveClockSpecsTest, UnsupportedNumberNamesTheFieldAndTheNearestClocks) {
  ClockTarget t;
  Status s = ResolveClockSpecs(Table(), {1590, 3201}, "1400", "", &t);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("clocks.sm_mhz"), HasSubstr("1400 MHz"),
                                 HasSubstr("nearest supported: 1395, 1410")));
  s = ResolveClockSpecs(Table(), {1590, 3201}, "2100", "", &t);
  EXPECT_THAT(s.message(), HasSubstr("nearest supported: 1980 "));
  s = ResolveClockSpecs(Table(), {1590, 3201}, "", "3000", &t);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("clocks.mem_mhz"), HasSubstr("1600, 3201")));
}

TEST(ResolveClockSpecsTest, WordsOtherThanBaseOrMaxAndEmptyRequestsAreRefused) {
  ClockTarget t;
  for (const char* bad : {"fast", "-5", "0", "1410MHz", "14.1"}) {
    Status s = ResolveClockSpecs(Table(), {}, bad, "", &t);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << bad;
    EXPECT_THAT(s.message(), HasSubstr("neither a number of MHz, base nor max")) << bad;
  }
  EXPECT_EQ(ResolveClockSpecs(Table(), {}, "", "", &t).code(), Code::kInvalidArgument);
  // "base" on a device that reports none is a precondition, not the user's fault.
  EXPECT_EQ(ResolveClockSpecs(Table(), {}, "base", "", &t).code(), Code::kFailedPrecondition);
}

TEST(ClockPolicyStringTest, ObserveOrLockedClocks) {
  EXPECT_EQ(ClockPolicyString(nullptr), "observe");
  ClockTarget both{1410, 3201}, sm{1410, 0};
  EXPECT_EQ(ClockPolicyString(&both), "lock sm=1410 mem=3201");
  EXPECT_EQ(ClockPolicyString(&sm), "lock sm=1410");
}

// ---- Journal

class ClockLockTest : public FakeNvmlTest {
 protected:
  void SetUp() override {
    FakeNvmlTest::SetUp();
    journal_path_ = ClockLockJournal::DefaultPath(dir_ + "/ablationd.db");
  }
  std::vector<JournalEntry> Entries() {
    ClockLockJournal journal(journal_path_);
    std::vector<JournalEntry> entries;
    EXPECT_TRUE(journal.Read(&entries).ok());
    return entries;
  }
  std::string journal_path_;
};

TEST_F(ClockLockTest, JournalListsLocksInForce) {
  ClockLockJournal journal(journal_path_);
  EXPECT_EQ(journal_path_, dir_ + "/ablationd.db.clocks");
  EXPECT_THAT(Entries(), IsEmpty());
  ASSERT_TRUE(journal.RecordIntent("GPU-a", 1410, 3201).ok());
  ASSERT_TRUE(journal.RecordIntent("GPU-b", 1980, 0).ok());
  ASSERT_TRUE(journal.RecordIntent("GPU-a", 1500, 3201).ok());  // replaces GPU-a's entry
  auto entries = Entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].uuid, "GPU-b");
  EXPECT_EQ(entries[1].uuid, "GPU-a");
  EXPECT_EQ(entries[1].sm_mhz, 1500);
  EXPECT_EQ(entries[1].mem_mhz, 3201);
  EXPECT_EQ(entries[1].pid, getpid());
  EXPECT_GT(entries[1].time_ms, 0);
  ASSERT_TRUE(journal.Clear("GPU-a").ok());
  ASSERT_TRUE(journal.Clear("GPU-b").ok());
  EXPECT_FALSE(std::filesystem::exists(journal_path_));  // no locks: no file
}

TEST_F(ClockLockTest, MalformedJournalIsAnError) {
  { std::ofstream(journal_path_) << "GPU-a sm=fast\n"; }
  ClockLockJournal journal(journal_path_);
  std::vector<JournalEntry> entries;
  Status s = journal.Read(&entries);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), AllOf(HasSubstr(journal_path_), HasSubstr("line 1")));
}

// ---- ScopedClockLock

TEST_F(ClockLockTest, LocksAndResetsOnScopeExit) {
  auto nvml = LoadFake();
  ASSERT_NE(nvml, nullptr);
  ClockLockJournal journal(journal_path_);
  {
    std::unique_ptr<ScopedClockLock> lock;
    ASSERT_TRUE(ScopedClockLock::Acquire(*nvml, journal, kFakeUuid, "max", "max", &lock).ok());
    ASSERT_NE(lock, nullptr);
    EXPECT_EQ(lock->PolicyString(), "lock sm=1980 mem=3201");
    ASSERT_EQ(Entries().size(), 1u);
    EXPECT_EQ(Entries()[0].uuid, kFakeUuid);
  }
  EXPECT_THAT(ClockCalls(), ElementsAre("lock_mem 3201 3201 rc=0", "lock_gpu 1980 1980 rc=0",
                                        "reset_gpu rc=0", "reset_mem rc=0"));
  EXPECT_THAT(Entries(), IsEmpty());
  ExpectEveryLockReset();
}

TEST_F(ClockLockTest, JournalIsWrittenBeforeTheLock) {
  setenv("FAKE_NVML_WATCH_FILE", journal_path_.c_str(), 1);
  auto nvml = LoadFake();
  ASSERT_NE(nvml, nullptr);
  ClockLockJournal journal(journal_path_);
  std::unique_ptr<ScopedClockLock> lock;
  ASSERT_TRUE(ScopedClockLock::Acquire(*nvml, journal, kFakeUuid, "1410", "3201", &lock).ok());
  ASSERT_TRUE(lock->Release().ok());
  EXPECT_THAT(ClockCalls(),
              ElementsAre("lock_mem 3201 3201 rc=0 file=yes", "lock_gpu 1410 1410 rc=0 file=yes",
                          "reset_gpu rc=0", "reset_mem rc=0"));
  EXPECT_FALSE(std::filesystem::exists(journal_path_));
}

Status RunThatReturnsEarly(Nvml& nvml, ClockLockJournal& journal) {
  std::unique_ptr<ScopedClockLock> lock;
  if (Status s = ScopedClockLock::Acquire(nvml, journal, kFakeUuid, "1410", "", &lock); !s.ok()) {
    return s;
  }
  return InvalidArgument("a measurement failed");  // early return: the lock's scope ends
}

void RunThatThrows(Nvml& nvml, ClockLockJournal& journal) {
  std::unique_ptr<ScopedClockLock> lock;
  if (!ScopedClockLock::Acquire(nvml, journal, kFakeUuid, "1410", "", &lock).ok()) return;
  throw std::runtime_error("worker died");
}

TEST_F(ClockLockTest, ResetsOnEarlyReturnAndException) {
  auto nvml = LoadFake();
  ASSERT_NE(nvml, nullptr);
  ClockLockJournal journal(journal_path_);
  EXPECT_EQ(RunThatReturnsEarly(*nvml, journal).code(), Code::kInvalidArgument);
  EXPECT_THROW(RunThatThrows(*nvml, journal), std::runtime_error);
  EXPECT_THAT(ClockCalls(),
              ElementsAre("lock_gpu 1410 1410 rc=0", "reset_gpu rc=0", "reset_mem rc=0",
                          "lock_gpu 1410 1410 rc=0", "reset_gpu rc=0", "reset_mem rc=0"));
  EXPECT_THAT(Entries(), IsEmpty());
  ExpectEveryLockReset();
}

TEST_F(ClockLockTest, ReleaseResetsOnceAndReturnsTheStatus) {
  auto nvml = LoadFake();
  ASSERT_NE(nvml, nullptr);
  ClockLockJournal journal(journal_path_);
  std::unique_ptr<ScopedClockLock> lock;
  ASSERT_TRUE(ScopedClockLock::Acquire(*nvml, journal, kFakeUuid, "base", "", &lock).ok());
  EXPECT_EQ(lock->target().sm_mhz, 1590);
  EXPECT_TRUE(lock->Release().ok());
  EXPECT_TRUE(lock->Release().ok());
  lock.reset();  // the destructor does not reset a second time
  EXPECT_THAT(ClockCalls(),
              ElementsAre("lock_gpu 1590 1590 rc=0", "reset_gpu rc=0", "reset_mem rc=0"));
}

TEST_F(ClockLockTest, NoPermissionFailsWithTheSentenceAndLocksNothing) {
  setenv("FAKE_NVML_NO_PERMISSION", "1", 1);
  auto nvml = LoadFake();
  ASSERT_NE(nvml, nullptr);
  ClockLockJournal journal(journal_path_);
  std::unique_ptr<ScopedClockLock> lock;
  Status s = ScopedClockLock::Acquire(*nvml, journal, kFakeUuid, "1410", "3201", &lock);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("locking clocks needs root or the CAP_SYS_ADMIN capability: "
                                     "run ablationd as root, or use clocks.mode=observe"));
  EXPECT_EQ(lock, nullptr);
  for (const auto& line : ClockCalls()) EXPECT_THAT(line, Not(HasSubstr("rc=0")));
  ExpectEveryLockReset();
  EXPECT_THAT(Entries(), IsEmpty());  // the intent was withdrawn
}

TEST_F(ClockLockTest, UnsupportedNumberIsRefusedBeforeAnything) {
  auto nvml = LoadFake();
  ASSERT_NE(nvml, nullptr);
  ClockLockJournal journal(journal_path_);
  std::unique_ptr<ScopedClockLock> lock;
  Status s = ScopedClockLock::Acquire(*nvml, journal, kFakeUuid, "1985", "", &lock);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("clocks.sm_mhz"), HasSubstr("1980")));
  EXPECT_THAT(ClockCalls(), IsEmpty());
  EXPECT_FALSE(std::filesystem::exists(journal_path_));
}

TEST_F(ClockLockTest, LockLeftByACrashIsResetByTheNextStart) {
  {
    auto nvml = LoadFake();
    ASSERT_NE(nvml, nullptr);
    ClockLockJournal journal(journal_path_);
    std::unique_ptr<ScopedClockLock> lock;
    ASSERT_TRUE(ScopedClockLock::Acquire(*nvml, journal, kFakeUuid, "1410", "3201", &lock).ok());
    (void)lock.release();  // the daemon "dies": no destructor, no reset (leaked on purpose)
  }
  EXPECT_THAT(ClockCalls(), ElementsAre("lock_mem 3201 3201 rc=0", "lock_gpu 1410 1410 rc=0"));
  ASSERT_EQ(Entries().size(), 1u);

  // The next daemon start (or `ablationd --reset-clocks`): a new NVML session and journal.
  auto nvml = LoadFake();
  ASSERT_NE(nvml, nullptr);
  ClockLockJournal journal(journal_path_);
  std::vector<std::string> reset;
  ASSERT_TRUE(journal.ResetAll(nvml.get(), &reset).ok());
  EXPECT_THAT(reset, ElementsAre(kFakeUuid));
  EXPECT_THAT(Entries(), IsEmpty());
  ExpectEveryLockReset();
  // Nothing to do the second time.
  ASSERT_TRUE(journal.ResetAll(nvml.get(), &reset).ok());
  EXPECT_THAT(reset, IsEmpty());
}

TEST_F(ClockLockTest, FailedResetKeepsTheJournalEntryForTheNextTry) {
  auto nvml = LoadFake();
  ASSERT_NE(nvml, nullptr);
  ClockLockJournal journal(journal_path_);
  std::unique_ptr<ScopedClockLock> lock;
  ASSERT_TRUE(ScopedClockLock::Acquire(*nvml, journal, kFakeUuid, "1410", "", &lock).ok());
  setenv("FAKE_NVML_NO_PERMISSION", "1", 1);
  Status s = lock->Release();
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("cannot reset the clocks of"), HasSubstr(journal_path_)));
  ASSERT_EQ(Entries().size(), 1u);
  EXPECT_FALSE(journal.ResetAll(nvml.get()).ok());
  ASSERT_EQ(Entries().size(), 1u);
  unsetenv("FAKE_NVML_NO_PERMISSION");
  EXPECT_TRUE(journal.ResetAll(nvml.get()).ok());
  EXPECT_THAT(Entries(), IsEmpty());
  ExpectEveryLockReset();
}

TEST_F(ClockLockTest, ResetAllDropsGpusThatAreGoneAndNeedsNvml) {
  ClockLockJournal journal(journal_path_);
  ASSERT_TRUE(journal.RecordIntent("GPU-ffffffff-0000-0000-0000-000000000000", 1410, 0).ok());
  Status s = journal.ResetAll(nullptr);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("NVML is not available"));
  ASSERT_EQ(Entries().size(), 1u);

  auto nvml = LoadFake();
  ASSERT_NE(nvml, nullptr);
  std::vector<std::string> reset;
  EXPECT_TRUE(journal.ResetAll(nvml.get(), &reset).ok());
  EXPECT_THAT(reset, IsEmpty());
  EXPECT_THAT(Entries(), IsEmpty());
  EXPECT_THAT(ClockCalls(), IsEmpty());
}

// The clock guard resets only its daemon's entries (only_pid): another daemon's lock on the same
// journal (a restarted daemon that took a lock already) stays, untouched.
TEST_F(ClockLockTest, ResetAllOfOneProcessLeavesTheOthersEntries) {
  const std::string other = "GPU-ffffffff-0000-0000-0000-000000000001";
  {
    std::ofstream(journal_path_) << kFakeUuid << " sm=1410 mem=0 pid=111 time_ms=1\n"
                                 << other << " sm=1980 mem=0 pid=222 time_ms=2\n";
  }
  auto nvml = LoadFake();
  ASSERT_NE(nvml, nullptr);
  ClockLockJournal journal(journal_path_);
  std::vector<std::string> reset;
  ASSERT_TRUE(journal.ResetAll(nvml.get(), &reset, 111).ok());
  EXPECT_THAT(reset, ElementsAre(kFakeUuid));
  auto entries = Entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].uuid, other);
  EXPECT_EQ(entries[0].pid, 222);
  EXPECT_THAT(ClockCalls(), ElementsAre("reset_gpu rc=0", "reset_mem rc=0"));
  // Nothing of pid 111 is left: nothing is done, the other entry stays.
  ASSERT_TRUE(journal.ResetAll(nvml.get(), &reset, 111).ok());
  EXPECT_THAT(reset, IsEmpty());
  EXPECT_EQ(Entries().size(), 1u);
}

// Two processes writing the journal at once (a daemon and its guard, or a daemon restarted while
// the guard of the one before resets) never lose each other's entries: each read-modify-write
// holds the journal's file lock.
TEST_F(ClockLockTest, WritersInTwoProcessesLoseNoEntry) {
  constexpr int kEach = 40;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ClockLockJournal journal(journal_path_);
    for (int i = 0; i < kEach; ++i)
      if (!journal.RecordIntent("GPU-child-" + std::to_string(i), 1410, 0).ok()) _exit(1);
    _exit(0);
  }
  ClockLockJournal journal(journal_path_);
  for (int i = 0; i < kEach; ++i)
    ASSERT_TRUE(journal.RecordIntent("GPU-parent-" + std::to_string(i), 1410, 0).ok());
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(Entries().size(), size_t(2 * kEach));
}

}  // namespace
}  // namespace ablation::core
