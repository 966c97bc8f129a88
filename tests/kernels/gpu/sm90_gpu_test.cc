// GPU tests (ctest label gpu) of the sm90 family, the Hopper ladder: every rung against the FP64
// reference at small shapes and against cuBLAS at 4096^3 (poisoned output first: nothing
// unwritten, no NaN), the refusals, and no local memory. On a device that is not compute
// capability 9.0 the rungs must refuse with a sentence, not crash. Every test skips with the
// reason where there is no device.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kernels/reference.h"
#include "kernels/sm90/sm90_buckets.h"
#include "kernels/sm90/sm90_config.h"
#include "kernels/sm90/sm90_few_rows.h"
#include "kernels/sm90/sm90_launchers.h"
#include "kernels/sm90/sm90_plan.h"
#include "kernels/sm90/sm90_tile_rungs.h"
#include "kernels/sm90/sm90_tma.h"
#include "kernels/testing/gpu_util.h"
#include "tests/kernels/gpu/gpu_test_util.h"

namespace ablation::kernels {
namespace {

using testing::GemmBuffers;
using testing::IsSm90;
using testing::NoDeviceReason;
using testing::Output;

std::vector<std::string> RungNames() {
  std::vector<std::string> out;
  for (const sm90::Rung& r : sm90::kRungs) out.emplace_back(r.name);
  return out;
}

class Sm90Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = NoDeviceReason(); !why.empty()) GTEST_SKIP() << why;
    RegisterCatalog(registry_);
    BindLaunchers(registry_);
    ASSERT_EQ(cublasCreate(&cublas_), CUBLAS_STATUS_SUCCESS);
    // cublas_bf16 runs through cuBLASLt, with the handle and workspace the worker gives it.
    ASSERT_EQ(cublasLtCreate(&lt_), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(workspace_.Allocate(size_t(32) << 20), "");
  }
  void TearDown() override {
    if (cublas_ != nullptr) cublasDestroy(cublas_);
    if (lt_ != nullptr) cublasLtDestroy(lt_);
  }

  const Variant& Get(const std::string& name) {
    const Variant* v = registry_.Find(name);
    if (v == nullptr) ADD_FAILURE() << "no variant " << name;
    return v != nullptr ? *v : registry_.All().front();
  }

  /// Every rung that takes the shape, against `ref`; ran_ collects which rungs ran (each must
  /// run somewhere).
  void ExpectMatches(const GemmBuffers& buf, const std::vector<double>& ref) {
    for (const std::string& name : names_) {
      SCOPED_TRACE(name + " " + std::to_string(buf.problem.m) + "x" +
                   std::to_string(buf.problem.n) + "x" + std::to_string(buf.problem.k));
      if (!Get(name).can_implement(buf.problem).empty()) continue;
      ran_.insert(name);
      const std::string error = testing::CheckedLaunch(Get(name), buf, cublas_);
      EXPECT_EQ(error, "");
      if (!error.empty()) continue;
      const Comparison c = Compare(Output(buf), ref, DType::kBF16, DefaultTolerance(DType::kBF16));
      EXPECT_TRUE(c.passed) << "rel_frobenius " << c.rel_frobenius_error << " max_abs "
                            << c.max_abs_error << " mismatches " << c.mismatches << " nan "
                            << c.nan_count << " unwritten " << c.unwritten_count;
      EXPECT_EQ(c.nan_count, 0);
      EXPECT_EQ(c.unwritten_count, 0);
    }
  }

  /// Every rung that takes `p` against the FP64 reference of the same random inputs.
  void ExpectMatchesFp64(Problem p, uint64_t seed) {
    p.dtype = DType::kBF16;
    GemmBuffers buf;
    ASSERT_EQ(buf.Init(p, seed), "");
    std::vector<double> a, b;
    ASSERT_EQ(CopyToHostAsDouble(buf.a.data(), size_t(p.m * p.k), p.dtype, false, &a), "");
    ASSERT_EQ(CopyToHostAsDouble(buf.b_kn.data(), size_t(p.k * p.n), p.dtype, false, &b), "");
    ExpectMatches(buf, ReferenceGemm(a, b, p.m, p.n, p.k));
  }

  /// Every rung that takes `p` against cuBLAS on the same random inputs.
  void ExpectMatchesCublas(Problem p, uint64_t seed) {
    p.dtype = DType::kBF16;
    GemmBuffers buf;
    ASSERT_EQ(buf.Init(p, seed), "");
    ASSERT_EQ(testing::LaunchLikeTheWorker(Get("cublas_bf16"), buf, cublas_, lt_, &workspace_), "");
    ExpectMatches(buf, Output(buf));
  }

