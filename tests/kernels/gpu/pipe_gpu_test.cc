// GPU tests of the pipe_ family (ctest label gpu): every variant against the FP64 reference at
// 512^3 and on ragged shapes, at 4096^3 on sampled rows of the reference, int8 exactly; the three
// pipelines of one type and tile bit-identical; no spills. Every test skips with the reason where
// there is no device.
#include <gtest/gtest.h>

#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "kernels/reference.h"
#include "kernels/testing/gpu_util.h"
#include "tests/kernels/gpu/gpu_test_util.h"

namespace ablation::kernels {
namespace {

using testing::CheckedLaunch;
using testing::GemmBuffers;
using testing::NoDeviceReason;
using testing::Output;
using testing::RawOutput;

constexpr DType kTypes[] = {DType::kFP16, DType::kINT8, DType::kFP32};

std::string ShapeName(const Problem& p) {
  return std::string(ToString(p.dtype)) + " " + std::to_string(p.m) + "x" + std::to_string(p.n) +
         "x" + std::to_string(p.k);
}

class PipeGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = NoDeviceReason(); !why.empty()) GTEST_SKIP() << why;
    RegisterCatalog(registry_);
    BindLaunchers(registry_);
  }

  /// The pipe_ entries of one type, in registry order (tile by tile, baseline/ldg/cpasync).
  std::vector<const Variant*> Variants(DType dtype) const {
    std::vector<const Variant*> out;
    for (const Variant& v : registry_.All())
      if (v.family == "pipe" && v.Supports(dtype)) out.push_back(&v);
    return out;
  }

  static std::string TileKey(const Variant& v) {
    return std::to_string(v.tile.m) + "x" + std::to_string(v.tile.n) + "x" +
           std::to_string(v.tile.k);
  }

  /// FP64 reference of the given rows of C (all rows when `rows` is empty), from the device
  /// inputs as the kernels saw them (B as K x N).
  static std::vector<double> Reference(const GemmBuffers& buf, const std::vector<int64_t>& rows) {
    const Problem& p = buf.problem;
    std::vector<double> a, b;
    EXPECT_EQ(CopyToHostAsDouble(buf.a.data(), size_t(p.m * p.k), p.dtype, false, &a), "");
    EXPECT_EQ(CopyToHostAsDouble(buf.b_kn.data(), size_t(p.k * p.n), p.dtype, false, &b), "");
    if (rows.empty()) return ReferenceGemm(a, b, p.m, p.n, p.k);
    std::vector<double> a_rows;
    a_rows.reserve(rows.size() * size_t(p.k));
    for (int64_t r : rows)
      a_rows.insert(a_rows.end(), a.begin() + r * p.k, a.begin() + (r + 1) * p.k);
    return ReferenceGemm(a_rows, b, int64_t(rows.size()), p.n, p.k);
  }

  /// Checks `out` (the given rows, or all) against `ref` with the dtype's tolerance; int8 exactly.
  static void ExpectMatches(const std::vector<double>& out, const std::vector<double>& ref,
                            DType dtype) {
    const Comparison c = Compare(out, ref, dtype, DefaultTolerance(dtype));
    EXPECT_TRUE(c.passed) << "rel_frobenius " << c.rel_frobenius_error << " max_abs "
                          << c.max_abs_error << " mismatches " << c.mismatches << " nan "
                          << c.nan_count << " unwritten " << c.unwritten_count;
    if (dtype == DType::kINT8) EXPECT_EQ(c.max_abs_error, 0.0) << "int8 must be exact";
  }

  /// Runs every variant of p.dtype on one set of inputs: each against the reference of `rows`
  /// (all rows if empty), and the three pipelines of each tile against each other bit for bit.
  void CheckShape(const Problem& p, const std::vector<int64_t>& rows, uint64_t seed) {
    SCOPED_TRACE(ShapeName(p));
    GemmBuffers buf;
    ASSERT_EQ(buf.Init(p, seed), "");
    const std::vector<double> ref = Reference(buf, rows);
    std::map<std::string, std::pair<std::string, std::vector<uint8_t>>> first_of_tile;
    std::vector<uint8_t> first_any;
    std::string first_any_name;
    bool all_tiles_identical = true;
    for (const Variant* v : Variants(p.dtype)) {
      SCOPED_TRACE(v->name);
      ASSERT_EQ(CheckedLaunch(*v, buf, nullptr), "");
      const std::vector<double> full = Output(buf);
      std::vector<double> out;
      if (rows.empty()) {
        out = full;
      } else {
        for (int64_t r : rows)
          out.insert(out.end(), full.begin() + r * p.n, full.begin() + (r + 1) * p.n);
      }
      ExpectMatches(out, ref, p.dtype);
      std::vector<uint8_t> raw = RawOutput(buf);
      auto [it, inserted] = first_of_tile.try_emplace(TileKey(*v), v->name, raw);
      if (!inserted) {
        EXPECT_TRUE(raw.size() == it->second.second.size() &&
                    std::memcmp(raw.data(), it->second.second.data(), raw.size()) == 0)
            << v->name << " differs from " << it->second.first << " (same type and tile)";
      }
      if (first_any.empty()) {
        first_any = std::move(raw);
        first_any_name = v->name;
      } else if (std::memcmp(first_any.data(), raw.data(), raw.size()) != 0) {
        all_tiles_identical = false;
      }
    }
    EXPECT_EQ(first_of_tile.size(), 2u);
    // Not a promise of the family (different tiles may round differently), only reported.
    std::cout << "[ pipe     ] " << ShapeName(p) << ": both tiles "
              << (all_tiles_identical ? "bit-identical" : "differ") << "\n";
  }

  Registry registry_;
};

