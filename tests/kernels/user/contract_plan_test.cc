// The host side of a run of a kernel of its own contract (kernels/user/contract_plan.h), on the
// worked examples' manifests: sizes, buffers between canaries, the argument block, the
// reference's launch, the output check and the roofline. No GPU.
#include "kernels/user/contract_plan.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace ablation::kernels::user {
namespace {

Manifest Example(const std::string& name) {
  std::ifstream in(std::string(SOURCE_DIR) + "/examples/user-kernels/general/" + name);
  std::stringstream s;
  s << in.rdbuf();
  Manifest m;
  EXPECT_EQ(ParseManifest(s.str(), name, ManifestLimits{}, &m), "");
  return m;
}

std::vector<uint8_t> Bf16(const std::vector<float>& values) {
  std::vector<uint8_t> out(values.size() * 2);
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], 4);
    const uint16_t h = uint16_t(bits >> 16);  // exact for the values used here
    std::memcpy(out.data() + 2 * i, &h, 2);
  }
  return out;
}

TEST(ContractPlan, SizesAreNamedGivenOnceWholeAndDefaultedFromTheManifest) {
  const Manifest m = Example("row_softmax.toml");
  Sizes s;
  ASSERT_EQ(ParseSizes("rows=128,cols=1000", *m.general, &s), "");
  EXPECT_EQ(s.at("rows"), 128);
  EXPECT_EQ(FormatSizes(*m.general, s), "rows=128,cols=1000");
  ASSERT_EQ(ParseSizes("cols=64", *m.general, &s), "");
  EXPECT_EQ(s.at("rows"), 8192);  // default_sizes
  EXPECT_EQ(ParseSizes("row=1", *m.general, &s),
            "size 'row=1': expected NAME=VALUE with NAME one of rows, cols");
  EXPECT_EQ(ParseSizes("rows=1,rows=2", *m.general, &s), "size rows is given twice");
  EXPECT_EQ(ParseSizes("rows=1.5", *m.general, &s),
            "size rows = '1.5': expected a whole number from 1 to 2^40");
  EXPECT_EQ(ParseSizes("rows=0", *m.general, &s),
            "size rows = '0': expected a whole number from 1 to 2^40");
  GeneralContract no_defaults;
  no_defaults.sizes = {"m"};
  EXPECT_EQ(ParseSizes("", no_defaults, &s),
            "size m is not given and the manifest has no default for it");
}

// Every tensor 256-byte aligned with at least 256 canary bytes before and after it, and a bound.
TEST(ContractPlan, BuffersLieBetweenCanariesAlignedAndBounded) {
  const Manifest m = Example("rms_norm.toml");
  Sizes s;
  ASSERT_EQ(ParseSizes("rows=3,cols=100", *m.general, &s), "");
  BufferPlan plan;
  ASSERT_EQ(PlanBuffers(*m.general, s, int64_t(1) << 30, &plan), "");
  ASSERT_EQ(plan.tensors.size(), 3u);
  EXPECT_EQ(plan.tensors[0].bytes, 3 * 100 * 2);  // x
  EXPECT_EQ(plan.tensors[1].bytes, 100 * 2);      // w
  int64_t end = 0;
  for (const TensorBuffer& b : plan.tensors) {
    EXPECT_EQ(b.offset % 256, 0) << b.name;
    EXPECT_GE(b.offset - end, kCanaryBytes) << b.name;
    end = b.offset + b.bytes;
  }
  EXPECT_GE(plan.arena_bytes - end, kCanaryBytes);
  EXPECT_NE(CanaryByte(0), CanaryByte(1));
  const std::string why = PlanBuffers(*m.general, s, 1024, &plan);
  EXPECT_NE(why.find("the tensors at rows=3,cols=100 need more than 0 MiB"), std::string::npos)
      << why;
}