  Registry registry_;
  cublasHandle_t cublas_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  DeviceBuffer workspace_;
  std::set<std::string> ran_;
  std::vector<std::string> names_ = RungNames();  ///< the rungs ExpectMatches runs
};

TEST_F(Sm90Gpu, RefusesOtherDevicesWithASentence) {
  if (IsSm90()) GTEST_SKIP() << "this device is compute capability 9.0; the refusal is for others";
  GemmBuffers buf;
  ASSERT_EQ(buf.Init({256, 256, 64, DType::kBF16}, 3), "");
  for (const std::string& name : RungNames()) {
    const std::string e = Get(name).launch(buf.Args(Get(name), cublas_));
    EXPECT_NE(e.find("needs a compute capability 9.0 GPU"), std::string::npos) << name << ": " << e;
  }
}

TEST_F(Sm90Gpu, AgainstFp64Reference) {
  if (!IsSm90()) GTEST_SKIP() << "the sm90 family runs on compute capability 9.0 only";
  // Several k-tiles (K/64 = 2, 8, 5: the stage ring wraps), several tiles per persistent CTA
  // (768x768), and M != N != K so that an M/N mix-up shows.
  // 4096x2048x64: two tiles of one k-tile per persistent CTA, so the overlapped epilogue stores a
  // held tile with fewer k-tiles than chunks to hide it behind.
  for (Problem p : {Problem{256, 256, 128}, Problem{512, 512, 512}, Problem{768, 1280, 320},
                    Problem{2048, 2048, 256}, Problem{4096, 2048, 64}}) {
    ExpectMatchesFp64(p, 42);
  }
  EXPECT_EQ(ran_.size(), sm90::kRungs.size()) << "a rung ran at none of the shapes";
}

TEST_F(Sm90Gpu, AgainstCublasAt4096) {
  if (!IsSm90()) GTEST_SKIP() << "the sm90 family runs on compute capability 9.0 only";
  ExpectMatchesCublas({4096, 4096, 4096}, 11);
  EXPECT_EQ(ran_.size(), sm90::kRungs.size());
}

// Shapes with more units than the grid has clusters and a last round at most 3/4 full, so that
// the stream-K rung shares it (66 clusters of 2 on an H200): 72 units with 5 k-tiles (ranges of
// 3: units shared by up to three clusters, two partials each) against the FP64 reference, 108
// units with 17 k-tiles against cuBLAS. Every rung runs them (the other persistent rungs walk
// several rounds there).
TEST_F(Sm90Gpu, StreamKSharesTheLastRound) {
  if (!IsSm90()) GTEST_SKIP() << "the sm90 family runs on compute capability 9.0 only";
  ExpectMatchesFp64({2304, 2048, 320}, 7);
  ExpectMatchesCublas({2304, 3072, 1088}, 8);
  EXPECT_EQ(ran_.size(), sm90::kRungs.size());
}

// The fix-up adds partials in a fixed order: the same inputs give the same bits, launch after
// launch (the flags of one launch never stand for the next: each has its own epoch), with the
// epilogue in place or overlapped with the next tile.
TEST_F(Sm90Gpu, StreamKRepeatsBitForBit) {
  if (!IsSm90()) GTEST_SKIP() << "the sm90 family runs on compute capability 9.0 only";
  for (const char* name : {"sm90_h9_stream_k", "sm90_h10_epilogue_overlap"})
    for (const Problem& p :
         {Problem{8192, 8192, 256, DType::kBF16}, Problem{2304, 2048, 320, DType::kBF16},
          Problem{128, 8192, 4096, DType::kBF16}}) {
      SCOPED_TRACE(name);
      GemmBuffers buf;
      ASSERT_EQ(buf.Init(p, 9), "");
      const Variant& v = Get(name);
      ASSERT_EQ(testing::CheckedLaunch(v, buf, cublas_), "");
      const std::vector<double> first = Output(buf);
      for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(testing::CheckedLaunch(v, buf, cublas_), "");
        EXPECT_TRUE(Output(buf) == first) << p.m << "x" << p.n << "x" << p.k << " launch " << i + 2;
      }
    }
}