TEST_F(PipeGpu, AgainstFp64ReferenceAt512) {
  for (DType dtype : kTypes) CheckShape({512, 512, 512, dtype}, {}, 42);
}

TEST_F(PipeGpu, RaggedShapesAgainstFp64Reference) {
  // 500x300x77: every dimension ragged, K odd, so no row of A (or of int8's N x K B) is 16-byte
  // aligned: the element-wise edge path everywhere. 200x144x72 (fp16, fp32) and 200x144x80
  // (int8): aligned rows, ragged M, N and last K tile: the cp.async zero-fill path.
  const Problem shapes[] = {{500, 300, 77}, {1000, 1000, 1000}, {200, 144, 72},
                            {200, 144, 80}, {1, 1, 1},          {33, 17, 5},
                            {64, 64, 16},   {129, 65, 48},      {257, 130, 300}};
  for (DType dtype : kTypes) {
    for (Problem p : shapes) {
      p.dtype = dtype;
      CheckShape(p, {}, 7);
    }
  }
}

TEST_F(PipeGpu, At4096OnSampledRowsIdenticalAcrossPipelines) {
  // The CPU reference of all of 4096^3 is 69 G multiply-adds; 160 rows (the first, the last,
  // both sides of every 128- and 64-row tile edge near them, the rest spread) are enough to catch
  // a wrong tile, and int8 is compared exactly. Bit identity covers every element.
  std::vector<int64_t> rows = {0, 1, 63, 64, 127, 128, 4032, 4095};
  for (int64_t i = 0; int64_t(rows.size()) < 160; ++i) rows.push_back((i * 2654435761) % 4096);
  for (DType dtype : kTypes) CheckShape({4096, 4096, 4096, dtype}, rows, 11);
}

TEST_F(PipeGpu, NoSpillsAndLauncherRefusals) {
  int checked = 0;
  for (const Variant& v : registry_.All()) {
    if (v.family != "pipe") continue;
    SCOPED_TRACE(v.name);
    ASSERT_NE(v.launch, nullptr);
    ASSERT_NE(v.kernel, nullptr);
    const DType own = v.dtypes.at(0);
    ASSERT_NE(v.kernel(own), nullptr);
    for (DType d : kTypes)
      if (d != own) EXPECT_EQ(v.kernel(d), nullptr);
    cudaFuncAttributes attr{};
    ASSERT_EQ(cudaFuncGetAttributes(&attr, v.kernel(own)), cudaSuccess);
    EXPECT_EQ(attr.localSizeBytes, 0u) << "spills";
    EXPECT_GE(attr.maxThreadsPerBlock, v.threads);
    std::cout << "[ pipe     ] " << v.name << " regs " << attr.numRegs << " smem " << v.smem_bytes
              << "\n";
    GemmArgs args;
    args.problem = {128, 128, 0, own};
    EXPECT_NE(v.launch(args), "") << "k = 0";
    args.problem = {128, 128, 32, own == DType::kFP16 ? DType::kBF16 : DType::kFP16};
    EXPECT_NE(v.launch(args), "") << "another dtype";
    ++checked;
  }
  EXPECT_EQ(checked, 18);
}

}  // namespace
}  // namespace ablation::kernels