// The argument block cuLaunchKernel reads: rms_norm(x, w, y, rows, cols, eps).
TEST(ContractPlan, ArgumentsArePackedInTheEntrysOrderAtTheirAlignment) {
  const Manifest m = Example("rms_norm.toml");
  Sizes s;
  ASSERT_EQ(ParseSizes("rows=3,cols=100", *m.general, &s), "");
  BufferPlan plan;
  ASSERT_EQ(PlanBuffers(*m.general, s, int64_t(1) << 30, &plan), "");
  const uint64_t base = 0x7f0000000000ull;
  const ArgumentBlock args = PackArguments(*m.general, s, plan, base);
  ASSERT_EQ(args.offsets, (std::vector<size_t>{0, 8, 16, 24, 32, 40}));
  ASSERT_EQ(args.bytes.size(), 44u);
  uint64_t y = 0;
  std::memcpy(&y, args.bytes.data() + 16, 8);
  EXPECT_EQ(y, base + uint64_t(plan.tensors[2].offset));
  int64_t cols = 0;
  std::memcpy(&cols, args.bytes.data() + 32, 8);
  EXPECT_EQ(cols, 100);
  float eps = 0;
  std::memcpy(&eps, args.bytes.data() + 40, 4);
  EXPECT_EQ(eps, 1e-6f);
  LaunchGeometry g;
  ASSERT_EQ(PlanReference(*m.general, s, &g), "");
  EXPECT_EQ(g.block, 128);
  EXPECT_EQ(g.grid_x, 1);
}

// Within abs + rel * |ref| element by element; the first element outside is named by its index;
// a NaN (an output never written reads as the poison) fails; bit_identical compares bits.
TEST(ContractPlan, AnOutputOutsideTheToleranceIsNamedByItsIndex) {
  const Manifest m = Example("row_softmax.toml");
  Sizes s = {{"rows", 2}, {"cols", 3}};
  const TensorSpec& y = m.general->tensors[1];
  const Tolerance& tol = m.general->reference.tolerance;  // abs 1e-3, rel 1e-2
  const auto ref = Bf16({0.5f, 0.25f, 0.25f, 1.f, 0.f, 0.f});
  EXPECT_EQ(CompareOutput(y, s, DType::kBF16, Bf16({0.5f, 0.25f, 0.25f, 1.f, 0.f, 0.f}), ref, tol),
            "");
  EXPECT_EQ(CompareOutput(y, s, DType::kBF16, Bf16({0.5f, 0.25f, 0.25f, 1.f, 0.5f, 0.f}), ref, tol),
            "y[1][1] = 0.5, the reference 0 (tolerance 0.001)");
  EXPECT_NE(CompareOutput(y, s, DType::kBF16, Bf16({0.5f, 0.25f, 0.25f, 1.f, 0.f, std::nanf("")}),
                          ref, tol)
                .find("y[1][2] = nan"),
            std::string::npos);
  Tolerance exact;
  exact.bit_identical = true;
  EXPECT_EQ(
      CompareOutput(y, s, DType::kBF16, Bf16({0.5f, 0.25f, 0.25f, 1.f, 0.f, -0.f}), ref, exact),
      "y[1][2] = -0, the reference 0 (bit for bit)");
  EXPECT_NE(CompareOutput(y, s, DType::kBF16, Bf16({0.5f}), ref, tol).find("bytes to compare"),
            std::string::npos);
}