// The workspace keeps the layout of its allocation: a smaller request after a larger one gets
// the same flags and partials, so its partials never land on flags the larger one reads.
TEST_F(Sm90Gpu, StreamKWorkspaceKeepsItsLayoutForSmallerRequests) {
  if (!IsSm90()) GTEST_SKIP() << "the sm90 family runs on compute capability 9.0 only";
  void* big_partials = nullptr;
  uint32_t* big_flags = nullptr;
  uint32_t big_epoch = 0;
  ASSERT_EQ(sm90::StreamKWorkspace(int64_t(1) << 20, 4096, &big_partials, &big_flags, &big_epoch),
            "");
  void* small_partials = nullptr;
  uint32_t* small_flags = nullptr;
  uint32_t small_epoch = 0;
  ASSERT_EQ(
      sm90::StreamKWorkspace(int64_t(1) << 16, 16, &small_partials, &small_flags, &small_epoch),
      "");
  EXPECT_EQ(small_flags, big_flags);
  EXPECT_EQ(small_partials, big_partials);
  EXPECT_GE(static_cast<char*>(small_partials) - reinterpret_cast<char*>(small_flags), 4096 * 4);
  EXPECT_EQ(small_epoch, big_epoch + 1);
}

// Every shape cuBLAS takes: small shapes off the tile in every way (M, N, K below, between and
// past tiles; K and N not multiples of 8, so that the operands are padded) against the FP64
// reference. Every rung runs each of them. 256x512x2048 and 1x512x4104 have fewer units than
// the grid has clusters and long K: the stream-K rungs share their k-tiles among 3 clusters.
TEST_F(Sm90Gpu, EveryShapeAgainstFp64Reference) {
  if (!IsSm90()) GTEST_SKIP() << "the sm90 family runs on compute capability 9.0 only";
  for (Problem p :
       {Problem{1, 1, 1}, Problem{1, 256, 64}, Problem{7, 9, 13}, Problem{100, 200, 96},
        Problem{129, 257, 65}, Problem{255, 511, 127}, Problem{384, 520, 200}, Problem{640, 264, 8},
        Problem{2304, 2056, 328}, Problem{256, 512, 2048}, Problem{1, 512, 4104}}) {
    ExpectMatchesFp64(p, 21);
  }
  EXPECT_EQ(ran_.size(), sm90::kRungs.size());
}

// The shapes users have that the ladder once refused, against cuBLAS on the same inputs: a
// decode-sized M, one row, K and M/N off the tile, and every dimension odd.
TEST_F(Sm90Gpu, RaggedShapesAgainstCublas) {
  if (!IsSm90()) GTEST_SKIP() << "the sm90 family runs on compute capability 9.0 only";
  for (Problem p : {Problem{4000, 4000, 4000}, Problem{4096, 4096, 4000}, Problem{128, 8192, 8192},
                    Problem{1, 4096, 4096}, Problem{4097, 4095, 4099}}) {
    ExpectMatchesCublas(p, 31);
  }
  EXPECT_EQ(ran_.size(), sm90::kRungs.size());
}

// The small-shape ladder (sm90_few_rows.h): S1's few-row path at every build of rows (1, 2, 4,
// 8, 16: M of 1, 2, 3, 5, 16), S2's swapped one (N of 1 to 16, C stored transposed) and S3's
// split-K in the block, N or M odd and not a multiple of a warp's columns, K of one chunk, of
// fewer chunks than a split's warps and of many, against the FP64 reference and cuBLAS; and
// what each leaves to H12 (17 rows and columns, K not a multiple of 8) through H12's launch. The
// plan says which ran; the registry names that kernel.
TEST_F(Sm90Gpu, TheFewRowPathsAgainstFp64AndCublas) {
  if (!IsSm90()) GTEST_SKIP() << "the sm90 family runs on compute capability 9.0 only";
  names_.clear();
  for (const sm90::SmallRung& r : sm90::kSmallRungs) names_.emplace_back(r.name);
  for (Problem p :
       {Problem{1, 1, 8}, Problem{2, 257, 64}, Problem{3, 1001, 4104}, Problem{2, 9, 16},
        Problem{5, 96, 520}, Problem{16, 333, 1032}, Problem{17, 300, 512}, Problem{4, 200, 13},
        Problem{257, 1, 64}, Problem{1001, 3, 4104}, Problem{96, 5, 520}, Problem{333, 16, 1032},
        Problem{300, 17, 512}}) {
    ExpectMatchesFp64(p, 51);
    p.dtype = DType::kBF16;
    for (const sm90::SmallRung& r : sm90::kSmallRungs) {
      const std::string name(r.name);
      const sm90::FewRowsPlan plan = sm90::PlanFewRows(p, r, 0, 0);
      const bool few_rows = p.m <= 16, few_cols = r.few_cols > 0 && p.n <= 16;
      EXPECT_EQ(plan.runs, (few_rows || few_cols) && p.k % 8 == 0)
          << name << " " << p.m << "x" << p.n << "x" << p.k;
      // Past the few-row path: the Hopper build the rung names for p (H12, or from S4 on a
      // 64-row build or, S7, the swapped one).
      const std::string hopper(plan.runs ? r.base : sm90::HopperFor(r, p));
      EXPECT_EQ(Get(name).KernelAt(p) == Get(hopper).KernelAt(p), !plan.runs) << name;
    }
  }
  for (Problem p : {Problem{1, 4096, 4096}, Problem{16, 14336, 4096}, Problem{8, 4096, 14336},
                    Problem{4096, 1, 4096}, Problem{14336, 16, 4096}})
    ExpectMatchesCublas(p, 52);
  EXPECT_EQ(ran_.size(), sm90::kSmallRungs.size());
}

