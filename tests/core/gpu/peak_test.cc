// Clock-normalised throughput (peak.h): per GHz of the measured clock, and the share of the
// dense peak of the dtype on the architecture at that clock.
#include "server/core/gpu/peak.h"

#include <gtest/gtest.h>

namespace ablation::core {
namespace {

using kernels::DType;

TEST(Peak, TheTableReproducesTheDatasheets) {
  // A100 SXM: 108 SMs at 1410 MHz.
  auto a100 = [](DType d) { return *DenseOpsPerClockPerSm("8.0", d) * 108 * 1410e6 / 1e12; };
  EXPECT_NEAR(a100(DType::kBF16), 312, 0.5);
  EXPECT_NEAR(a100(DType::kFP16), 312, 0.5);
  EXPECT_NEAR(a100(DType::kTF32), 156, 0.5);
  EXPECT_NEAR(a100(DType::kINT8), 624, 0.5);
  EXPECT_NEAR(a100(DType::kFP32), 19.5, 0.05);
  // H100/H200 SXM: 132 SMs, the tensor figures at 1830 MHz, FP32 at 1980 MHz.
  auto h100 = [](DType d, double mhz) {
    return *DenseOpsPerClockPerSm("9.0", d) * 132 * mhz * 1e6 / 1e12;
  };
  EXPECT_NEAR(h100(DType::kBF16, 1830), 989.4, 0.5);
  EXPECT_NEAR(h100(DType::kTF32, 1830), 494.7, 0.5);
  EXPECT_NEAR(h100(DType::kINT8, 1830), 1978.9, 0.5);
  EXPECT_NEAR(h100(DType::kFP8, 1830), 1978.9, 0.5);  // dense fp8 (e4m3) tensor cores
  EXPECT_FALSE(DenseOpsPerClockPerSm("8.0", DType::kFP8)) << "Ampere has no fp8 tensor cores";
  EXPECT_NEAR(h100(DType::kFP32, 1980), 66.9, 0.05);
  EXPECT_FALSE(DenseOpsPerClockPerSm("8.6", DType::kBF16)) << "not guessed";
  EXPECT_FALSE(DenseOpsPerClockPerSm("", DType::kBF16));
}

TEST(Peak, NormalisedByTheMeasuredClock) {
  // cuBLAS bf16 4096^3 on an H200 at the cap: 731 TFLOPS at an effective 1494 MHz.
  const NormalisedThroughput n = Normalise(731, 1494, 132, "9.0", DType::kBF16);
  ASSERT_TRUE(n.tflops_per_ghz && n.peak_tflops && n.peak_share);
  EXPECT_NEAR(*n.tflops_per_ghz, 731 / 1.494, 1e-9);
  EXPECT_NEAR(*n.peak_tflops, 4096.0 * 132 * 1494e6 / 1e12, 1e-9);
  EXPECT_NEAR(*n.peak_share, 0.905, 0.001);
}

TEST(Peak, AKernelThatOnlyChangesTheClockKeepsItsFigurePerGhzAndItsShare) {
  // The same work (cycles) at 1980 and at 1485 MHz: 25% fewer TFLOPS, the same per GHz.
  const double cycles_tflops_at_1ghz = 400;
  const NormalisedThroughput fast =
      Normalise(cycles_tflops_at_1ghz * 1.98, 1980, 132, "9.0", DType::kBF16);
  const NormalisedThroughput slow =
      Normalise(cycles_tflops_at_1ghz * 1.485, 1485, 132, "9.0", DType::kBF16);
  EXPECT_NEAR(*fast.tflops_per_ghz, *slow.tflops_per_ghz, 1e-9);
  EXPECT_NEAR(*fast.peak_share, *slow.peak_share, 1e-12);
}

TEST(Peak, UnknownClockOrArchitectureLeavesWhatCannotBeKnownUnset) {
  EXPECT_FALSE(Normalise(500, 0, 132, "9.0", DType::kBF16).tflops_per_ghz);
  const NormalisedThroughput n = Normalise(50, 1700, 84, "8.6", DType::kFP16);
  EXPECT_TRUE(n.tflops_per_ghz);
  EXPECT_FALSE(n.peak_tflops);
  EXPECT_FALSE(n.peak_share);
  EXPECT_FALSE(Normalise(0, 1500, 132, "9.0", DType::kBF16).tflops_per_ghz)
      << "a micro-benchmark does no arithmetic";
}

TEST(Peak, AFigureAboveTheClockAdjustedPeakIsRefusedAndOneBelowIsNot) {
  // H200 bf16 at 1500 MHz: 4096 x 132 x 1.5e9 = 811.0 TFLOPS.
  const NormalisedThroughput cublas = Normalise(730, 1500, 132, "9.0", DType::kBF16);
  EXPECT_EQ(RefuseAbovePeak(730, 1500, cublas), "");
  const NormalisedThroughput edge = Normalise(811.0 * 1.015, 1500, 132, "9.0", DType::kBF16);
  EXPECT_EQ(RefuseAbovePeak(811.0 * 1.015, 1500, edge), "") << "within the tolerance";
  // A kernel that skipped its work: 2000 TFLOPS.
  const NormalisedThroughput cheat = Normalise(2000, 1500, 132, "9.0", DType::kBF16);
  const std::string why = RefuseAbovePeak(2000, 1500, cheat);
  EXPECT_NE(why.find("refused: 2000.0 TFLOPS is 247% of the dense peak"), std::string::npos) << why;
  EXPECT_NE(why.find("811.0 TFLOPS at 1500 MHz"), std::string::npos) << why;
  // No clock, no peak: nothing to compare with, nothing refused.
  EXPECT_EQ(RefuseAbovePeak(2000, 0, Normalise(2000, 0, 132, "9.0", DType::kBF16)), "");
}

}  // namespace
}  // namespace ablation::core
