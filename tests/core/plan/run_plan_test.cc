#include "server/core/plan/run_plan.h"

#include <gtest/gtest.h>

namespace ablation::core {
namespace {

class RunPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kernels::RegisterCatalog(registry_);
    device_.known = true;
    device_.memory_bytes = int64_t(12) << 30;  // 40960^3 bf16 needs about 13 GB
    device_.l2_bytes = int64_t(50) << 20;
  }
  v1::RunRequest Request(std::vector<std::string> variants, int64_t m, int64_t n, int64_t k) {
    v1::RunRequest r;
    for (auto& v : variants) r.add_variants(v);
    auto* s = r.add_shapes();
    s->set_m(m);
    s->set_n(n);
    s->set_k(k);
    return r;
  }
  Status Plan(const v1::RunRequest& r, RunPlan* plan) {
    return PlanRun(r, registry_, device_, TimingDefaults{}, plan);
  }
  kernels::Registry registry_;
  DeviceLimits device_;
};

TEST_F(RunPlanTest, ResolvesVariantsAndAppliesTimingDefaults) {
  RunPlan plan;
  auto r = Request({"L1_R1_s3", "cublas_bf16", "L1_R1_s3"}, 4096, 4096, 4096);
  r.add_shapes()->CopyFrom(r.shapes(0));  // a repeated shape runs once
  ASSERT_TRUE(Plan(r, &plan).ok());
  ASSERT_EQ(plan.variants.size(), 2u);
  EXPECT_EQ(plan.items.size(), 2u);
  EXPECT_EQ(plan.timing.min_samples(), 10);
  EXPECT_DOUBLE_EQ(plan.timing.min_seconds(), 0.5);
  EXPECT_DOUBLE_EQ(plan.timing.max_seconds(), 10);
  EXPECT_DOUBLE_EQ(plan.timing.target_noise(), 0.005);
  EXPECT_EQ(ClockPolicyText(plan.clocks), "observe");
  EXPECT_FALSE(plan.clocks.lock);
  EXPECT_EQ(plan.dtype, kernels::DType::kBF16);
}

TEST_F(RunPlanTest, GlobsKeepOnlyVariantsWithTheDtype) {
  RunPlan plan;
  auto r = Request({"cublas_*"}, 256, 256, 256);
  r.set_dtype("fp16");
  ASSERT_TRUE(Plan(r, &plan).ok());
  ASSERT_EQ(plan.variants.size(), 2u);
  EXPECT_EQ(plan.variants[0]->name, "cublas_fp16");
  EXPECT_EQ(plan.variants[1]->name, "cublas_fp16_best");
}

TEST_F(RunPlanTest, RefusesBadInputNamingTheField) {
  struct Case {
    v1::RunRequest r;
    std::string expect;
  };
  std::vector<Case> cases;
  cases.push_back({v1::RunRequest(), "variants: at least one variant"});
  cases.push_back({Request({"L1_R1_s3"}, 0, 0, 0), "shapes[0]: M, N and K must be positive"});
  {
    auto r = Request({"L1_R1_s3"}, 256, 256, 256);
    r.clear_shapes();
    cases.push_back({r, "shapes: at least one shape"});
  }
  cases.push_back({Request({"L1_R1_s3"}, 130, 256, 256), "cannot run 130x256x256"});
  cases.push_back({Request({"L1_R1_s3"}, 256, 256, 48), "cannot run 256x256x48"});
  cases.push_back({Request({"L1_R1_s3"}, 65536, 65536, 1024), "2^31-1"});
  cases.push_back({Request({"L1_R1_s3"}, 40960, 40960, 40960), "MiB of device memory"});
  {
    auto r = Request({"L1_R1_s3"}, 256, 256, 256);
    r.set_dtype("int8");
    cases.push_back({r, "variants[0]: variant abl_L1_R1_bl0_s3_sw1 has no int8 kernel"});
  }
  {
    auto r = Request({"L1_R1_s3"}, 256, 256, 256);
    r.mutable_timing()->set_min_samples(50);
    r.mutable_timing()->set_max_samples(10);
    cases.push_back({r, "timing.min_samples"});
  }
  {
    auto r = Request({"L1_R1_s3"}, 256, 256, 256);
    r.mutable_timing()->set_min_seconds(5);
    r.mutable_timing()->set_max_seconds(1);
    cases.push_back({r, "timing.max_seconds"});
  }
  {
    auto r = Request({"L1_R1_s3"}, 256, 256, 256);
    r.add_tags("");
    cases.push_back({r, "tags[0]"});
  }
  {
    auto r = Request({"L1_R1_s3"}, 256, 256, 256);
    r.set_device(-1);
    cases.push_back({r, "device"});
  }
  for (const auto& c : cases) {
    RunPlan plan;
    Status st = Plan(c.r, &plan);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << c.expect;
    EXPECT_NE(st.message().find(c.expect), std::string::npos)
        << "wanted '" << c.expect << "' in '" << st.message() << "'";
  }
}