// The 64-row tiles (sm90_h12_rows64, its shorter stream-K ranges, its 64x64 tiles of 13 stages
// with clusters and without and their swapped build, its 64x8 tiles and their swapped build, and
// S4 and S5 where they run them: past the few-row path, at most 128 rows), and H12's 128x16
// swapped and 128x128 tiles, the last in 1x2 clusters too, and its 192x128 swapped tiles (three
// consumer warpgroups), also in 4x1 clusters sharing B (on the tile at 128x1536x512: two clusters;
// at 24x2400x200 a last cluster with tiles past the rows), and its 64x8 tiles in 1x2 clusters
// sharing A, swapped and not (few rows and columns below; 4096x16 and 16x14336 on the tile), and
// H12's 128x112 tiles (on the tile at 256x1792x192 and 128x14336x4096, the 16-byte stores of
// three groups of 32 columns and the 4-byte stores of the last 16; off it wherever N is not a
// multiple of 112), and the 128x16 swapped, 128x128, 64x64 unclustered and 64x8 swapped tiles with
// stream-K on every SM (16x14336x4096 and 128x14336x4096: 112 tiles in 132 ranges of K;
// 128x4096x4096 and 16x4096x4096: 128): on
// the tile (M a multiple of a 2x1 cluster's 128 rows, N of 256, K of 64) and off it (M of 17, 64,
// 100; N and K off their tiles), against the FP64 reference and cuBLAS, and M of 128 at 4096^2 with
// the stream-K fix-up; S4 runs H12 above 128 rows.
TEST_F(Sm90Gpu, TheSixtyFourRowTilesAgainstFp64AndCublas) {
  if (!IsSm90()) GTEST_SKIP() << "the sm90 family runs on compute capability 9.0 only";
  names_ = {"sm90_h12_rows64",
            "sm90_s4_rows64",
            "sm90_h12_rows64_sk4",
            "sm90_s5_short_ranges",
            "sm90_h12_rows64_sk4_swapped",
            "sm90_s7_swap_tiles",
            "sm90_h12_rows64_n64",
            "sm90_h12_rows64_n64_swapped",
            "sm90_h12_rows64_n8_swapped",
            "sm90_h12_rows64_n64_unclustered",
            "sm90_h12_rows64_n8",
            "sm90_h12_n16_swapped",
            "sm90_h12_n128",
            "sm90_h12_n128_shared_a",
            "sm90_h12_m192_n128_swapped",
            "sm90_h12_m192_n128_quads",
            "sm90_h12_rows64_n8_pairs",
            "sm90_h12_rows64_n8_swapped_pairs",
            "sm90_h12_n112",
            "sm90_h12_n16_swapped_all_sms",
            "sm90_h12_n128_all_sms",
            "sm90_h12_rows64_n64_unclustered_all_sms",
            "sm90_h12_rows64_n8_swapped_all_sms"};
  const sm90::SmallRung& s4 = sm90::kSmallRungs[3];
  const sm90::SmallRung& s7 = sm90::kSmallRungs[6];
  for (Problem p : {Problem{17, 300, 512}, Problem{64, 512, 1024}, Problem{100, 264, 136},
                    Problem{128, 512, 640}, Problem{33, 1000, 520}, Problem{256, 256, 64},
                    Problem{304, 17, 512}, Problem{512, 100, 136}, Problem{1000, 128, 264},
                    Problem{128, 1536, 512}, Problem{24, 2400, 200}, Problem{256, 1792, 192}}) {
    ExpectMatchesFp64(p, 53);
    p.dtype = DType::kBF16;
    const bool tile = p.m > 16 && p.n > 16 && p.m <= 128;
    EXPECT_EQ(Get("sm90_s4_rows64").KernelAt(p) == Get("sm90_h12_rows64").KernelAt(p), tile)
        << p.m << "x" << p.n << "x" << p.k;
    EXPECT_EQ(sm90::UsesTileBase(s4, p), p.m <= 128);
    EXPECT_EQ(
        Get("sm90_s7_swap_tiles").KernelAt(p) == Get("sm90_h12_rows64_sk4_swapped").KernelAt(p),
        p.n > 16 && sm90::UsesSwapBase(s7, p))
        << p.m << "x" << p.n << "x" << p.k;
  }
  // Few rows, which the 64x8 build takes swapped, and few columns, which it takes as they are
  // (ragged ones guarded).
  for (Problem p : {Problem{16, 1000, 520}, Problem{8, 264, 136}, Problem{24, 4096, 200},
                    Problem{1000, 16, 520}, Problem{264, 8, 136}, Problem{4100, 24, 200}})
    ExpectMatchesFp64(p, 56);
  for (Problem p : {Problem{128, 4096, 4096}, Problem{64, 14336, 4096}, Problem{512, 4096, 4096},
                    Problem{4096, 128, 4096}, Problem{14336, 64, 4096}, Problem{16, 4096, 4096},
                    Problem{16, 14336, 4096}, Problem{4096, 16, 4096}, Problem{14336, 16, 4096},
                    Problem{128, 14336, 4096}})
    ExpectMatchesCublas(p, 54);
  EXPECT_EQ(ran_.size(), 23u);
}

