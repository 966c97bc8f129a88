// A window's samples as its batches come back (server/worker/window_samples.h): cycles complete
// in order, a cycle with a sample of a late batch is dropped whole, and each member's samples
// are read back one a kept cycle wherever the cycle's order put it.
#include "server/worker/window_samples.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace ablation::worker {
namespace {

TEST(WindowSamples, CyclesCompleteInOrderAndOnlyWhole) {
  WindowSamples w(2);
  // Cycle 1 arrives before cycle 0 is whole: nothing is complete until sample 0 comes.
  w.Add(2, 0, 2.0, 1900, false);
  w.Add(3, 1, 3.0, 1900, false);
  w.Add(1, 1, 1.0, 1900, false);
  EXPECT_EQ(w.kept_cycles(), 0);
  w.Add(0, 0, 0.5, 1900, false);
  EXPECT_EQ(w.kept_cycles(), 2);
  EXPECT_EQ(w.dropped_cycles(), 0);
}

TEST(WindowSamples, ACycleWithALateSampleIsDroppedForEveryMember) {
  WindowSamples w(2);
  for (int g = 0; g < 6; ++g) w.Add(g, g % 2, 1.0 + g, 1800 + g, /*dropped=*/g == 3);
  EXPECT_EQ(w.kept_cycles(), 2);
  EXPECT_EQ(w.dropped_cycles(), 1);
  std::vector<double> ms0, mhz0, ms1, mhz1;
  w.Member(0, &ms0, &mhz0);
  w.Member(1, &ms1, &mhz1);
  EXPECT_EQ(ms0, (std::vector<double>{1.0, 5.0}));  // cycle 1 (samples 2, 3) dropped whole
  EXPECT_EQ(ms1, (std::vector<double>{2.0, 6.0}));
  EXPECT_EQ(mhz0, (std::vector<double>{1800, 1804}));
  EXPECT_EQ(mhz1, (std::vector<double>{1801, 1805}));
}

TEST(WindowSamples, EachCycleOrderIsItsOwn) {
  WindowSamples w(3);
  // Cycle 0 runs members 2, 0, 1; cycle 1 runs 1, 2, 0.
  const int order[6] = {2, 0, 1, 1, 2, 0};
  for (int g = 0; g < 6; ++g) w.Add(g, order[g], 10.0 * order[g] + g, NAN, false);
  for (int m = 0; m < 3; ++m) {
    std::vector<double> ms, mhz;
    w.Member(m, &ms, &mhz);
    ASSERT_EQ(ms.size(), 2u) << m;
    EXPECT_EQ(int(ms[0]) / 10, m);
    EXPECT_EQ(int(ms[1]) / 10, m);
    EXPECT_LT(ms[0], ms[1]) << "cycle order kept for member " << m;
    EXPECT_TRUE(std::isnan(mhz[0]));
  }
}

TEST(WindowSamples, AnIncompleteLastCycleIsNotKept) {
  WindowSamples w(2);
  w.Add(0, 0, 1.0, 1900, false);
  w.Add(1, 1, 1.0, 1900, false);
  w.Add(2, 0, 1.0, 1900, false);
  EXPECT_EQ(w.kept_cycles(), 1);
  std::vector<double> ms, mhz;
  w.Member(0, &ms, &mhz);
  EXPECT_EQ(ms.size(), 1u);
}

}  // namespace
}  // namespace ablation::worker
