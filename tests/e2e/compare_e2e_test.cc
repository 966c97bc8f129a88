// compare end to end: runs of 3 rounds made by the real daemon with the fake worker, whose knobs
// slow its clock (every sample longer, the same cycles), report two GPUs, or crash on a variant;
// then the real client compares them.
#include <signal.h>

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ablation/v1/report.pb.h"
#include "client/output/json.h"
#include "tests/e2e/daemon_fixture.h"
#include "tests/e2e/harness.h"

namespace ablation::testing {
namespace {

// The comparison `compare --format json` printed (its envelope's one item); an empty one, with
// the failure recorded, when the text is not that.
v1::Comparison OnlyComparison(const std::string& text) {
  std::vector<v1::Comparison> items;
  const std::string error = client::ReadJsonEnvelope(text, "comparison", &items);
  EXPECT_EQ(error, "") << text;
  EXPECT_EQ(items.size(), 1u) << text;
  return items.empty() ? v1::Comparison() : items[0];
}

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

class CompareE2E : public DaemonFixture {
 protected:
  // A daemon on the test's one database, its fake worker set up by `env`; the previous one stops.
  void StartDaemon(std::map<std::string, std::string> env = {}) { StartFakeDaemon(std::move(env)); }
  // Two items, 3 rounds each, paired in one window a round.
  CommandResult RunItems(const std::string& device = "0", std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"run",         "--variant", "L1_R1_s3",    "--variant",
                                     "cublas_bf16", "--shape",   "256x256x256", "--rounds",
                                     "3",           "--device",  device};
    args.insert(args.end(), more.begin(), more.end());
    return Client(args);
  }
};

TEST_F(CompareE2E, AThrottledSlowerRunIsExplainedAndNotCounted) {
  StartDaemon();
  ASSERT_EQ(RunItems().exit_code, 0);
  StartDaemon({{"ABLATION_FAKE_SM_MHZ", "1800"}});  // 9% down: every sample 10% longer
  ASSERT_EQ(RunItems().exit_code, 0);

  auto compare = Client({"compare", "1", "2"});
  EXPECT_EQ(compare.exit_code, 0) << compare.out << compare.err;
  EXPECT_THAT(compare.out, HasSubstr("+10.0% [+10.0, +10.0]"));  // time, B slower
  EXPECT_THAT(compare.out, HasSubstr("+0.0% [+0.0, +0.0] ≈"));   // cycles, the same
  EXPECT_THAT(compare.out, HasSubstr("1980 -> 1800"));
  EXPECT_THAT(compare.out, HasSubstr("slower with the clock down 9%: throttling, not the kernel"));
  EXPECT_THAT(compare.out, Not(HasSubstr("REGRESSION")));
  EXPECT_THAT(compare.err, HasSubstr("run 2 against run 1: 2 compared, 0 significant slowdowns "
                                     "beyond 3%"));
  EXPECT_THAT(compare.err, HasSubstr("2 slower beyond 3% with the clocks down and the cycles "
                                     "within noise or fewer: not counted (--strict counts "
                                     "them)"));

  auto strict = Client({"compare", "1", "2", "--strict"});
  EXPECT_EQ(strict.exit_code, 1) << strict.out << strict.err;
  EXPECT_THAT(strict.out, HasSubstr("REGRESSION (--strict; the clock down 9%, cycles +0.0%)"));
  EXPECT_THAT(strict.err, HasSubstr("2 significant slowdowns beyond 3%"));

  auto json = Client({"compare", "1", "2", "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const v1::Comparison c = OnlyComparison(json.out);
  ASSERT_GT(c.schema_version(), 0) << json.out;
  ASSERT_EQ(c.rows_size(), 2);
  EXPECT_EQ(c.explained(), 2);
  const v1::ComparisonRow& row = c.rows(0);
  EXPECT_TRUE(row.explained());
  EXPECT_DOUBLE_EQ(row.conditions_a().sm_mhz(), 1980);
  EXPECT_DOUBLE_EQ(row.conditions_b().sm_mhz(), 1800);
  EXPECT_EQ(row.conditions_b().rounds(), 3);
  EXPECT_DOUBLE_EQ(row.conditions_b().low_clock_share(), 0);
  EXPECT_EQ(row.time_change().basis(), v1::CHANGE_BASIS_ROUNDS);
  // The two runs' windows hold different numbers of cycles (the slower clock fits fewer in 3 s),
  // so the fake's 0.1% wobble pools a little differently: within a few millionths.
  EXPECT_NEAR(row.time_change().estimate(), 0.10, 1e-4);
  EXPECT_NEAR(row.cycles_change().estimate(), 0, 1e-4);
}

// Two complete runs with nothing in common compared nothing: not a pass.
TEST_F(CompareE2E, RunsWithNothingInCommonAreNoPass) {
  StartDaemon();
  ASSERT_EQ(Client({"run", "--variant", "cublas_bf16", "--shape", "256"}).exit_code, 0);
  ASSERT_EQ(Client({"run", "--variant", "L1_R1_s3", "--shape", "256"}).exit_code, 0);
  auto compare = Client({"compare", "1", "2"});
  EXPECT_EQ(compare.exit_code, 65) << compare.out << compare.err;
  EXPECT_THAT(compare.err, HasSubstr("error: runs 1 and 2 have no successful measurement in "
                                     "common: nothing was compared"));
}

TEST_F(CompareE2E, LowClockSamplesAreShownAndExplainTheSlowdown) {
  // Windows of the 10 cycles min_samples asks for (30 over 3 rounds), nothing longer; without
  // solo spans, whose 3 s would hold the fake's low-clock samples to a few in thousands: the
  // windows' figures are compared.
  const std::vector<std::string> ten = {"--min-samples", "30", "--window-seconds", "0.000001",
                                        "--no-solo"};
  StartDaemon();
  ASSERT_EQ(RunItems("0", ten).exit_code, 0);
  // Half of each row's 10 samples at half the clock: the median sample 50% longer.
  StartDaemon({{"ABLATION_FAKE_LOW_CLOCK_SAMPLES", "5"}});
  ASSERT_EQ(RunItems("0", ten).exit_code, 0);
  auto compare = Client({"compare", "1", "2"});
  EXPECT_EQ(compare.exit_code, 0) << compare.out << compare.err;
  EXPECT_THAT(compare.out, HasSubstr("0% -> 50%"));  // low clock
  EXPECT_THAT(compare.out, HasSubstr("slower with the clock down 25%: throttling, not the kernel"));
}

TEST_F(CompareE2E, RunsFromDifferentDevicesAreRefusedUnlessAllowed) {
  StartDaemon({{"ABLATION_FAKE_DEVICES", "2"}});  // each GPU its own UUID
  ASSERT_EQ(RunItems("0").exit_code, 0);
  ASSERT_EQ(RunItems("1").exit_code, 0);

  auto refused = Client({"compare", "1", "2"});
  EXPECT_EQ(refused.exit_code, 65) << refused.out << refused.err;
  EXPECT_EQ(refused.out, "");
  EXPECT_THAT(refused.err,
              StartsWith("error: different devices: run 1 Fake GPU (test double) "
                         "GPU-00000000-0000-0000-0000-000000000000, run 2 Fake GPU (test double) "
                         "GPU-00000000-0000-0000-0000-000000000001\n"));
  EXPECT_THAT(refused.err, HasSubstr("--allow-different-device compares them anyway"));

  auto allowed = Client({"compare", "1", "2", "--allow-different-device"});
  EXPECT_EQ(allowed.exit_code, 0) << allowed.out << allowed.err;
  EXPECT_THAT(allowed.out, StartsWith("warning: different devices: run 1 Fake GPU"));
  EXPECT_THAT(allowed.out, HasSubstr("same (within noise)"));
  auto json = Client({"compare", "1", "2", "--allow-different-device", "--format", "json"});
  const v1::Comparison c = OnlyComparison(json.out);
  ASSERT_GT(c.schema_version(), 0) << json.out;
  ASSERT_EQ(c.warnings_size(), 1);
  EXPECT_EQ(c.device_b().uuid(), "GPU-00000000-0000-0000-0000-000000000001");
}

TEST_F(CompareE2E, APartialRunOnEitherSideExitsOneWithTheReason) {
  StartDaemon();
  ASSERT_EQ(RunItems().exit_code, 0);
  StartDaemon({{"ABLATION_FAKE_CRASH_ON", "cublas_bf16"}});  // its worker dies in every round
  ASSERT_EQ(RunItems().exit_code, 1);

  for (const auto& [a, b] : {std::pair("1", "2"), std::pair("2", "1")}) {
    auto compare = Client({"compare", a, b});
    EXPECT_EQ(compare.exit_code, 1) << compare.out << compare.err;
    EXPECT_THAT(compare.err, HasSubstr("error: run 2 is partial: 3 of 6 measurements failed; "
                                       "compare needs two complete runs"));
    // What both measured is still compared.
    EXPECT_THAT(compare.out, HasSubstr("same (within noise)"));
    EXPECT_THAT(compare.err, HasSubstr("1 compared, 0 significant slowdowns"));
  }
  auto json = Client({"compare", "1", "2", "--format", "json"});
  EXPECT_EQ(json.exit_code, 1);
  const v1::Comparison c = OnlyComparison(json.out);
  ASSERT_GT(c.schema_version(), 0) << json.out;
  EXPECT_EQ(c.state_b(), v1::RUN_STATE_PARTIAL);
  ASSERT_EQ(c.incomplete_size(), 1);
}

}  // namespace
}  // namespace ablation::testing
