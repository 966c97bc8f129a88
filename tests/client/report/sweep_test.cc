// The pure parts of `sweep` and `presets`: the progress line, and the preset tables.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "client/commands/cmd_presets.h"
#include "client/commands/cmd_sweep.h"
#include "client/output/format.h"
#include "client/output/render_presets.h"
#include "client/output/table.h"

namespace ablation::client {
namespace {

using ::testing::HasSubstr;

TEST(Sweep, ProgressLineHasDoneTotalCurrentAndEta) {
  EXPECT_EQ(SweepProgressLine(0, 40, "abl_L1_R1_bl0_s3_sw1 bf16 4096x4096x4096", 2),
            "[0/40] abl_L1_R1_bl0_s3_sw1 bf16 4096x4096x4096 | 2s elapsed, ETA -");
  // 10 done in 65 s: 6.5 s each, 30 to go.
  EXPECT_EQ(SweepProgressLine(10, 40, "cublas_bf16 bf16 512x512x256", 65),
            "[10/40] cublas_bf16 bf16 512x512x256 | 1m05s elapsed, ETA 3m15s");
  EXPECT_EQ(SweepProgressLine(40, 40, "", 4000), "[40/40] | 1h06m elapsed, ETA 0s");
  EXPECT_EQ(FormatDuration(59.4), "59s");
  EXPECT_EQ(FormatDuration(-1), "0s");
}

TEST(Sweep, RequestNamesThePresetAndKeepsItsShapes) {
  SweepOptions options;
  options.preset = "ladder-b";
  options.tags = {"nightly"};
  v1::RunRequest request = BuildSweepRequest(options);
  EXPECT_EQ(request.preset(), "ladder-b");
  EXPECT_EQ(request.variants_size(), 0);
  EXPECT_EQ(request.shapes_size(), 0);  // the preset's own
  EXPECT_EQ(request.dtype(), "");
  EXPECT_EQ(request.tags(0), "nightly");
  EXPECT_FALSE(request.allow_missing());
  options.shapes = {"1024"};
  options.allow_missing = true;
  request = BuildSweepRequest(options);
  EXPECT_EQ(request.shapes_size(), 1);
  EXPECT_TRUE(request.allow_missing());
}

TEST(Sweep, TakesEveryMeasureOptionRunTakes) {
  SweepOptions options;
  options.preset = "ladder-b";
  options.measure.rounds = 5;
  options.measure.order_seed = 77;
  options.measure.flush_l2 = true;
  options.measure.target_noise = 0.01;
  options.measure.lock_sm_clock = "max";
  options.measure.device = 1;
  v1::RunRequest request = BuildSweepRequest(options);
  EXPECT_EQ(request.rounds(), 5);
  EXPECT_EQ(request.order_seed(), 77u);
  EXPECT_TRUE(request.timing().flush_l2());
  EXPECT_DOUBLE_EQ(request.timing().target_noise(), 0.01);
  EXPECT_EQ(request.clocks().mode(), v1::CLOCK_MODE_LOCK);
  EXPECT_EQ(request.clocks().sm_mhz(), "max");
  EXPECT_EQ(request.device(), 1);
  EXPECT_EQ(request.preset(), "ladder-b");
  EXPECT_EQ(request.shapes_size(), 0);  // the preset's own
}

TEST(Presets, TablesSayWhatIsMissing) {
  v1::Preset p;
  p.set_name("pipelining");
  p.set_description("d");
  p.set_planned(2);
  v1::PresetGroup* g = p.add_groups();
  g->set_dtype("fp16");
  g->add_variants("pipe_ldg_f16_*");
  g->add_variants("cublas_fp16");
  g->add_missing("pipe_ldg_f16_*");
  g->add_resolved("cublas_fp16");
  g->add_shapes()->set_m(4096);
  EXPECT_EQ(MissingEntries(p), std::vector<std::string>{"pipe_ldg_f16_* (fp16)"});
  const std::string entries = RenderText(PresetEntriesTable(p));
  EXPECT_THAT(entries, HasSubstr("pipe_ldg_f16_*  MISSING"));
  EXPECT_THAT(RenderCsv(PresetsTable({p})), HasSubstr("pipelining,fp16,1,1,2,1,d"));
}

}  // namespace
}  // namespace ablation::client
