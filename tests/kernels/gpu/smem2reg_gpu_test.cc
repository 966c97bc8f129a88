// GPU tests of the smem2reg micro-benchmarks (ctest label gpu): every variant's per-thread
// checksum equals a host model of the fragments the GEMM's lanes hold, so the loads really run,
// read the intended bytes, and all eight variants agree. Skips with the reason without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/smem2reg/smem2reg_catalog.h"
#include "kernels/testing/gpu_util.h"

namespace ablation::kernels {
namespace {

using testing::CheckedLaunch;
using testing::GemmBuffers;
using testing::NoDeviceReason;

constexpr int kThreads = 256;

uint32_t Rotl1(uint32_t x) { return (x << 1) | (x >> 31); }

/// The checksums the kernel should write, from A (M x K) and B (K x N) as raw 16-bit values:
/// block b, thread t at [b * 256 + t]. Mirrors the GEMM's grouped rasterization and the m16n8k16
/// fragment layout (lane = 4g + t: A rows g, g+8, k pairs 2t, 2t+8; B column g, the same k).
std::vector<uint32_t> ModelChecksums(const Problem& p, const std::vector<uint16_t>& a,
                                     const std::vector<uint16_t>& b) {
  const int64_t tiles_m = p.m / 128, tiles_n = p.n / 128, k_tiles = p.k / 32;
  auto a_at = [&](int64_t r, int64_t k) { return uint32_t(a[size_t(r * p.k + k)]); };
  auto b_at = [&](int64_t k, int64_t n) { return uint32_t(b[size_t(k * p.n + n)]); };
  std::vector<uint32_t> out(size_t(tiles_m * tiles_n * kThreads));
  for (int64_t bid = 0; bid < tiles_m * tiles_n; ++bid) {
    const int64_t per_group = 8 * tiles_n, group = bid / per_group, first_m = group * 8;
    const int64_t rows = std::min<int64_t>(tiles_m - first_m, 8), in_group = bid % per_group;
    const int64_t m0 = (first_m + in_group % rows) * 128, n0 = (in_group / rows) * 128;
    for (int tid = 0; tid < kThreads; ++tid) {
      const int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
      const int64_t wm = m0 + (warp / 4) * 64, wn = n0 + (warp % 4) * 32;
      uint32_t sum = 0;
      for (int64_t kt = 0; kt < k_tiles; ++kt) {
        const int64_t tile = k_tiles > 1 ? kt % 2 : 0;  // the stage read holds k-tile 0 or 1
        uint32_t x = 0;
        for (int ks = 0; ks < 2; ++ks) {
          const int64_t k = tile * 32 + ks * 16 + 2 * t;
          for (int mi = 0; mi < 4; ++mi) {
            for (int half : {0, 8}) {  // a0/a1: rows g, g+8
              for (int kk : {0, 8}) {  // a0/a2: k, k+8
                const int64_t r = wm + mi * 16 + g + half;
                x ^= a_at(r, k + kk) | (a_at(r, k + kk + 1) << 16);
              }
            }
          }
          for (int ni = 0; ni < 4; ++ni) {
            for (int kk : {0, 8}) {
              const int64_t n = wn + ni * 8 + g;
              x ^= b_at(k + kk, n) | (b_at(k + kk + 1, n) << 16);
            }
          }
        }
        sum = Rotl1(sum) ^ x;
      }
      out[size_t(bid * kThreads + tid)] = sum;
    }
  }
  return out;
}

class Smem2RegGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = NoDeviceReason(); !why.empty()) GTEST_SKIP() << why;
    RegisterCatalog(registry_);
    BindLaunchers(registry_);
  }
  Registry registry_;
};

TEST_F(Smem2RegGpu, EveryVariantReadsTheGemmsFragments) {
  // Odd and single k-tile counts, a partial raster group (tiles_m = 3), both dtypes.
  for (const Problem& p : {Problem{384, 512, 96, DType::kBF16}, Problem{128, 256, 32, DType::kFP16},
                           Problem{1024, 1024, 1024, DType::kBF16}}) {
    SCOPED_TRACE(std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) + " " +
                 std::string(ToString(p.dtype)));
    GemmBuffers buf;
    ASSERT_EQ(buf.Init(p, 7), "");
    std::vector<uint16_t> a(size_t(p.m * p.k)), b(size_t(p.k * p.n));
    ASSERT_EQ(cudaMemcpy(a.data(), buf.a.data(), a.size() * 2, cudaMemcpyDeviceToHost),
              cudaSuccess);
    ASSERT_EQ(cudaMemcpy(b.data(), buf.b_kn.data(), b.size() * 2, cudaMemcpyDeviceToHost),
              cudaSuccess);
    const std::vector<uint32_t> want = ModelChecksums(p, a, b);
    int distinct = 0;
    for (size_t i = 1; i < want.size(); ++i) distinct += want[i] != want[0];
    ASSERT_GT(distinct, 0) << "a model that gives every thread the same checksum proves little";

    for (const Smem2RegConfig& c : AllSmem2RegConfigs()) {
      const std::string name = Smem2RegVariantName(c);
      SCOPED_TRACE(name);
      const Variant* v = registry_.Find(name);
      ASSERT_NE(v, nullptr);
      ASSERT_EQ(CheckedLaunch(*v, buf, nullptr), "");  // C poisoned first
      std::vector<uint32_t> got(want.size());
      ASSERT_EQ(cudaMemcpy(got.data(), buf.c.data(), got.size() * 4, cudaMemcpyDeviceToHost),
                cudaSuccess);
      size_t bad = 0, first = got.size();
      for (size_t i = 0; i < got.size(); ++i) {
        if (got[i] != want[i]) {
          ++bad;
          if (first == got.size()) first = i;
        }
      }
      EXPECT_EQ(bad, 0u) << "first at block " << first / kThreads << " thread " << first % kThreads
                         << ": got " << (first < got.size() ? got[first] : 0) << ", want "
                         << (first < got.size() ? want[first] : 0);
    }
  }
}

TEST_F(Smem2RegGpu, RefusesWhatTheAblationFamilyRefuses) {
  const Variant* v = registry_.Find("smem2reg_R1_bl0_sw1");
  ASSERT_NE(v, nullptr);
  ASSERT_TRUE(v->launch);
  GemmArgs args;
  args.problem = {4096, 4096, 4010, DType::kBF16};
  EXPECT_NE(v->launch(args).find("K of 32"), std::string::npos);
  args.problem = {4096, 4096, 4096, DType::kFP32};
  EXPECT_NE(v->launch(args).find("dtype"), std::string::npos);
}

}  // namespace
}  // namespace ablation::kernels