// The roofline: achieved bytes/s and ops/s from the work model, their shares of the roofs, and
// which roof the kernel's intensity puts it under.
TEST(ContractPlan, TheRooflineNamesTheBindingRoof) {
  const Manifest softmax = Example("row_softmax.toml");
  Sizes s = {{"rows", 8192}, {"cols", 4096}};
  Roofline r;
  ASSERT_EQ(ComputeRoofline(*softmax.general, s, 50e-6, 60e12, 4.0e12, &r), "");
  EXPECT_DOUBLE_EQ(r.bytes, 4.0 * 8192 * 4096);
  EXPECT_NEAR(r.bytes_per_second, 2.684e12, 1e9);
  EXPECT_NEAR(r.memory_share, 0.671, 1e-3);
  EXPECT_DOUBLE_EQ(r.intensity, 1.25);
  EXPECT_EQ(r.bound, "memory");
  const Manifest gemm = Example("gemm_bias_relu.toml");
  s = {{"m", 4096}, {"n", 4096}, {"k", 4096}};
  ASSERT_EQ(ComputeRoofline(*gemm.general, s, 1e-3, 800e12, 4.0e12, &r), "");
  EXPECT_EQ(r.bound, "compute");
  EXPECT_NEAR(r.compute_share, 2.0 * 4096 * 4096 * 4096 / 1e-3 / 800e12, 1e-3);
  EXPECT_EQ(ComputeRoofline(*gemm.general, s, 0, 1, 1, &r), "a launch of no time has no figures");
}

}  // namespace
// A run's problem keeps the sizes as M, N, K in the contract's order, the rest 1; a problem is
// read back into sizes, and one with an M, N or K the contract has no size for is refused.
TEST(ContractPlan, SizesTravelAsTheProblemsMNKInTheContractsOrder) {
  const Manifest softmax = Example("row_softmax.toml");
  const Problem p = ProblemOfSizes(*softmax.general, DType::kBF16, {{"rows", 64}, {"cols", 4096}});
  EXPECT_EQ(p.m, 64);
  EXPECT_EQ(p.n, 4096);
  EXPECT_EQ(p.k, 1);
  Sizes back;
  ASSERT_EQ(SizesOfProblem(*softmax.general, p, &back), "");
  EXPECT_EQ(FormatSizes(*softmax.general, back), "rows=64,cols=4096");
  EXPECT_EQ(SizesOfProblem(*softmax.general, Problem{64, 4096, 2, DType::kBF16}, &back),
            "the contract has 2 sizes; the problem's K = 2 names none of them (give the sizes "
            "with --size)");
  const Manifest gemm = Example("gemm_bias_relu.toml");
  const Problem g =
      ProblemOfSizes(*gemm.general, DType::kBF16, {{"m", 256}, {"n", 512}, {"k", 64}});
  EXPECT_EQ(g.m * 1000000 + g.n * 1000 + g.k, 256 * 1000000 + 512 * 1000 + 64);
  double ops = 0, bytes = 0;
  ASSERT_EQ(WorkAt(*softmax.general, {{"rows", 8}, {"cols", 16}}, &ops, &bytes), "");
  EXPECT_EQ(ops, 5.0 * 8 * 16);
  EXPECT_EQ(bytes, 4.0 * 8 * 16);
}

// A kernel of its own contract's variants: marked as such, their work model from the manifest,
// and a problem they cannot run refused by name (its sizes, its launch's conditions).
TEST(ContractPlan, AKernelsVariantsCarryItsWorkModelAndRefuseWhatTheyCannotRun) {
  auto m = std::make_shared<Manifest>(Example("row_softmax.toml"));
  const std::vector<Variant> variants = Variants(m, 0, false);
  ASSERT_EQ(variants.size(), 2u);
  const Variant& v = variants[0];
  EXPECT_TRUE(v.own_contract);
  const WorkModel w = v.Work(Problem{1024, 4096, 1, DType::kBF16});
  EXPECT_EQ(w.flops, 5.0 * 1024 * 4096);
  EXPECT_EQ(w.memory_bytes, 4.0 * 1024 * 4096);
  EXPECT_TRUE(w.fp32_peak);
  EXPECT_EQ(v.can_implement(Problem{1024, 4096, 1, DType::kBF16}), "");
  EXPECT_EQ(v.can_implement(Problem{1024, 4096, 1, DType::kFP16}),
            "user kernel softmax takes bf16, not fp16");
  EXPECT_NE(v.can_implement(Problem{1024, 4096, 3, DType::kBF16}).find("K = 3 names none"),
            std::string::npos);
  EXPECT_NE(v.can_implement(Problem{int64_t(1) << 32, 1, 1, DType::kBF16})
                .find("rows must be at most 2^31 - 1"),
            std::string::npos);
  EXPECT_NE(v.can_implement(Problem{int64_t(1) << 20, int64_t(1) << 20, 1, DType::kBF16})
                .find("MiB with their canaries"),
            std::string::npos);
}

