#include "server/worker/identity.h"

#include <gtest/gtest.h>

namespace ablation::worker {
namespace {

TEST(Identity, UuidLikeNvidiaSmi) {
  unsigned char b[16];
  for (int i = 0; i < 16; ++i) b[i] = static_cast<unsigned char>(i == 0 ? 0xab : i);
  EXPECT_EQ(FormatGpuUuid(b), "GPU-ab010203-0405-0607-0809-0a0b0c0d0e0f");
}

TEST(Identity, CudaVersions) {
  EXPECT_EQ(FormatCudaVersion(13000), "13.0");
  EXPECT_EQ(FormatCudaVersion(12080), "12.8");
  EXPECT_EQ(FormatCudaVersion(12020), "12.2");
  EXPECT_EQ(FormatLibraryVersion(13, 1, 0), "13.1.0");
}

}  // namespace
}  // namespace ablation::worker