// The per-bucket rungs (S8, S10, S12; sm90_buckets.h): in every bucket a table names, a shape of
// that bucket runs the named build's kernel and matches the FP64 reference (or, past 2^28
// products, cuBLAS); a shape of no named bucket runs its default's. Then the serving shapes the
// tables were made at.
TEST_F(Sm90Gpu, ThePerBucketRungRunsTheBuildItsBucketNames) {
  if (!IsSm90()) GTEST_SKIP() << "the sm90 family runs on compute capability 9.0 only";
  int seed = 55;
  for (const sm90::BucketTable& table : sm90::kBucketTables) {
    SCOPED_TRACE(table.id);
    names_ = {std::string(table.rung)};
    const Variant& rung = Get(std::string(table.rung));
    // A size inside each class (M and N: 1, 2-16, 17-128, 129-512, 513-4096, more; K likewise);
    // 8 rows, which a swapped pick takes, and 9, which it leaves to the default.
    const int64_t rows[] = {1, 8, 100, 300, 1000, 4104}, depth[] = {520, 4104, 16392};
    std::vector<Problem> shapes = {{1, 4096, 4096}, {100, 264, 136}, {9, 1000, 4104}};
    for (const sm90::BucketPick& pick : table.picks)
      shapes.push_back({rows[pick.m_class], rows[pick.n_class], depth[pick.k_class]});
    for (Problem p : shapes) {
      p.dtype = DType::kBF16;
      std::string_view build = sm90::BucketVariantFor(p, table);
      if (!Get(std::string(build)).can_implement(p).empty()) build = table.fallback;
      EXPECT_EQ(rung.KernelAt(p), Get(std::string(build)).KernelAt(p))
          << build << " " << p.m << "x" << p.n;
      if (double(p.m) * double(p.n) * double(p.k) <= double(int64_t(1) << 28))
        ExpectMatchesFp64(p, seed);
      else
        ExpectMatchesCublas(p, seed);
    }
    for (Problem p : {Problem{16, 4096, 14336}, Problem{512, 4096, 4096}, Problem{4096, 16, 14336}})
      ExpectMatchesCublas(p, seed + 1);
    seed += 2;
  }
  EXPECT_EQ(ran_.size(), sm90::kBucketTables.size());  // every table's rung ran
}