// With statistics the comparison counts every element outside the tolerance and the largest
// errors, and still names the first.
TEST(ContractPlan, TheComparisonCountsEveryElementOutside) {
  const Manifest m = Example("row_softmax.toml");
  const TensorSpec& y = m.general->tensors[1];
  const auto ref = Bf16({0.5f, 0.25f, 0.25f, 1.f, 0.f, 0.f});
  OutputStats stats;
  EXPECT_EQ(CompareOutput(y, {{"rows", 2}, {"cols", 3}}, DType::kBF16,
                          Bf16({0.5f, 0.5f, 0.25f, 1.f, 0.f, 0.25f}), ref,
                          m.general->reference.tolerance, &stats),
            "y[0][1] = 0.5, the reference 0.25 (tolerance 0.0035)");
  EXPECT_EQ(stats.elements, 6);
  EXPECT_EQ(stats.mismatches, 2);
  EXPECT_DOUBLE_EQ(stats.max_abs_error, 0.25);
  EXPECT_DOUBLE_EQ(stats.max_rel_error, 1.0);
}

// What a launch must not write (its inputs, the canaries, the gaps) is compared byte by byte:
// a write one element past an output, or into an input, is named where it landed; an output's
// own bytes may change. The poison left in an output is counted element by element.
TEST(ContractPlan, AWriteOutsideTheOutputsIsNamedWhereItLanded) {
  const Manifest m = Example("row_softmax.toml");
  BufferPlan plan;
  ASSERT_EQ(PlanBuffers(*m.general, {{"rows", 4}, {"cols", 8}}, 1 << 20, &plan), "");
  std::vector<uint8_t> before(size_t(plan.arena_bytes));
  for (int64_t i = 0; i < plan.arena_bytes; ++i) before[size_t(i)] = CanaryByte(i);
  const TensorBuffer &x = plan.tensors[0], &y = plan.tensors[1];
  std::vector<uint8_t> after = before;
  for (int64_t i = 0; i < y.bytes; ++i) after[size_t(y.offset + i)] ^= 0x11;  // y written
  EXPECT_EQ(ForeignWrites(*m.general, plan, before, after), "");
  std::vector<uint8_t> past = after;
  past[size_t(y.offset + y.bytes)] ^= 0x5A;
  past[size_t(y.offset + y.bytes + 1)] ^= 0x5A;
  EXPECT_EQ(ForeignWrites(*m.general, plan, before, past),
            "a write outside its outputs: 2 bytes changed, the first at byte 1 past the end of y");
  std::vector<uint8_t> into = after;
  into[size_t(x.offset + 3)] ^= 0x01;
  EXPECT_EQ(ForeignWrites(*m.general, plan, before, into),
            "a write outside its outputs: 1 bytes changed, the first in its input x");
  std::vector<uint8_t> ahead = after;
  ahead[size_t(x.offset - 2)] ^= 0x01;
  EXPECT_EQ(ForeignWrites(*m.general, plan, before, ahead),
            "a write outside its outputs: 1 bytes changed, the first at byte 2 before x");
  EXPECT_EQ(Unwritten({0xFF, 0xFF, 0x00, 0xFF, 0xFF, 0xFF}, 2), 2);
}

