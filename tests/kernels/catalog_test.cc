// The catalog: names, parameters and refusals of every registered entry (host-only).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "kernels/ablation/ablation_catalog.h"
#include "kernels/cublas/cublas_lt.h"
#include "kernels/names.h"
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

TEST(Catalog, NumericParametersStayNumbersAndWordsStayWords) {
  Registry r = Catalog();
  const Variant* abl = r.Find("abl_L1_R1_bl0_s3_sw1");
  ASSERT_NE(abl, nullptr);
  EXPECT_EQ(abl->NumberParam("stages"), 3);
  EXPECT_EQ(abl->Param("stages"), "3");
  const Variant* cublas = r.Find("cublas_bf16");
  ASSERT_NE(cublas, nullptr);
  EXPECT_EQ(cublas->Param("api"), "cublasLtMatmul");
  EXPECT_EQ(cublas->Param("pick"), "heuristic");
  EXPECT_FALSE(cublas->NumberParam("api").has_value());  // a word is never read as a number
  EXPECT_FALSE(cublas->NumberParam("stages").has_value());
  EXPECT_EQ(cublas->Param("stages"), "");
  // cuBLAS takes rows that are not whole 16-byte chunks (its own kernels for them).
  EXPECT_EQ(cublas->can_implement({4097, 4095, 4099, DType::kBF16}), "");
  EXPECT_EQ(r.Find("cublas_fp32")->can_implement({7, 9, 13, DType::kFP32}), "");
  EXPECT_NE(cublas->can_implement({0, 8, 8, DType::kBF16}).find("m must be positive"),
            std::string::npos);
  // Every numeric-looking parameter of every family is a number, not digits in a word.
  for (const Variant& v : r.All())
    for (const auto& [key, value] : v.params) {
      const std::string text = value.Text();
      const bool digits =
          !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
      EXPECT_EQ(digits, value.is_number()) << v.name << " " << key << "=" << text;
    }
}

TEST(Catalog, HasAllAblationVariantsAndCublas) {
  Registry r = Catalog();
  int ablation = 0, cublas = 0;
  for (const Variant& v : r.All()) {
    if (v.family == "ablation") ++ablation;
    if (v.family == "cublas") ++cublas;
  }
  EXPECT_EQ(ablation, 128);
  EXPECT_EQ(cublas, 12);  // two per dtype: the heuristic's pick and the best of its candidates
  for (const char* dtype : {"bf16", "fp16", "fp32", "tf32", "int8", "fp8"}) {
    const Variant* heuristic = r.Find(std::string("cublas_") + dtype);
    const Variant* best = r.Find(std::string("cublas_") + dtype + "_best");
    ASSERT_NE(heuristic, nullptr) << dtype;
    ASSERT_NE(best, nullptr) << dtype;
    EXPECT_FALSE(LaunchesChosenAlgo(*heuristic)) << dtype;
    EXPECT_TRUE(LaunchesChosenAlgo(*best)) << dtype;
    EXPECT_EQ(best->dtypes, heuristic->dtypes) << dtype;
    EXPECT_EQ(best->b_layout, heuristic->b_layout) << dtype;
    EXPECT_NE(best->description.find("fastest of the heuristic's"), std::string::npos);
  }
  ASSERT_NE(r.Find("cublas_bf16"), nullptr);
  ASSERT_NE(r.Find("cublas_fp16"), nullptr);
  EXPECT_TRUE(r.Find("cublas_bf16")->Supports(DType::kBF16));
  EXPECT_FALSE(r.Find("cublas_bf16")->Supports(DType::kFP16));
}

TEST(Catalog, AblationNamesAndParams) {
  Registry r = Catalog();
  std::set<std::string> names;
  for (int l = 0; l <= 1; ++l)
    for (int rd = 0; rd <= 1; ++rd)
      for (int b = 0; b <= 1; ++b)
        for (int s = 1; s <= 4; ++s)
          for (int w = 0; w <= 1; ++w)
            for (int rb = 0; rb <= 1; ++rb) {
              std::string name = "abl_L" + std::to_string(l) + "_R" + std::to_string(rd) + "_bl" +
                                 std::to_string(b) + "_s" + std::to_string(s) + "_sw" +
                                 std::to_string(w) + (rb ? "_rb1" : "");
              const Variant* v = r.Find(name);
              ASSERT_NE(v, nullptr) << name;
              names.insert(name);
              EXPECT_EQ(v->family, "ablation");
              EXPECT_EQ(Param(*v, "load_mode"), std::to_string(l));
              EXPECT_EQ(Param(*v, "read_mode"), std::to_string(rd));
              EXPECT_EQ(Param(*v, "b_layout"), std::to_string(b));
              EXPECT_EQ(Param(*v, "stages"), std::to_string(s));
              EXPECT_EQ(Param(*v, "swizzle"), std::to_string(w));
              EXPECT_EQ(Param(*v, "rb"), std::to_string(rb));
              EXPECT_EQ(v->b_layout, b ? BLayout::kNK : BLayout::kKN);
              EXPECT_EQ(v->smem_bytes, s * 16384);
              EXPECT_EQ(v->threads, 256);
              EXPECT_EQ(v->tile.m, 128);
              EXPECT_EQ(v->tile.n, 128);
              EXPECT_EQ(v->tile.k, 32);
              EXPECT_TRUE(v->bit_exact_family);
              EXPECT_TRUE(v->Supports(DType::kBF16));
              EXPECT_TRUE(v->Supports(DType::kFP16));
              EXPECT_FALSE(v->Supports(DType::kFP32));
              EXPECT_FALSE(v->description.empty());
              EXPECT_FALSE(v->launch);  // bound only by the CUDA library
            }
  EXPECT_EQ(names.size(), 128u);
  EXPECT_EQ(r.Find("abl_L1_R1_bl0_s3_sw1_rb0"), nullptr) << "rb0 has no suffix";
}