// Operands TMA cannot take (pointers 2 bytes off 16-byte alignment) are padded, C is copied
// back, and nothing around the caller's C is written: the bytes before and after it keep their
// poison.
TEST_F(Sm90Gpu, MisalignedOperandsArePaddedAndNothingAroundCIsWritten) {
  if (!IsSm90()) GTEST_SKIP() << "the sm90 family runs on compute capability 9.0 only";
  const Problem p{300, 264, 136, DType::kBF16};
  GemmBuffers buf;
  ASSERT_EQ(buf.Init(p, 5), "");
  ASSERT_EQ(testing::LaunchLikeTheWorker(Get("cublas_bf16"), buf, cublas_, lt_, &workspace_), "");
  const std::vector<double> ref = Output(buf);
  constexpr size_t kOff = 2, kSlack = 64;
  const size_t a_bytes = size_t(p.m * p.k) * 2, b_bytes = size_t(p.n * p.k) * 2,
               c_bytes = size_t(p.m * p.n) * 2;
  DeviceBuffer a, b, c;
  ASSERT_EQ(a.Allocate(a_bytes + 16), "");
  ASSERT_EQ(b.Allocate(b_bytes + 16), "");
  ASSERT_EQ(c.Allocate(c_bytes + 2 * kSlack), "");
  char* a_at = static_cast<char*>(a.data()) + kOff;
  char* b_at = static_cast<char*>(b.data()) + kOff;
  char* c_at = static_cast<char*>(c.data()) + kSlack + kOff;
  ASSERT_EQ(cudaMemcpy(a_at, buf.a.data(), a_bytes, cudaMemcpyDeviceToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(b_at, buf.b_nk.data(), b_bytes, cudaMemcpyDeviceToDevice), cudaSuccess);
  for (const std::string& name : RungNames()) {
    SCOPED_TRACE(name);
    ASSERT_EQ(cudaMemset(c.data(), 0x7b, c_bytes + 2 * kSlack), cudaSuccess);
    GemmArgs args;
    args.problem = p;
    args.a = a_at;
    args.b = b_at;
    args.c = c_at;
    ASSERT_EQ(Get(name).launch(args), "");
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<unsigned char> all(c_bytes + 2 * kSlack);
    ASSERT_EQ(cudaMemcpy(all.data(), c.data(), all.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    for (size_t i = 0; i < kSlack + kOff; ++i) EXPECT_EQ(all[i], 0x7b) << "byte " << i;
    for (size_t i = kSlack + kOff + c_bytes; i < all.size(); ++i) {
      EXPECT_EQ(all[i], 0x7b) << "byte " << i << " past C";
    }
    std::vector<double> out;
    ASSERT_EQ(CopyToHostAsDouble(c_at, size_t(p.m * p.n), p.dtype, true, &out), "");
    const Comparison cmp = Compare(out, ref, DType::kBF16, DefaultTolerance(DType::kBF16));
    EXPECT_TRUE(cmp.passed) << "rel_frobenius " << cmp.rel_frobenius_error << " unwritten "
                            << cmp.unwritten_count;
  }
}

// Off the tile nothing past C is written: C is allocated exactly M x N and followed by poison.
TEST_F(Sm90Gpu, GuardedBuildsWriteNothingPastC) {
  if (!IsSm90()) GTEST_SKIP() << "the sm90 family runs on compute capability 9.0 only";
  for (const Problem& p : {Problem{130, 264, 72, DType::kBF16}, Problem{1, 8, 8, DType::kBF16}}) {
    GemmBuffers buf;
    ASSERT_EQ(buf.Init(p, 6), "");
    const size_t c_bytes = size_t(p.m * p.n) * 2, slack = size_t(1) << 20;
    DeviceBuffer c;
    ASSERT_EQ(c.Allocate(c_bytes + slack), "");
    for (const std::string& name : RungNames()) {
      SCOPED_TRACE(name + " " + std::to_string(p.m) + "x" + std::to_string(p.n));
      ASSERT_EQ(cudaMemset(c.data(), 0x5a, c_bytes + slack), cudaSuccess);
      GemmArgs args = buf.Args(Get(name), cublas_);
      args.c = c.data();
      ASSERT_EQ(Get(name).launch(args), "");
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      std::vector<unsigned char> tail(slack);
      ASSERT_EQ(cudaMemcpy(tail.data(), static_cast<char*>(c.data()) + c_bytes, slack,
                           cudaMemcpyDeviceToHost),
                cudaSuccess);
      size_t written = 0;
      for (unsigned char x : tail) written += x != 0x5a;
      EXPECT_EQ(written, 0u) << "bytes written past C";
    }
  }
}

TEST_F(Sm90Gpu, RefusesWhatItCannotRunAndDoesNotSpill) {
  if (!IsSm90()) GTEST_SKIP() << "the sm90 family runs on compute capability 9.0 only";
  for (size_t i = 0; i < sm90::kRungs.size(); ++i) {
    const std::string name(sm90::kRungs[i].name);
    const Variant& v = Get(name);
    for (Problem p : {Problem{0, 256, 64, DType::kBF16}, Problem{128, 256, 64, DType::kFP16}}) {
      GemmArgs args;
      args.problem = p;
      EXPECT_NE(v.launch(args), "") << name << " launched " << p.m << "x" << p.n << "x" << p.k;
      EXPECT_NE(v.can_implement(p), "") << name;
    }
    const void* fn = v.kernel(DType::kBF16);
    ASSERT_NE(fn, nullptr) << name;
    EXPECT_EQ(v.kernel(DType::kFP16), nullptr) << name;
    // The rung's own build and its guarded build (shapes off the tile).
    for (const void* f : {fn, sm90::Sm90GuardedKernel(i)}) {
      ASSERT_NE(f, nullptr) << name;
      cudaFuncAttributes attr{};
      ASSERT_EQ(cudaFuncGetAttributes(&attr, f), cudaSuccess) << name;
      EXPECT_EQ(attr.localSizeBytes, 0u) << name << " uses local memory";
    }
  }
  // Every tile build (kTileRungs), its own kernel and its guarded one, at a shape it takes on
  // its tile (the swapped ones named at the transposed problem; 4608 for every tile but 112
  // columns, 4480 for those) and off it: no local memory, and the block the build asks for.
  for (const sm90::Rung& r : sm90::kTileRungs) {
    const Variant& v = Get(std::string(r.name));
    for (const Problem& p :
         {Problem{4608, 4608, 4608, DType::kBF16}, Problem{4480, 4480, 4480, DType::kBF16},
          Problem{4600, 4600, 4600, DType::kBF16}}) {
      ASSERT_EQ(v.can_implement(p), "") << r.name;
      const void* f = v.KernelAt(p);
      ASSERT_NE(f, nullptr) << r.name << " at " << p.m;
      cudaFuncAttributes attr{};
      ASSERT_EQ(cudaFuncGetAttributes(&attr, f), cudaSuccess) << r.name;
      EXPECT_EQ(attr.localSizeBytes, 0u) << r.name << " uses local memory at " << p.m;
      EXPECT_EQ(attr.maxThreadsPerBlock, r.knobs.Threads()) << r.name;
    }
  }
  // The few-row builds (1, 2, 4, 8, 16 rows; S2's transposed ones, S3's split ones), as the
  // registry names them at M or N of 1 to 16.
  for (int64_t few : {1, 2, 3, 8, 16}) {
    for (const void* f : {Get("sm90_s1_few_rows").KernelAt({few, 4096, 4096, DType::kBF16}),
                          Get("sm90_s2_few_cols").KernelAt({4096, few, 4096, DType::kBF16}),
                          Get("sm90_s3_split_k").KernelAt({few, 4096, 4096, DType::kBF16}),
                          Get("sm90_s3_split_k").KernelAt({4096, few, 4096, DType::kBF16})}) {
      ASSERT_NE(f, nullptr) << few;
      cudaFuncAttributes attr{};
      ASSERT_EQ(cudaFuncGetAttributes(&attr, f), cudaSuccess) << few;
      EXPECT_EQ(attr.localSizeBytes, 0u) << "a few-row build of " << few << " spills";
      EXPECT_EQ(attr.maxThreadsPerBlock, sm90::kFewRowsThreads);
    }
  }
  // The tensor-core few-row builds of 4, 8 and 16 warps (S9 at 16 rows of 100000, 14336 and
  // 4096 columns; S11's ring at 100000, 4096 and 1000), swapped and not.
  const std::pair<int, int64_t> builds[] = {{7, 100000}, {7, 14336}, {7, 4096},
                                            {8, 100000}, {8, 4096},  {8, 1000}};
  for (const auto& [rung, cols] : builds) {
    for (const Problem& p :
         {Problem{16, cols, 4096, DType::kBF16}, Problem{cols, 16, 4096, DType::kBF16}}) {
      const sm90::FewRowsPlan plan = sm90::PlanFewRows(p, sm90::kSmallRungs[rung], 0, 0);
      ASSERT_TRUE(plan.mma);
      const void* f = Get(std::string(sm90::kSmallRungs[rung].name)).KernelAt(p);
      ASSERT_NE(f, nullptr) << cols;
      cudaFuncAttributes attr{};
      ASSERT_EQ(cudaFuncGetAttributes(&attr, f), cudaSuccess) << cols;
      EXPECT_EQ(attr.localSizeBytes, 0u) << "the " << plan.split << "-warp build spills";
      EXPECT_EQ(attr.maxThreadsPerBlock, plan.threads) << cols;
    }
  }
}

// S11 feeds the tensor-core few-row kernel's fragments through its cp.async ring in S9's steps
// and adds the warps' sums in S9's order: where the two split K alike (4 and 16 warps), S11's C is
// S9's bit for bit, ragged N and K, swapped, with chunks past B's rows and past K zero-filled, and
// it repeats. Its 8-warp build (which S9 never runs) against the FP64 reference.
TEST_F(Sm90Gpu, TheRingComputesS9sSumsBitForBit) {
  if (!IsSm90()) GTEST_SKIP() << "the sm90 family runs on compute capability 9.0 only";
  const sm90::SmallRung& s9 = sm90::kSmallRungs[7];
  const sm90::SmallRung& s11 = sm90::kSmallRungs[8];
  for (Problem p : {Problem{16, 1001, 4104}, Problem{3, 100000, 520}, Problem{2, 9, 16},
                    Problem{1001, 9, 4104}, Problem{16, 200, 8}, Problem{5, 300, 104}}) {
    p.dtype = DType::kBF16;
    const std::string at =
        std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k);
    const sm90::FewRowsPlan plan = sm90::PlanFewRows(p, s11, 0, 0);
    ASSERT_TRUE(plan.runs && plan.mma && plan.stages == 4) << at;
    ASSERT_EQ(plan.split, sm90::PlanFewRows(p, s9, 0, 0).split) << at;
    GemmBuffers buf;
    ASSERT_EQ(buf.Init(p, 61), "");
    ASSERT_EQ(testing::CheckedLaunch(Get(std::string(s9.name)), buf, cublas_), "") << at;
    const std::vector<double> s9_out = Output(buf);
    for (int i = 0; i < 2; ++i) {
      ASSERT_EQ(testing::CheckedLaunch(Get(std::string(s11.name)), buf, cublas_), "") << at;
      EXPECT_TRUE(Output(buf) == s9_out) << at << " launch " << i + 1;
    }
  }
  names_ = {std::string(s11.name)};
  for (const Problem& p : {Problem{16, 4100, 1032}, Problem{4100, 7, 520}}) {
    ASSERT_EQ(sm90::PlanFewRows({p.m, p.n, p.k, DType::kBF16}, s11, 0, 0).split, 8);
    ExpectMatchesFp64(p, 62);
  }
  EXPECT_EQ(ran_.size(), 1u);
}

// The kernel the registry names for a problem is the build that runs it (sm90_plan.h): on the
// H200 H12 at 4096^3 runs without clusters (another symbol than its own build, what `sass` and
// `profile` now name), at 8192^3 with them, off the tile its guarded build.
TEST_F(Sm90Gpu, TheRegistryNamesTheBuildThatRunsAProblem) {
  if (!IsSm90()) GTEST_SKIP() << "the sm90 family runs on compute capability 9.0 only";
  const Residency device = sm90::Sm90DeviceResidency();
  ASSERT_GT(device.sms, 0);
  ASSERT_GT(device.pair_clusters, 0);
  constexpr size_t h12 = sm90::kRungs.size() - 1;
  const Variant& v = Get(std::string(sm90::kRungs[h12].name));
  const void* own = v.kernel(DType::kBF16);
  const Problem at4096{4096, 4096, 4096, DType::kBF16}, at8192{8192, 8192, 8192, DType::kBF16};
  const bool dropped = sm90::PlanGrid(sm90::kRungs[h12].knobs, at4096, device).clusters_dropped;
  EXPECT_EQ(v.KernelAt(at4096) != own, dropped);
  EXPECT_EQ(v.KernelAt(at8192), own);
  EXPECT_EQ(v.KernelAt(Problem{4000, 4096, 4096, DType::kBF16}),
            sm90::Sm90GuardedKernel(h12, sm90::PlanGrid(sm90::Guarded(sm90::kRungs[h12].knobs),
                                                        {4000, 4096, 4096, DType::kBF16}, device)
                                             .clusters_dropped));
  const char* a = nullptr;
  const char* b = nullptr;
  ASSERT_EQ(cudaFuncGetName(&a, own), cudaSuccess);
  ASSERT_EQ(cudaFuncGetName(&b, v.KernelAt(at4096)), cudaSuccess);
  EXPECT_EQ(std::string(a) != std::string(b), dropped) << a << " / " << b;
}

}  // namespace
}  // namespace ablation::kernels