namespace {

// A manifest of the examples with its [reference] replaced by a built-in one.
Manifest WithBuiltin(const std::string& name, const std::string& reference) {
  std::ifstream in(std::string(SOURCE_DIR) + "/examples/user-kernels/general/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const size_t from = text.find("[reference]");
  text.replace(from, text.find("\n[", from + 1) - from, "[reference]\n" + reference + "\n");
  Manifest m;
  EXPECT_EQ(ParseManifest(text, name, ManifestLimits{}, &m), "");
  return m;
}

// A built-in reference reads the input's last dimension as a row and checks that the output
// (and rms_norm's weight) fit it at every size, before anything runs.
TEST(ContractPlan, ABuiltInReferenceFitsItsTensorsAtTheSizesOrSaysWhyNot) {
  const Manifest norm = WithBuiltin("rms_norm.toml",
                                    "builtin = \"rms_norm\"\ninput = \"x\"\noutput = \"y\"\nweight "
                                    "= \"w\"\neps = 1e-6\nrel = 0.01");
  Sizes s;
  ASSERT_EQ(ParseSizes("rows=96,cols=2048", *norm.general, &s), "");
  BuiltinPlan b;
  ASSERT_EQ(PlanBuiltinReference(*norm.general, s, &b), "");
  EXPECT_EQ(b.rows, 96);
  EXPECT_EQ(b.cols, 2048);
  EXPECT_EQ(b.input, 0);
  EXPECT_EQ(b.weight, 1);
  EXPECT_EQ(b.output, 2);
  LaunchGeometry g;
  EXPECT_EQ(PlanReference(*norm.general, s, &g), "");
  EXPECT_EQ(ReferenceName(*norm.general), "the built-in rms_norm");
  // A row sum of a softmax's contract: y holds rows x cols values, not one per row.
  const Manifest sum = WithBuiltin(
      "row_softmax.toml", "builtin = \"row_sum\"\ninput = \"x\"\noutput = \"y\"\nabs = 0.1");
  ASSERT_EQ(ParseSizes("rows=4,cols=8", *sum.general, &s), "");
  EXPECT_EQ(PlanReference(*sum.general, s, &g),
            "row_sum writes one value per row of x (4); y holds 32 at rows=4,cols=8");
  // A softmax over a row sum's contract: x is rows x cols, s only rows.
  const Manifest wrong = WithBuiltin(
      "row_sum.toml", "builtin = \"row_softmax\"\ninput = \"x\"\noutput = \"s\"\nabs = 0.1");
  ASSERT_EQ(ParseSizes("rows=4,cols=8", *wrong.general, &s), "");
  EXPECT_EQ(PlanReference(*wrong.general, s, &g),
            "row_softmax writes s in the shape of x; they differ at rows=4,cols=8");
  const Manifest right = WithBuiltin(
      "row_sum.toml", "builtin = \"row_sum\"\ninput = \"x\"\noutput = \"s\"\nabs = 0.1");
  EXPECT_EQ(PlanBuiltinReference(*right.general, s, &b), "");
  EXPECT_EQ(b.rows, 4);
  EXPECT_EQ(b.weight, -1);
}

// The entry's parameters as its code declares them against the contract's, so that a manifest
// naming other parameters than the kernel takes never launches it with a wrong argument block.
TEST(ContractPlan, TheEntrysParametersAreCheckedAgainstTheContractsAndInt32SizesPackedAsInt32) {
  const Manifest m = Example("rms_norm.toml");  // x, w, y, rows, cols, eps (fp32)
  const GeneralContract& c = *m.general;
  EXPECT_EQ(ParameterBytes(c), (std::vector<size_t>{8, 8, 8, 8, 8, 4}));
  EXPECT_EQ(CheckEntryParameters(c, "rms_norm", {8, 8, 8, 8, 8, 4}), "");
  EXPECT_EQ(CheckEntryParameters(c, "rms_norm", {8, 8, 8, 8, 8}),
            "the entry rms_norm takes 5 parameters; contract.params names 6");
  EXPECT_EQ(CheckEntryParameters(c, "rms_norm", {8, 8, 8, 4, 8, 4}),
            "the entry rms_norm's parameter 3 ('rows') is 4 bytes; the contract passes 8 (an "
            "int32 size: contract.size_type = \"int32\")");
  // Through the manifest: its own contract's check, or the GEMM contract's fixed parameters.
  EXPECT_EQ(CheckEntryParameters(m, "rms_norm_ref", {8, 8, 8, 8, 8}),
            "the entry rms_norm_ref takes 5 parameters; contract.params names 6");
  Manifest gemm;
  EXPECT_EQ(CheckEntryParameters(gemm, "tiled", kGemmParameterBytes), "");
  EXPECT_EQ(CheckEntryParameters(gemm, "tiled", {8, 8, 8, 8, 8, 8}),
            "the entry tiled takes 6 parameters unlike the GEMM contract's (const A*, const B*, "
            "C*, int M, int N, int K): of 8, 8, 8, 8, 8, 8 bytes, where the contract passes 8, 8, "
            "8, 4, 4, 4");
  GeneralContract narrow;
  narrow.sizes = {"rows", "cols"};
  narrow.params = {"rows", "cols"};
  narrow.sizes_int32 = true;
  EXPECT_EQ(ParameterBytes(narrow), (std::vector<size_t>{4, 4}));
  const ArgumentBlock args = PackArguments(narrow, {{"rows", 7}, {"cols", 300}}, BufferPlan{}, 0);
  ASSERT_EQ(args.offsets, (std::vector<size_t>{0, 4}));
  int32_t cols = 0;
  std::memcpy(&cols, args.bytes.data() + 4, 4);
  EXPECT_EQ(cols, 300);
  // A size an int32 cannot hold is refused, not cut.
  BufferPlan plan;
  EXPECT_EQ(PlanBuffers(narrow, {{"rows", int64_t(1) << 31}, {"cols", 1}}, 1 << 30, &plan),
            "rows = 2147483648: the entry takes its sizes as int32 (contract.size_type), at most "
            "2147483647");
}

// PTX declares each parameter's type: the bytes of an entry (Triton's pointers with .ptr
// qualifiers, an aligned struct by value), and an entry whose name another's begins with.
TEST(ContractPlan, APtxEntrysParametersAreReadFromItsDeclaration) {
  const std::string ptx =
      ".version 8.4\n.target sm_90a\n"
      ".visible .entry soft_ref(\n\t.param .u64 soft_ref_param_0\n)\n{ ret; }\n"
      ".visible .entry soft(\n"
      "\t.param .u64 .ptr .global .align 1 soft_param_0,\n"
      "\t.param .u64 .ptr .global .align 1 soft_param_1,\n"
      "\t.param .u32 soft_param_2,\n\t.param .f32 soft_param_3,\n"
      "\t.param .align 8 .b8 soft_param_4[16]\n)\n.reqntid 256\n{ ret; }\n";
  std::vector<size_t> bytes;
  ASSERT_EQ(PtxEntryParameterBytes(ptx, "soft", &bytes), "");
  EXPECT_EQ(bytes, (std::vector<size_t>{8, 8, 4, 4, 16}));
  ASSERT_EQ(PtxEntryParameterBytes(ptx, "soft_ref", &bytes), "");
  EXPECT_EQ(bytes, (std::vector<size_t>{8}));
  EXPECT_EQ(PtxEntryParameterBytes(ptx, "sof", &bytes), "the PTX has no .entry sof");
  std::ifstream in(std::string(SOURCE_DIR) + "/examples/user-kernels/ptx/tiled_gemm_u4.ptx");
  std::stringstream tiled;
  tiled << in.rdbuf();
  ASSERT_EQ(PtxEntryParameterBytes(tiled.str(), "tiled_gemm", &bytes), "");
  EXPECT_EQ(bytes, (std::vector<size_t>{8, 8, 8, 4, 4, 4}));
}

}  // namespace

}  // namespace ablation::kernels::user