TEST(Catalog, NamesHelperMatchesRegistryOrder) {
  const auto all = AllAblationConfigs();
  ASSERT_EQ(all.size(), 128u);
  EXPECT_EQ(AblationVariantName(all.front()), "abl_L0_R0_bl0_s1_sw0");
  EXPECT_EQ(AblationVariantName(all.back()), "abl_L1_R1_bl1_s4_sw1_rb1");
}

TEST(Catalog, AblationCanImplementNamesTheField) {
  Registry r = Catalog();
  const Variant* v = r.Find("abl_L1_R1_bl0_s3_sw1");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->can_implement({4096, 4096, 4096, DType::kBF16}), "");
  EXPECT_EQ(v->can_implement({1024, 2048, 768, DType::kFP16}), "");
  auto refusal = [&](Problem p) { return v->can_implement(p); };
  EXPECT_NE(refusal({100, 128, 32, DType::kBF16}).find("m must be a multiple of 128"),
            std::string::npos);
  EXPECT_NE(refusal({128, 200, 32, DType::kBF16}).find("n must be a multiple of 128"),
            std::string::npos);
  EXPECT_NE(refusal({128, 128, 48, DType::kBF16}).find("k must be a multiple of 32"),
            std::string::npos);
  EXPECT_NE(refusal({0, 128, 32, DType::kBF16}).find("m must be positive"), std::string::npos);
  EXPECT_NE(refusal({128, -128, 32, DType::kBF16}).find("n must be positive"), std::string::npos);
  EXPECT_NE(refusal({128, 128, 32, DType::kFP32}).find("dtype"), std::string::npos);
  EXPECT_NE(refusal({65536, 128, 65536, DType::kBF16}).find("m*k"), std::string::npos);
}

TEST(Catalog, CublasCanImplementNamesTheField) {
  Registry r = Catalog();
  const Variant* v = r.Find("cublas_fp16");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->can_implement({100, 104, 24, DType::kFP16}), "");
  EXPECT_NE(v->can_implement({128, 128, 128, DType::kBF16}).find("dtype"), std::string::npos);
  // Rows that are not whole 16-byte chunks run cuBLAS's own kernels for them: not refused.
  EXPECT_EQ(v->can_implement({128, 100, 128, DType::kFP16}), "");
  EXPECT_EQ(v->can_implement({128, 128, 100, DType::kFP16}), "");
  EXPECT_NE(v->can_implement({0, 128, 128, DType::kFP16}).find("m must be positive"),
            std::string::npos);
}

TEST(Registry, DuplicateNameThrowsAndFindWorks) {
  Registry r;
  Variant v;
  v.name = "x";
  r.Add(v);
  EXPECT_THROW(r.Add(v), std::logic_error);
  EXPECT_NE(r.Find("x"), nullptr);
  EXPECT_EQ(r.Find("y"), nullptr);
  r.FindMutable("x")->family = "f";
  EXPECT_EQ(r.Find("x")->family, "f");
}

TEST(Problem, DTypeNamesRoundTrip) {
  EXPECT_EQ(std::size(kAllDTypes), 6u);
  for (DType d : kAllDTypes) {
    auto parsed = ParseDType(ToString(d));
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(*parsed, d);
  }
  EXPECT_EQ(ToString(DType::kBF16), "bf16");
  EXPECT_EQ(ToString(DType::kINT8), "int8");
  EXPECT_FALSE(ParseDType("bfloat16").has_value());
  EXPECT_EQ(ElementBytes(DType::kBF16), 2);
  EXPECT_EQ(ElementBytes(DType::kTF32), 4);
  EXPECT_EQ(ElementBytes(DType::kINT8), 1);
  EXPECT_EQ(OutputBytes(DType::kFP16), 2);
  EXPECT_EQ(OutputBytes(DType::kINT8), 4);
  EXPECT_EQ(OutputBytes(DType::kTF32), 4);
  // fp8: e4m3 A and B, bf16 C.
  EXPECT_EQ(ToString(DType::kFP8), "fp8");
  EXPECT_EQ(ElementBytes(DType::kFP8), 1);
  EXPECT_EQ(OutputBytes(DType::kFP8), 2);
}

}  // namespace
}  // namespace ablation::kernels