// The sm90 family copies operands whose rows are not whole 16-byte chunks into padded buffers the
// worker keeps: a shape that fits the device without them is refused when they do not, and the
// same shape on the tile's grid (K and N multiples of 8) or for cuBLAS fits.
TEST_F(RunPlanTest, TheMemoryCheckCountsTheSm90PaddedCopies) {
  device_.compute_capability = "9.0";
  RunPlan plan;
  // 36001^3 bf16: A, B (both layouts) and C about 10.4 GB of 12 GiB; padded copies of A, B and C
  // another 7.8 GB.
  Status st = Plan(Request({"sm90_h10_epilogue_overlap"}, 36001, 36001, 36001), &plan);
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st.message();
  EXPECT_NE(st.message().find("MiB of device memory"), std::string::npos) << st.message();
  RunPlan aligned, library;
  EXPECT_TRUE(Plan(Request({"sm90_h10_epilogue_overlap"}, 36001, 36000, 36000), &aligned).ok());
  EXPECT_TRUE(Plan(Request({"cublas_bf16"}, 36001, 36001, 36001), &library).ok());
  const kernels::Variant* h10 = registry_.Find("sm90_h10_epilogue_overlap");
  ASSERT_NE(h10, nullptr);
  ASSERT_TRUE(h10->scratch_bytes);
  kernels::Problem p{.m = 1000, .n = 2001, .k = 3001};
  // A 1000 x 3008, B 2008 x 3008, C 1000 x 2008, all bf16.
  EXPECT_EQ(h10->scratch_bytes(p),
            (std::vector<int64_t>{1000 * 3008 * 2, 2008 * 3008 * 2, 1000 * 2008 * 2}));
  p.n = 2000, p.k = 3000;  // rows of whole 16-byte chunks: nothing copied
  EXPECT_EQ(h10->scratch_bytes(p), (std::vector<int64_t>{0, 0, 0}));
  p.n = 2001;  // only C's rows are not
  EXPECT_EQ(h10->scratch_bytes(p), (std::vector<int64_t>{0, 0, 1000 * 2008 * 2}));
}

TEST_F(RunPlanTest, MemoryCheckIsSkippedWhenTheDeviceIsUnknown) {
  device_.known = false;
  RunPlan plan;
  EXPECT_TRUE(Plan(Request({"L1_R1_s3"}, 40960, 40960, 40960), &plan).ok());
}

