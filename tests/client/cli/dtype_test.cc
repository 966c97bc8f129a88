// The dtype words (aliases) and the dtype a request gets from the variant names it holds.
#include "client/cli/dtype.h"

#include <gtest/gtest.h>

namespace ablation::client {
namespace {

TEST(DTypeTest, AliasesBecomeTheDaemonsWords) {
  EXPECT_EQ(CanonicalDType("f16"), "fp16");
  EXPECT_EQ(CanonicalDType("FP16"), "fp16");
  EXPECT_EQ(CanonicalDType("i8"), "int8");
  EXPECT_EQ(CanonicalDType("f32"), "fp32");
  for (const char* word : {"bf16", "fp16", "fp32", "tf32", "int8", "fp8"})
    EXPECT_EQ(CanonicalDType(word), word);
  EXPECT_EQ(CanonicalDType("e4m3"), "fp8");
  EXPECT_EQ(CanonicalDType("f8"), "");
  EXPECT_EQ(CanonicalDType(""), "");
}

TEST(DTypeTest, TheTransformerRewritesAndRefuses) {
  CLI::Validator v = DTypeTransformer();
  std::string text = "i8";
  EXPECT_EQ(v(text), "");
  EXPECT_EQ(text, "int8");
  text = "half";
  EXPECT_EQ(v(text),
            "'half' is not a dtype; use bf16, fp16 (f16), fp32 (f32), tf32, int8 (i8) or fp8 "
            "(e4m3)");
}

TEST(DTypeTest, NamesThatCarryADtype) {
  EXPECT_EQ(DTypeNamedBy("cublas_fp16"), "fp16");
  EXPECT_EQ(DTypeNamedBy("cublas_bf16"), "bf16");
  EXPECT_EQ(DTypeNamedBy("cublas_int8"), "int8");
  EXPECT_EQ(DTypeNamedBy("cublas_fp8"), "fp8");
  EXPECT_EQ(DTypeNamedBy("sm90_fp8_f7_epilogue_overlap"), "fp8");
  EXPECT_EQ(DTypeNamedBy("pipe_cpasync_f16_128x128x32"), "fp16");
  EXPECT_EQ(DTypeNamedBy("pipe_ldg_i8_64x64x32"), "int8");
  EXPECT_EQ(DTypeNamedBy("pipe_baseline_f32_64x64x8"), "fp32");
  EXPECT_EQ(DTypeNamedBy("tf32_cpasync_swizzle_dbf"), "tf32");
  // Globs: a literal field names it, a field with a wildcard does not ("*f16*" matches bf16 too).
  EXPECT_EQ(DTypeNamedBy("pipe_*_i8_*"), "int8");
  EXPECT_EQ(DTypeNamedBy("pipe_*f16*"), "");
  EXPECT_EQ(DTypeNamedBy("cublas_*"), "");
  // Families of several dtypes, and short names, name none.
  EXPECT_EQ(DTypeNamedBy("abl_L1_R1_bl0_s3_sw1"), "");
  EXPECT_EQ(DTypeNamedBy("L1_R1_s3"), "");
  EXPECT_EQ(DTypeNamedBy("smem2reg_R1_bl0_sw1"), "");
  EXPECT_EQ(DTypeNamedBy("simt_at_swizzle"), "");
  EXPECT_EQ(DTypeNamedBy("my_f16_to_i8"), "");  // two different: no clear answer
}

TEST(DTypeTest, OneNamedDtypeDecides) {
  DTypeChoice c = ChooseDType("", {"cublas_fp16"});
  EXPECT_EQ(c.error, "");
  EXPECT_EQ(c.dtype, "fp16");
  EXPECT_EQ(c.from, "the name cublas_fp16");
  EXPECT_EQ(InferredDTypeNote(c),
            "note: dtype fp16 was inferred from the name cublas_fp16; --dtype overrides it");
  // Selectors that name none follow: the glob then keeps its fp16 variants.
  c = ChooseDType("", {"abl_L1_*", "cublas_fp16", "L1_R1_s3"});
  EXPECT_EQ(c.dtype, "fp16");
  c = ChooseDType("", {"cublas_fp16", "pipe_*_f16_*"});
  EXPECT_EQ(c.error, "");
  EXPECT_EQ(c.dtype, "fp16");
}

TEST(DTypeTest, NothingNamedLeavesTheDaemonsDefault) {
  DTypeChoice c = ChooseDType("", {"L1_R1_s3", "abl_*"});
  EXPECT_EQ(c.error, "");
  EXPECT_EQ(c.dtype, "");
  EXPECT_EQ(InferredDTypeNote(c), "");
}

TEST(DTypeTest, AGivenDtypeMustAgreeWithTheNames) {
  DTypeChoice c = ChooseDType("fp16", {"cublas_fp16", "L1_R1_s3"});
  EXPECT_EQ(c.error, "");
  EXPECT_EQ(c.dtype, "fp16");
  EXPECT_EQ(c.from, "");  // given, not inferred
  c = ChooseDType("bf16", {"L1_R1_s3", "cublas_fp16"});
  EXPECT_EQ(c.error,
            "--dtype bf16 contradicts the variant cublas_fp16, whose name says fp16; leave "
            "--dtype out to measure fp16, or choose a variant of bf16");
  EXPECT_EQ(ChooseDType("int8", {"pipe_*_i8_*"}).error, "");
}

TEST(DTypeTest, NamesOfDifferentDtypesAreRefused) {
  DTypeChoice c = ChooseDType("", {"cublas_fp16", "L1_R1_s3", "cublas_bf16"});
  EXPECT_EQ(c.error,
            "the variants name different dtypes: cublas_fp16 (fp16), cublas_bf16 (bf16); a run "
            "measures one dtype: run them separately, or as a preset, whose groups may differ in "
            "dtype (see `presets`)");
}

}  // namespace
}  // namespace ablation::client
