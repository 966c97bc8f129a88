// The catalog of the simt and tf32 families and of the cuBLAS entries per dtype: names, dtypes,
// parameters and refusals (host-only).
#include <gtest/gtest.h>

#include <string>

#include "kernels/registry.h"

namespace ablation::kernels {
namespace {

Registry Catalog() {
  Registry r;
  RegisterCatalog(r);
  return r;
}

std::string Param(const Variant& v, const std::string& key) {
  for (const auto& [k, val] : v.params)
    if (k == key) return val.Text();
  return "<missing>";
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const char* const kSimt[] = {"simt_tiling", "simt_at", "simt_at_swizzle", "simt_at_swizzle_rw",
                             "simt_at_swizzle_dbf_rw"};
const char* const kSimtKnobs[] = {"a_transposed", "swizzle", "coalesced_c", "double_buffer"};

TEST(LaddersCatalog, SimtLadderNamesAndParams) {
  Registry r = Catalog();
  int count = 0;
  for (const Variant& v : r.All()) count += v.family == "simt" ? 1 : 0;
  EXPECT_EQ(count, 5);
  // Rung i switches on the knobs 0 .. i-1 of kSimtKnobs, so neighbours differ in exactly one.
  for (int i = 0; i < 5; ++i) {
    const Variant* v = r.Find(kSimt[i]);
    ASSERT_NE(v, nullptr) << kSimt[i];
    EXPECT_EQ(v->family, "simt");
    EXPECT_EQ(v->dtypes, std::vector<DType>{DType::kFP32});
    EXPECT_EQ(v->b_layout, BLayout::kKN);
    EXPECT_EQ(v->tile.m, 128);
    EXPECT_EQ(v->tile.n, 128);
    EXPECT_EQ(v->tile.k, 8);
    EXPECT_EQ(v->threads, 256);
    EXPECT_EQ(v->smem_bytes, i == 4 ? 16384 : 8192);
    EXPECT_TRUE(v->bit_exact_family);
    EXPECT_EQ(Param(*v, "thread_tile"), "8x8");
    for (int knob = 0; knob < 4; ++knob) {
      EXPECT_EQ(Param(*v, kSimtKnobs[knob]), knob < i ? "1" : "0") << kSimt[i] << " " << knob;
    }
    EXPECT_TRUE(Contains(v->description, "FFMA")) << v->description;
  }
  EXPECT_TRUE(Contains(r.Find("simt_tiling")->description, "8x8 outputs per thread"));
  EXPECT_TRUE(Contains(r.Find("simt_at")->description, "A transposed"));
  EXPECT_TRUE(Contains(r.Find("simt_at_swizzle")->description, "swizzle"));
  EXPECT_TRUE(Contains(r.Find("simt_at_swizzle_rw")->description, "float4 stores"));
  EXPECT_TRUE(Contains(r.Find("simt_at_swizzle_dbf_rw")->description, "double-buffered"));
}

TEST(LaddersCatalog, SimtRefusals) {
  Registry r = Catalog();
  const Variant& v = *r.Find("simt_at_swizzle_dbf_rw");
  EXPECT_EQ(v.can_implement({4096, 4096, 4096, DType::kFP32}), "");
  EXPECT_EQ(v.can_implement({128, 256, 8, DType::kFP32}), "");
  EXPECT_TRUE(Contains(v.can_implement({4096, 4096, 4096, DType::kTF32}), "dtype must be fp32"));
  EXPECT_TRUE(
      Contains(v.can_implement({100, 128, 8, DType::kFP32}), "m must be a multiple of 128"));
  EXPECT_TRUE(
      Contains(v.can_implement({128, 200, 8, DType::kFP32}), "n must be a multiple of 128"));
  EXPECT_TRUE(Contains(v.can_implement({128, 128, 12, DType::kFP32}), "k must be a multiple of 8"));
  EXPECT_TRUE(Contains(v.can_implement({0, 128, 8, DType::kFP32}), "m must be positive"));
  EXPECT_TRUE(Contains(v.can_implement({128, 128, -8, DType::kFP32}), "k must be positive"));
}

TEST(LaddersCatalog, Tf32PairNamesParamsAndRefusals) {
  Registry r = Catalog();
  int count = 0;
  for (const Variant& v : r.All()) count += v.family == "tf32" ? 1 : 0;
  EXPECT_EQ(count, 2);
  const Variant* sync = r.Find("tf32_sync_swizzle_dbf");
  const Variant* async = r.Find("tf32_cpasync_swizzle_dbf");
  ASSERT_NE(sync, nullptr);
  ASSERT_NE(async, nullptr);
  for (const Variant* v : {sync, async}) {
    EXPECT_EQ(v->family, "tf32");
    EXPECT_EQ(v->dtypes, std::vector<DType>{DType::kTF32});
    EXPECT_EQ(v->tile.m, 128);
    EXPECT_EQ(v->tile.n, 128);
    EXPECT_EQ(v->tile.k, 16);
    EXPECT_EQ(v->threads, 256);
    EXPECT_EQ(v->smem_bytes, 2 * 16384);
    EXPECT_TRUE(v->bit_exact_family);
    EXPECT_EQ(Param(*v, "stages"), "2");
    EXPECT_EQ(Param(*v, "swizzle"), "1");
    EXPECT_TRUE(Contains(v->description, "m16n8k8"));
    EXPECT_EQ(v->can_implement({4096, 4096, 4096, DType::kTF32}), "");
    EXPECT_TRUE(Contains(v->can_implement({4096, 4096, 4096, DType::kFP32}), "dtype must be tf32"));
    EXPECT_TRUE(
        Contains(v->can_implement({128, 128, 8, DType::kTF32}), "k must be a multiple of 16"));
    EXPECT_TRUE(
        Contains(v->can_implement({128, 64, 16, DType::kTF32}), "n must be a multiple of 128"));
    EXPECT_TRUE(
        Contains(v->can_implement({64, 128, 16, DType::kTF32}), "m must be a multiple of 128"));
  }
  EXPECT_EQ(Param(*sync, "load_mode"), "0");
  EXPECT_EQ(Param(*async, "load_mode"), "1");
  EXPECT_TRUE(Contains(async->description, "cp.async"));
  EXPECT_TRUE(Contains(sync->description, "ld.global"));
}

TEST(LaddersCatalog, CublasEntryForEveryDtype) {
  Registry r = Catalog();
  for (DType d : {DType::kBF16, DType::kFP16, DType::kFP32, DType::kTF32, DType::kINT8}) {
    const std::string name = "cublas_" + std::string(ToString(d));
    const Variant* v = r.Find(name);
    ASSERT_NE(v, nullptr) << name;
    EXPECT_EQ(v->family, "cublas");
    EXPECT_EQ(v->dtypes, std::vector<DType>{d}) << name;
    EXPECT_EQ(v->can_implement({4096, 4096, 4096, d}), "") << name;
    EXPECT_TRUE(Contains(
        v->can_implement({4096, 4096, 4096, d == DType::kFP32 ? DType::kTF32 : DType::kFP32}),
        "dtype must be " + std::string(ToString(d))))
        << name;
  }
  EXPECT_EQ(Param(*r.Find("cublas_fp32"), "compute"), "CUBLAS_COMPUTE_32F");
  EXPECT_EQ(Param(*r.Find("cublas_fp32"), "math_mode"), "CUBLAS_DEFAULT_MATH");
  EXPECT_EQ(Param(*r.Find("cublas_tf32"), "compute"), "CUBLAS_COMPUTE_32F_FAST_TF32");
  EXPECT_EQ(Param(*r.Find("cublas_int8"), "compute"), "CUBLAS_COMPUTE_32I");
  EXPECT_EQ(Param(*r.Find("cublas_int8"), "api"), "cublasLtMatmul");
  // IMMA wants "TN": B is handed over N x K.
  EXPECT_EQ(r.Find("cublas_int8")->b_layout, BLayout::kNK);
  EXPECT_EQ(r.Find("cublas_fp32")->b_layout, BLayout::kKN);
}

TEST(LaddersCatalog, CublasRefusals) {
  Registry r = Catalog();
  const Variant& fp32 = *r.Find("cublas_fp32");
  EXPECT_EQ(fp32.can_implement({100, 4, 4, DType::kFP32}), "");
  // cublasGemmEx takes any leading dimension; only int8's IMMA kernels need multiples of 4.
  EXPECT_EQ(fp32.can_implement({128, 6, 8, DType::kFP32}), "");
  EXPECT_EQ(fp32.can_implement({128, 8, 6, DType::kFP32}), "");
  EXPECT_EQ(r.Find("cublas_bf16")->can_implement({128, 12, 8, DType::kBF16}), "");
  EXPECT_TRUE(Contains(fp32.can_implement({0, 8, 8, DType::kFP32}), "m must be positive"));
  const Variant& int8 = *r.Find("cublas_int8");
  EXPECT_EQ(int8.can_implement({7, 4, 4, DType::kINT8}), "");
  EXPECT_TRUE(
      Contains(int8.can_implement({128, 128, 6, DType::kINT8}), "k must be a multiple of 4"));
  EXPECT_TRUE(
      Contains(int8.can_implement({128, 6, 128, DType::kINT8}), "n must be a multiple of 4"));
  EXPECT_TRUE(Contains(int8.can_implement({128, 6, 128, DType::kINT8}), "IMMA"));
  EXPECT_TRUE(Contains(int8.can_implement({0, 128, 128, DType::kINT8}), "m must be positive"));
}

}  // namespace
}  // namespace ablation::kernels