TEST_F(RunPlanTest, VerifyAgainstResolvesReferences) {
  v1::VerifyRequest r;
  r.add_variants("abl_L1_*_s2_sw1");
  auto* s = r.add_shapes();
  s->set_m(512);
  s->set_n(512);
  s->set_k(512);
  r.set_reference(v1::REFERENCE_VARIANT);
  r.set_reference_variant("L0_R1_s1");
  RunPlan plan;
  ASSERT_TRUE(PlanVerify(r, registry_, device_, &plan).ok());
  EXPECT_EQ(plan.reference, v1::REFERENCE_VARIANT);
  EXPECT_EQ(plan.reference_variant, "abl_L0_R1_bl0_s1_sw1");
  r.set_reference_variant("");
  Status missing = PlanVerify(r, registry_, device_, &plan);
  EXPECT_EQ(missing.message(), "reference_variant: name the variant to check against");
  r.set_reference(v1::REFERENCE_CPU);
  s->set_m(4096);
  s->set_n(4096);
  s->set_k(4096);
  RunPlan plan2;
  Status st = PlanVerify(r, registry_, device_, &plan2);
  EXPECT_NE(st.message().find("use cublas"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace ablation::core

namespace ablation::core {
namespace {

TEST(RunPlanTimingTest, L2AndLowClockOptions) {
  kernels::Registry registry;
  kernels::RegisterCatalog(registry);
  v1::RunRequest r;
  r.add_variants("cublas_bf16");
  auto* s = r.add_shapes();
  s->set_m(256);
  s->set_n(256);
  s->set_k(256);
  RunPlan plan;
  ASSERT_TRUE(PlanRun(r, registry, DeviceLimits{}, TimingDefaults{}, &plan).ok());
  EXPECT_DOUBLE_EQ(plan.timing.low_clock_fraction(), 0.75);
  EXPECT_FALSE(plan.timing.flush_l2());
  r.mutable_timing()->set_hot_l2(true);
  r.mutable_timing()->set_flush_l2(true);
  RunPlan both;
  EXPECT_EQ(PlanRun(r, registry, DeviceLimits{}, TimingDefaults{}, &both).message(),
            "timing.flush_l2: a flushed L2 is cold; it cannot go with hot_l2");
  r.mutable_timing()->set_hot_l2(false);
  r.mutable_timing()->set_low_clock_fraction(1.5);
  RunPlan bad;
  EXPECT_EQ(PlanRun(r, registry, DeviceLimits{}, TimingDefaults{}, &bad).message(),
            "timing.low_clock_fraction: 1.5 is not in [0, 0.999] (0: the daemon's default)");
}

}  // namespace
}  // namespace ablation::core

namespace ablation::core {
namespace {

TEST_F(RunPlanTest, Sm90FamilyRunsOnComputeCapability90Only) {
  kernels::Registry registry;
  kernels::RegisterCatalog(registry);
  const kernels::Variant* h7 = registry.Find("sm90_h7_l2order");
  ASSERT_NE(h7, nullptr);
  DeviceLimits hopper = device_;
  hopper.compute_capability = "9.0";
  DeviceLimits ampere = device_;
  ampere.compute_capability = "8.0";
  EXPECT_EQ(ArchRefusal(*h7, hopper), "");
  EXPECT_EQ(ArchRefusal(*h7, ampere),
            "sm90_h7_l2order runs on compute capability 9.0 only (built for sm_90a); this GPU is "
            "8.0");
  EXPECT_EQ(ArchRefusal(*registry.Find("cublas_bf16"), ampere), "");
  EXPECT_EQ(ArchRefusal(*h7, DeviceLimits{}), "") << "an unknown device is not refused here";

  auto r = Request({"sm90_h7_l2order", "cublas_bf16"}, 4096, 4096, 4096);
  RunPlan plan;
  ASSERT_TRUE(PlanRun(r, registry, hopper, TimingDefaults{}, &plan).ok());
  RunPlan refused;
  const Status st = PlanRun(r, registry, ampere, TimingDefaults{}, &refused);
  EXPECT_EQ(st.code(), Code::kFailedPrecondition);
  EXPECT_NE(st.message().find("variants: sm90_h7_l2order runs on compute capability 9.0"),
            std::string::npos)
      << st.message();
}

}  // namespace
}  // namespace ablation::core

namespace ablation::core {
namespace {

TEST_F(RunPlanTest, TheRegimeIsTheRequestsOverTheDefaultAndALockIsTheLockedRegime) {
  RunPlan plan;
  auto r = Request({"L1_R1_s3", "cublas_bf16"}, 4096, 4096, 4096);
  ASSERT_TRUE(Plan(r, &plan).ok());
  EXPECT_EQ(plan.regime, Regime::kSustained) << "the default";
  EXPECT_TRUE(plan.paired);
  EXPECT_FALSE(plan.clocks.lock);
  EXPECT_DOUBLE_EQ(plan.timing.window_seconds(), 3.0) << "the default, stored with the request";
  EXPECT_DOUBLE_EQ(plan.timing.burst_seconds(), 0.02);

  RunPlan burst;
  r.set_regime(v1::REGIME_BURST);
  r.mutable_timing()->set_burst_seconds(0.01);
  r.set_unpaired(true);
  ASSERT_TRUE(Plan(r, &burst).ok());
  EXPECT_EQ(burst.regime, Regime::kBurst);
  EXPECT_DOUBLE_EQ(burst.regime_params.burst_seconds, 0.01);
  EXPECT_FALSE(burst.paired);

  // locked without clock values locks the SM clock at base, as nvbench does.
  RunPlan locked;
  r.set_regime(v1::REGIME_LOCKED);
  ASSERT_TRUE(Plan(r, &locked).ok());
  EXPECT_EQ(locked.regime, Regime::kLocked);
  EXPECT_TRUE(locked.clocks.lock);
  EXPECT_EQ(locked.clocks.sm_spec, "base");

  // A clock lock with the default regime is the locked regime.
  RunPlan lock;
  r.set_regime(v1::REGIME_UNSPECIFIED);
  r.mutable_clocks()->set_mode(v1::CLOCK_MODE_LOCK);
  r.mutable_clocks()->set_sm_mhz("max");
  ASSERT_TRUE(Plan(r, &lock).ok());
  EXPECT_EQ(lock.regime, Regime::kLocked);
  EXPECT_EQ(lock.clocks.sm_spec, "max");

  // A lock with a regime that measures free clocks is refused, naming both.
  RunPlan refused;
  r.set_regime(v1::REGIME_BURST);
  const Status st = Plan(r, &refused);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_EQ(st.message(),
            "regime: burst measures the clocks as the GPU sets them; a clock lock (clocks.mode "
            "lock) is the locked regime");
  r.set_regime(v1::Regime(7));
  EXPECT_EQ(Plan(r, &refused).message(), "regime: 7 is not sustained, burst or locked");
}

TEST_F(RunPlanTest, TheRegimesKnobsAreCheckedLikeEveryTimingOption) {
  RunPlan plan;
  auto r = Request({"cublas_bf16"}, 256, 256, 256);
  r.mutable_timing()->set_window_seconds(601);
  EXPECT_EQ(Plan(r, &plan).message(),
            "timing.window_seconds: 601 is not in [0, 600] (0: the daemon's default)");
  r.mutable_timing()->set_window_seconds(0);
  r.mutable_timing()->set_burst_seconds(-1);
  EXPECT_EQ(Plan(r, &plan).message(),
            "timing.burst_seconds: -1 is not in [0, 10] (0: the daemon's default)");
}

TEST_F(RunPlanTest, WindowsInterleaveTheItemsOfOneProblemOrEachAloneUnpaired) {
  RunPlan plan;
  auto r = Request({"L1_R1_s3", "L1_R1_s4", "cublas_bf16"}, 4096, 4096, 4096);
  auto* s = r.add_shapes();
  s->set_m(512);
  s->set_n(512);
  s->set_k(256);
  ASSERT_TRUE(Plan(r, &plan).ok());
  // Items are shape-major: 0-2 at 4096^3, 3-5 at 512x512x256.
  EXPECT_EQ(WindowGroups(plan), (std::vector<std::vector<int>>{{0, 1, 2}, {3, 4, 5}}));
  plan.paired = false;
  EXPECT_EQ(WindowGroups(plan), (std::vector<std::vector<int>>{{0}, {1}, {2}, {3}, {4}, {5}}));
}

}  // namespace
}  // namespace ablation::core
