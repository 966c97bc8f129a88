#include "server/core/queries/advise.h"

#include <gtest/gtest.h>

namespace ablation::core {
namespace {

constexpr int64_t kKB = 1024;

TEST(AdviseTest, ComputeToLoadRatioOfATile) {
  // 2*BM*BN*BK / ((BM*BK + BK*BN) * sizeof(T)); square tiles reduce to BM / sizeof(T).
  EXPECT_DOUBLE_EQ(ComputeLoadRatio(64, 64, 16, 2), 32.0);
  EXPECT_DOUBLE_EQ(ComputeLoadRatio(32, 32, 32, 2), 16.0);
  EXPECT_DOUBLE_EQ(ComputeLoadRatio(64, 64, 32, 1), 64.0);
  EXPECT_DOUBLE_EQ(ComputeLoadRatio(8, 8, 8, 4), 2.0);
  EXPECT_DOUBLE_EQ(ComputeLoadRatio(128, 64, 32, 2),
                   2.0 * 128 * 64 * 32 / ((128 * 32 + 32 * 64) * 2));
}

TEST(AdviseTest, RuleBoundaries) {
  EXPECT_EQ(RuleFor(4.999), PipelineRule::kCpAsync);
  EXPECT_EQ(RuleFor(5.0), PipelineRule::kMeasureBoth);
  EXPECT_EQ(RuleFor(20.0), PipelineRule::kMeasureBoth);
  EXPECT_EQ(RuleFor(20.001), PipelineRule::kMayNotPay);
  EXPECT_EQ(ToString(PipelineRule::kCpAsync), "cp.async");
  EXPECT_EQ(ToString(PipelineRule::kMeasureBoth), "measure both");
  EXPECT_EQ(ToString(PipelineRule::kMayNotPay), "pipelining may not pay");
}

TEST(AdviseTest, SmallTileExampleOnGa104) {
  // The textbook example: 2 KB + 2 KB single, 8 KB double, far under the 50 KB cliff of sm_86.
  Advice a;
  ASSERT_TRUE(Advise({32, 32, 32, "fp16", "sm_86"}, &a).ok());
  EXPECT_EQ(a.smem.a_bytes, 2 * kKB);
  EXPECT_EQ(a.smem.b_bytes, 2 * kKB);
  EXPECT_EQ(a.smem.single_bytes, 4 * kKB);
  EXPECT_EQ(a.smem.double_bytes, 8 * kKB);
  EXPECT_EQ(a.smem.cliff_bytes, 50 * kKB);
  EXPECT_TRUE(a.smem.double_fits);
  EXPECT_TRUE(a.smem.double_under_cliff);
  EXPECT_EQ(a.smem.blocks_double, 12);  // 100 / 8
  EXPECT_EQ(a.rule, PipelineRule::kMeasureBoth);
  EXPECT_DOUBLE_EQ(a.ratio, 16.0);
  EXPECT_NE(a.smem_verdict.find("stays under the 50 KB cliff"), std::string::npos)
      << a.smem_verdict;
}

TEST(AdviseTest, TwentyEightKbDoubledCrossesTheSharedMemoryCliff) {
  // 128x128x56 fp16: 14 KB + 14 KB = 28 KB single, 56 KB double > 50 KB on GA104.
  Advice a;
  ASSERT_TRUE(Advise({128, 128, 56, "fp16", "sm_86"}, &a).ok());
  EXPECT_EQ(a.smem.single_bytes, 28 * kKB);
  EXPECT_EQ(a.smem.double_bytes, 56 * kKB);
  EXPECT_TRUE(a.smem.double_fits);
  EXPECT_FALSE(a.smem.double_under_cliff);
  EXPECT_EQ(a.smem.blocks_single, 3);
  EXPECT_EQ(a.smem.blocks_double, 1);
  EXPECT_TRUE(a.smem.double_costs_blocks);
  EXPECT_NE(a.smem_verdict.find("crosses the 50 KB cliff"), std::string::npos) << a.smem_verdict;
  // The same tile fits twice on an A100 and an H100/H200.
  ASSERT_TRUE(Advise({128, 128, 56, "fp16", "sm_80"}, &a).ok());
  EXPECT_EQ(a.smem.cliff_bytes, 82 * kKB);
  EXPECT_TRUE(a.smem.double_under_cliff);
  EXPECT_EQ(a.smem.blocks_double, 2);  // 164 / 56
  ASSERT_TRUE(Advise({128, 128, 56, "fp16", "sm_90"}, &a).ok());
  EXPECT_EQ(a.smem.cliff_bytes, 114 * kKB);
  EXPECT_EQ(a.smem.blocks_double, 4);  // 228 / 56
}

TEST(AdviseTest, PerBlockLimitPerArch) {
  // 160 KB double: too big for sm_86 (99 KB per block), fits sm_80 (163) and sm_90 (227).
  Advice a;
  ASSERT_TRUE(Advise({256, 256, 40, "fp32", "sm_86"}, &a).ok());
  EXPECT_EQ(a.smem.double_bytes, 160 * kKB);
  EXPECT_FALSE(a.smem.double_fits);
  EXPECT_EQ(a.smem.blocks_double, 0);
  EXPECT_NE(a.smem_verdict.find("does not fit"), std::string::npos);
  ASSERT_TRUE(Advise({256, 256, 40, "fp32", "sm_80"}, &a).ok());
  EXPECT_EQ(a.smem.smem_per_block_max, 163 * kKB);
  EXPECT_TRUE(a.smem.double_fits);
  EXPECT_EQ(a.smem.blocks_double, 1);
  ASSERT_TRUE(Advise({256, 256, 40, "fp32", "sm_90"}, &a).ok());
  EXPECT_EQ(a.smem.smem_per_sm, 228 * kKB);
  EXPECT_EQ(a.smem.smem_per_block_max, 227 * kKB);
  EXPECT_TRUE(a.smem.double_fits);
}

TEST(AdviseTest, SmallTilesSayCpAsync) {
  Advice a;
  ASSERT_TRUE(Advise({8, 8, 32, "fp32", "sm_90"}, &a).ok());
  EXPECT_EQ(a.rule, PipelineRule::kCpAsync);
  EXPECT_EQ(a.element_bytes, 4);
  ASSERT_TRUE(Advise({128, 128, 32, "int8", "sm_90"}, &a).ok());
  EXPECT_EQ(a.rule, PipelineRule::kMayNotPay);
  EXPECT_DOUBLE_EQ(a.ratio, 128.0);
}

TEST(AdviseTest, BadInputNamesTheField) {
  Advice a;
  auto expect = [&](AdviseInput in, const std::string& field) {
    Status st = Advise(in, &a);
    EXPECT_EQ(st.code(), Code::kInvalidArgument);
    EXPECT_EQ(st.message().rfind(field + ":", 0), 0u) << st.message();
  };
  expect({0, 64, 16, "fp16", "sm_90"}, "bm");
  expect({64, -1, 16, "fp16", "sm_90"}, "bn");
  expect({64, 64, 0, "fp16", "sm_90"}, "bk");
  expect({64, 64, 1 << 20, "fp16", "sm_90"}, "bk");
  expect({64, 64, 16, "fp4", "sm_90"}, "dtype");
  expect({64, 64, 16, "fp16", "sm_75"}, "arch");
  expect({64, 64, 16, "fp16", ""}, "arch");
  Status st = Advise({64, 64, 16, "fp16", "sm_75"}, &a);
  EXPECT_NE(st.message().find("sm_80, sm_86"), std::string::npos) << st.message();
}

TEST(AdviseTest, PipeNames) {
  EXPECT_EQ(PipeTypeTag("fp16"), "f16");
  EXPECT_EQ(PipeTypeTag("int8"), "i8");
  EXPECT_EQ(PipeTypeTag("fp32"), "f32");
  EXPECT_FALSE(PipeTypeTag("bf16"));
  EXPECT_EQ(PipeVariantNames("f16", 64, 64, 16),
            (std::vector<std::string>{"pipe_baseline_f16_64x64x16", "pipe_ldg_f16_64x64x16",
                                      "pipe_cpasync_f16_64x64x16"}));
}

v1::Measurement Rec(int64_t id, const std::string& variant, int64_t size, double tflops, int64_t at,
                    v1::MeasurementStatus status = v1::MEASUREMENT_STATUS_OK) {
  v1::Measurement r;
  r.set_id(id);
  r.set_run_id(100 + id);
  r.set_variant(variant);
  r.set_dtype("fp16");
  r.mutable_shape()->set_m(size);
  r.mutable_shape()->set_n(size);
  r.mutable_shape()->set_k(size);
  r.set_tflops(tflops);
  r.set_status(status);
  r.set_created_at_ms(at);
  r.mutable_stats()->set_median_ms(1.0 / tflops);
  return r;
}

TEST(AdviseTest, MeasuredAnswerPrefers4096AndLatest) {
  const auto names = PipeVariantNames("f16", 64, 64, 16);
  std::vector<v1::Measurement> recs = {
      Rec(1, names[0], 4096, 10.0, 1000),
      Rec(2, names[1], 4096, 11.8, 1000),
      Rec(3, names[2], 4096, 12.0, 1000),
      Rec(4, names[2], 4096, 13.5, 2000),  // the latest cp.async wins over the older one
      Rec(5, names[1], 4096, 99.0, 3000, v1::MEASUREMENT_STATUS_FAILED),  // failed: ignored
      Rec(6, names[0], 2048, 50.0, 4000),  // another shape: not compared with 4096
      Rec(7, "pipe_cpasync_f16_128x128x32", 4096, 80.0, 4000),  // another tile: ignored
  };
  MeasuredAnswer a = SummarizeMeasured(names, recs);
  ASSERT_TRUE(a.measured);
  EXPECT_EQ(a.m, 4096);
  EXPECT_EQ(a.winner, names[2]);
  ASSERT_EQ(a.points.size(), 3u);
  EXPECT_EQ(a.points[0].measurement_id, 4);
  EXPECT_DOUBLE_EQ(a.winner_vs_baseline, 1.35);
  EXPECT_NEAR(a.winner_vs_runner_up, 13.5 / 11.8, 1e-12);
  EXPECT_TRUE(a.note.empty()) << a.note;
  EXPECT_NE(a.summary.find("pipe_cpasync_f16_64x64x16 won at 4096x4096x4096"), std::string::npos)
      << a.summary;
  EXPECT_NE(a.summary.find("1.35x the baseline"), std::string::npos) << a.summary;
}

TEST(AdviseTest, MeasuredAnswerElsewhereAndMissing) {
  const auto names = PipeVariantNames("i8", 64, 64, 32);
  MeasuredAnswer none = SummarizeMeasured(names, {});
  EXPECT_FALSE(none.measured);
  EXPECT_EQ(none.summary, "not measured on this GPU yet");

  std::vector<v1::Measurement> recs = {
      Rec(1, names[0], 1024, 10.0, 1000),
      Rec(2, names[1], 1024, 9.0, 1000),
      Rec(3, names[0], 2048, 10.0, 5000),
  };
  MeasuredAnswer a = SummarizeMeasured(names, recs);
  ASSERT_TRUE(a.measured);
  EXPECT_EQ(a.m, 1024);  // two variants there, one at 2048
  EXPECT_EQ(a.winner, names[0]);
  EXPECT_NE(a.summary.find("pipelining did not pay"), std::string::npos) << a.summary;
  EXPECT_NE(a.note.find("not measured at 1024x1024x1024: pipe_cpasync_i8_64x64x32"),
            std::string::npos)
      << a.note;
  EXPECT_NE(a.note.find("no measurement at 4096x4096x4096"), std::string::npos) << a.note;
}

// 128x128x32 fp16 on sm_90 is 64:1, where the rule of thumb says pipelining may not pay (0-5%);
// an H200 measured cp.async +38%. The measurement leads and the rule is contradicted.
TEST(AdviseTest, AMeasuredGainBeyondTheRuleContradictsIt) {
  Advice advice;
  ASSERT_TRUE(Advise({128, 128, 32, "fp16", "sm_90"}, &advice).ok());
  ASSERT_EQ(advice.rule, PipelineRule::kMayNotPay);
  const auto names = PipeVariantNames("f16", 128, 128, 32);
  const MeasuredAnswer measured = SummarizeMeasured(
      names, {Rec(1, names[0], 4096, 100.0, 1000), Rec(2, names[1], 4096, 120.0, 1000),
              Rec(3, names[2], 4096, 138.0, 1000)});
  const RuleVerdict v = CheckRule(advice.rule, measured, names);
  EXPECT_EQ(v.check, RuleCheck::kContradicted);
  EXPECT_NEAR(v.gain, 0.38, 1e-12);
  EXPECT_EQ(v.best, "pipe_cpasync_f16_128x128x32");
  EXPECT_EQ(v.lead.rfind("measured on this GPU: pipe_cpasync_f16_128x128x32 +38.0% over "
                         "pipe_baseline_f16_128x128x32 at 4096x4096x4096",
                         0),
            0u)
      << v.lead;
  EXPECT_NE(v.lead.find("pipelining pays here"), std::string::npos) << v.lead;
  EXPECT_EQ(v.verdict,
            "contradicted by this GPU's measurement: the rule expects at most +5%, this GPU "
            "measured +38.0%");
}

TEST(AdviseTest, AMeasurementWithinTheRuleAgreesAndDoesNotLead) {
  const auto names = PipeVariantNames("f16", 128, 128, 32);
  const MeasuredAnswer measured = SummarizeMeasured(
      names, {Rec(1, names[0], 4096, 100.0, 1000), Rec(3, names[2], 4096, 103.0, 1000)});
  const RuleVerdict v = CheckRule(PipelineRule::kMayNotPay, measured, names);
  EXPECT_EQ(v.check, RuleCheck::kAgrees);
  EXPECT_TRUE(v.lead.empty());
  EXPECT_NE(v.verdict.find("agrees: pipe_cpasync_f16_128x128x32 +3.0%"), std::string::npos)
      << v.verdict;
  // A paying rule is not contradicted by more gain than it expects, only by less ...
  EXPECT_EQ(CheckRule(PipelineRule::kMeasureBoth, measured, names).check, RuleCheck::kContradicted);
  const MeasuredAnswer big = SummarizeMeasured(
      names, {Rec(1, names[0], 4096, 100.0, 1000), Rec(3, names[2], 4096, 160.0, 1000)});
  EXPECT_EQ(CheckRule(PipelineRule::kCpAsync, big, names).check, RuleCheck::kAgrees);
  // ... or, for the cp.async rule, by another pipelining winning.
  const MeasuredAnswer ldg = SummarizeMeasured(
      names, {Rec(1, names[0], 4096, 100.0, 1000), Rec(2, names[1], 4096, 130.0, 1000),
              Rec(3, names[2], 4096, 120.0, 1000)});
  const RuleVerdict by_ldg = CheckRule(PipelineRule::kCpAsync, ldg, names);
  EXPECT_EQ(by_ldg.check, RuleCheck::kContradicted);
  EXPECT_NE(by_ldg.verdict.find("with pipe_ldg_f16_128x128x32 the fastest"), std::string::npos)
      << by_ldg.verdict;
}

TEST(AdviseTest, NoBaselineOrNoPipeliningIsNoVerdict) {
  const auto names = PipeVariantNames("f16", 128, 128, 32);
  EXPECT_EQ(CheckRule(PipelineRule::kMayNotPay, SummarizeMeasured(names, {}), names).check,
            RuleCheck::kUnmeasured);
  const MeasuredAnswer only_cpasync =
      SummarizeMeasured(names, {Rec(3, names[2], 4096, 138.0, 1000)});
  const RuleVerdict v = CheckRule(PipelineRule::kMayNotPay, only_cpasync, names);
  EXPECT_EQ(v.check, RuleCheck::kUnmeasured);
  EXPECT_EQ(v.expected, "at most +5%");
  EXPECT_TRUE(v.lead.empty());
  EXPECT_EQ(ToString(RuleCheck::kContradicted), "contradicted");
}

}  // namespace
}  // namespace ablation::core
