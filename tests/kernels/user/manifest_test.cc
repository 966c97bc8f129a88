// A user kernel's manifest (kernels/user/manifest.h): what it reads, what it refuses and why, the
// variants its knobs name, the launch it plans per problem, and its ladder.
#include "kernels/user/manifest.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace ablation::kernels::user {
namespace {

constexpr const char* kTiled = R"toml(
name = "tiled"
entry = "tiled_gemm"
description = "a tiled bf16 GEMM with cp.async stages and a swizzle"

[contract]
dtype = "bf16"
b_layout = "kn"

[launch]
block = "256"
grid = "ceil(M / BM) * ceil(N / BN)"
smem = "STAGES * (BM + BN) * 32 * 2"

[[condition]]
when = "K % 32 == 0"
says = "K must be a multiple of 32"

[[condition]]
when = "M % BM == 0 && N % BN == 0"
says = "M and N must be multiples of the tile"

[[knob]]
name = "BM"
values = [128]

[[knob]]
name = "BN"
values = [128]

[[knob]]
name = "STAGES"
short = "s"
label = "cp.async stages"
values = [2, 3, 4]

[[knob]]
name = "SWIZZLE"
short = "sw"
values = [0, 1]
)toml";

Manifest Read(const std::string& text) {
  Manifest m;
  const std::string err = ParseManifest(text, "tiled.toml", ManifestLimits{}, &m);
  EXPECT_EQ(err, "");
  return m;
}

std::string Refusal(const std::string& text, ManifestLimits limits = {}) {
  Manifest m;
  return ParseManifest(text, "bad.toml", limits, &m);
}

Problem P(int64_t m, int64_t n, int64_t k) { return Problem{m, n, k, DType::kBF16}; }

TEST(UserManifest, ReadsTheContractTheLaunchAndTheKnobsInOrder) {
  const Manifest m = Read(kTiled);
  EXPECT_EQ(m.name, "tiled");
  EXPECT_EQ(m.entry, "tiled_gemm");
  EXPECT_EQ(m.dtype, DType::kBF16);
  EXPECT_EQ(m.b_layout, BLayout::kKN);
  ASSERT_EQ(m.knobs.size(), 4u);
  EXPECT_EQ(m.knobs[2].name, "STAGES");
  EXPECT_EQ(m.knobs[2].short_name, "s");
  EXPECT_EQ(m.knobs[0].short_name, "bm");  // by default the name in lower case
  EXPECT_EQ(m.knobs[2].values, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(m.conditions.size(), 2u);
}

// A block or shared memory size no problem changes is checked for every knob set when the
// manifest is read (it was accepted at add and refused at the first run).
TEST(UserManifest, AShapeIndependentGeometryIsCheckedForEveryKnobSetAtOnce) {
  const std::string head = "name = \"rowblk\"\nentry = \"k\"\n[contract]\ndtype = \"bf16\"\n";
  const std::string knob = "[[knob]]\nname = \"TM\"\nvalues = [4, 1]\n";
  EXPECT_EQ(Refusal(head + "[launch]\nblock = \"2048 / TM\"\ngrid = \"M\"\n" + knob),
            "bad.toml:6: launch.block: 2048 / TM = 2048 is outside 1 to 1024 (with TM = 1)");
  EXPECT_EQ(
      Refusal(head + "[launch]\nblock = \"256\"\nblock_y = \"2 * TM\"\ngrid = \"M\"\n" + knob),
      "bad.toml:6: launch.block: 2048 threads a block, more than a block may have (1024) "
      "(with TM = 4)");
  EXPECT_NE(
      Refusal(head + "[launch]\nblock = \"128\"\ngrid = \"M\"\nsmem = \"TM * 65536\"\n" + knob)
          .find("launch.smem: TM * 65536 = 262144 is outside 0 to 232448 (with TM = 4)"),
      std::string::npos);
  // A size that depends on the problem is left to each run's plan.
  Manifest m;
  EXPECT_EQ(ParseManifest(head + "[launch]\nblock = \"min(M, 2048) / TM\"\ngrid = \"M\"\n" + knob,
                          "ok.toml", ManifestLimits{}, &m),
            "");
}

TEST(UserManifest, KnobSetsNameTheVariantsCanonicallyAndShort) {
  const Manifest m = Read(kTiled);
  const std::vector<KnobSet> sets = KnobSets(m);
  ASSERT_EQ(sets.size(), 6u);  // 1 x 1 x 3 x 2
  EXPECT_EQ(VariantName(m, sets[0]), "user.tiled.bm=128.bn=128.stages=2.swizzle=0");
  EXPECT_EQ(ShortName(m, sets[5]), "tiled_bm128_bn128_s4_sw1");
  KnobSet back;
  ASSERT_TRUE(ParseVariantName(m, "tiled_bm128_bn128_s3_sw0", &back));
  EXPECT_EQ(back.values, (std::vector<int64_t>{128, 128, 3, 0}));
  ASSERT_TRUE(ParseVariantName(m, "user.tiled.bm=128.bn=128.stages=4.swizzle=1", &back));
  EXPECT_EQ(back.values, (std::vector<int64_t>{128, 128, 4, 1}));
  EXPECT_FALSE(ParseVariantName(m, "user.tiled.bm=128.bn=128.stages=5.swizzle=1", &back));
  // Each registry entry carries its short name, which runs and listings take (Resolve).
  const std::vector<Variant> variants = Variants(std::make_shared<Manifest>(Read(kTiled)));
  EXPECT_EQ(variants[5].name, "user.tiled.bm=128.bn=128.stages=4.swizzle=1");
  EXPECT_EQ(variants[5].short_name, "tiled_bm128_bn128_s4_sw1");
}

TEST(UserManifest, PlansTheLaunchFromTheProblemAndTheKnobs) {
  const Manifest m = Read(kTiled);
  LaunchGeometry g;
  ASSERT_EQ(Plan(m, KnobSet{{128, 128, 3, 1}}, P(4096, 2048, 1024), &g), "");
  EXPECT_EQ(g.block, 256);
  EXPECT_EQ(g.grid_x, 32 * 16);
  EXPECT_EQ(g.grid_y, 1);
  EXPECT_EQ(g.smem_bytes, 3 * 256 * 32 * 2);
}

TEST(UserManifest, ABlockOfTwoOrThreeDimensionsIsPlannedAndBoundedAsAWhole) {
  std::string text = kTiled;
  text.replace(text.find("block = \"256\""), 13, "block = \"16\"\nblock_y = \"BM / 8\"");
  const Manifest m = Read(text);
  LaunchGeometry g;
  ASSERT_EQ(Plan(m, KnobSet{{128, 128, 3, 1}}, P(4096, 2048, 1024), &g), "");
  EXPECT_EQ(g.block, 16);
  EXPECT_EQ(g.block_y, 16);
  EXPECT_EQ(g.block_z, 1);
  // Too many threads for a problem (the block depends on it) is refused at its plan; with no
  // problem in it, when the manifest is read.
  std::string big = kTiled;
  big.replace(big.find("block = \"256\""), 13, "block = \"32\"\nblock_y = \"min(M, BM) / 2\"");
  const Manifest b = Read(big);
  EXPECT_EQ(Plan(b, KnobSet{{128, 128, 3, 1}}, P(4096, 2048, 1024), &g),
            "block: 32 x 64 x 1 = 2048 threads, more than a block may have (1024)");
  std::string fixed = kTiled;
  fixed.replace(fixed.find("block = \"256\""), 13, "block = \"32\"\nblock_y = \"BM / 2\"");
  EXPECT_EQ(Refusal(fixed),
            "bad.toml:11: launch.block: 2048 threads a block, more than a block may have (1024) "
            "(with BM = 128, BN = 128, STAGES = 2, SWIZZLE = 0)");
}

TEST(UserManifest, AShapeTheConditionsRefuseIsRefusedWithTheirSentence) {
  const Manifest m = Read(kTiled);
  LaunchGeometry g;
  EXPECT_EQ(Plan(m, KnobSet{{128, 128, 2, 0}}, P(4096, 4096, 4010), &g),
            "K must be a multiple of 32 (K % 32 == 0)");
  EXPECT_EQ(Plan(m, KnobSet{{128, 128, 2, 0}}, P(4000, 4096, 4096), &g),
            "M and N must be multiples of the tile (M % BM == 0 && N % BN == 0)");
}

TEST(UserManifest, GeometryOutsideItsBoundsIsRefusedNamingTheValue) {
  std::string text = kTiled;
  text.replace(text.find("block = \"256\""), 13, "block = \"min(M, BM) * 16\"");
  const Manifest m = Read(text);
  LaunchGeometry g;
  EXPECT_EQ(Plan(m, KnobSet{{128, 128, 2, 0}}, P(4096, 4096, 4096), &g),
            "block: min(M, BM) * 16 = 2048 is outside 1 to 1024");
  std::string half = kTiled;
  half.replace(half.find("block = \"256\""), 13, "block = \"min(M, BM) / 3\"");
  const Manifest h = Read(half);
  EXPECT_EQ(Plan(h, KnobSet{{128, 128, 2, 0}}, P(4096, 4096, 4096), &g),
            "block: min(M, BM) / 3 = 42.66666667 is not a whole number");
  // The same sizes without M, N or K are refused when the manifest is read.
  std::string fixed = kTiled;
  fixed.replace(fixed.find("block = \"256\""), 13, "block = \"BM / 3\"");
  EXPECT_EQ(Refusal(fixed),
            "bad.toml:11: launch.block: BM / 3 = 42.66666667 is not a whole number "
            "(with BM = 128, BN = 128, STAGES = 2, SWIZZLE = 0)");
}

TEST(UserManifest, TheLadderChangesOneKnobPerRungInTheOrderGiven) {
  const Manifest m = Read(kTiled);
  const std::vector<Rung> ladder = Ladder(m);
  ASSERT_EQ(ladder.size(), 3u);  // BM and BN have one value: constants, not rungs
  EXPECT_EQ(ladder[0].label, "baseline");
  EXPECT_EQ(ladder[0].knobs.values, (std::vector<int64_t>{128, 128, 2, 0}));
  EXPECT_EQ(ladder[1].id, "U1");
  EXPECT_EQ(ladder[1].label, "STAGES 2 -> 4 (cp.async stages)");
  EXPECT_EQ(ladder[1].knobs.values, (std::vector<int64_t>{128, 128, 4, 0}));
  EXPECT_EQ(ladder[2].label, "SWIZZLE 0 -> 1");
  EXPECT_EQ(ladder[2].knobs.values, (std::vector<int64_t>{128, 128, 4, 1}));
}

TEST(UserManifest, VariantsJoinTheRegistryWithTheirKnobsAsNumbers) {
  auto m = std::make_shared<Manifest>(Read(kTiled));
  const std::vector<Variant> variants = Variants(m);
  ASSERT_EQ(variants.size(), 6u);
  const Variant& v = variants[3];
  EXPECT_EQ(v.family, "user.tiled");
  EXPECT_EQ(v.NumberParam("stages"), 3);
  EXPECT_EQ(v.Param("entry"), "tiled_gemm");
  EXPECT_EQ(v.can_implement(P(4096, 4096, 4096)), "");
  EXPECT_EQ(v.can_implement(P(4096, 4096, 100)), "K must be a multiple of 32 (K % 32 == 0)");
  EXPECT_EQ(v.can_implement(Problem{4096, 4096, 4096, DType::kFP16}),
            "user kernel tiled takes bf16, not fp16");
  // Its launch where no problem changes it (block 256; smem STAGES * (BM + BN) * 32 * 2 with
  // STAGES = 3), and at a problem (launch_at).
  EXPECT_EQ(v.threads, 256);
  EXPECT_EQ(v.smem_bytes, 3 * 256 * 64);
  ASSERT_TRUE(v.launch_at);
  EXPECT_EQ(v.launch_at(P(4096, 4096, 4096)).threads, 256);
  EXPECT_EQ(v.launch_at(P(4096, 4096, 4096)).dynamic_smem_bytes, 3 * 256 * 64);
  // A block that depends on the problem is 0 until a problem is named.
  std::string text = kTiled;
  text.replace(text.find("block = \"256\""), 13, "block = \"min(M / 16, 256)\"");
  const std::vector<Variant> shaped = Variants(std::make_shared<Manifest>(Read(text)));
  EXPECT_EQ(shaped[0].threads, 0);
  EXPECT_EQ(shaped[0].launch_at(P(2048, 4096, 4096)).threads, 128);
  EXPECT_EQ(shaped[0].launch_at(P(2048, 4096, 4096)).dynamic_smem_bytes, 2 * 256 * 64);
  Registry registry;
  for (Variant& each : Variants(m)) registry.Add(std::move(each));
  EXPECT_NE(registry.Find("user.tiled.bm=128.bn=128.stages=4.swizzle=1"), nullptr);
}

TEST(UserManifest, KnobsThatOnlyMoveDataPromiseBitIdenticalOutputs) {
  EXPECT_FALSE(Variants(std::make_shared<Manifest>(Read(kTiled)))[0].bit_exact_family);
  std::string text = kTiled;
  text.replace(text.find("b_layout = \"kn\""), 15, "b_layout = \"kn\"\nbit_identical = true");
  for (const Variant& v : Variants(std::make_shared<Manifest>(Read(text))))
    EXPECT_TRUE(v.bit_exact_family) << v.name;
  std::string wrong = kTiled;
  wrong.replace(wrong.find("b_layout = \"kn\""), 15, "b_layout = \"kn\"\nbit_identical = 1");
  EXPECT_NE(Refusal(wrong).find("contract.bit_identical: expected true or false"),
            std::string::npos)
      << Refusal(wrong);
}

TEST(UserManifest, TheArchitectureOfACompileIsTheDevicesWithHoppersOwnSuffix) {
  EXPECT_EQ(CompileArch("9.0"), "sm_90a");  // wgmma and TMA need the arch-specific target
  EXPECT_EQ(CompileArch("8.0"), "sm_80");
  EXPECT_EQ(CompileArch("8.9"), "sm_89");
  for (const char* arch : {"sm_80", "sm_86", "sm_89", "sm_90a", "sm_100a", "sm_120f"})
    EXPECT_TRUE(IsCompileArch(arch)) << arch;
  for (const char* arch :
       {"", "sm_", "sm_9", "sm_090", "sm_90b", "sm_1000", "compute_90", "sm_90a --x", "SM_90"})
    EXPECT_FALSE(IsCompileArch(arch)) << arch;
  EXPECT_EQ(CompileArch("9"), "");
  EXPECT_EQ(CompileArch("x.0"), "");
}

TEST(UserManifest, EveryMistakeIsNamedByItsFileLineAndKey) {
  const struct {
    std::string from, to, says;
  } cases[] = {
      {"name = \"tiled\"", "name = \"Tiled\"", "bad.toml:2: name: 'Tiled': lower-case letters"},
      {"entry = \"tiled_gemm\"", "entry = \"tiled-gemm\"",
       "bad.toml:3: entry: 'tiled-gemm' is not a C identifier"},
      {"dtype = \"bf16\"", "dtype = \"bf17\"",
       "bad.toml:7: contract.dtype: 'bf17' is not bf16, fp16, fp32, tf32 or int8"},
      {"dtype = \"bf16\"", "dtype = \"fp8\"",
       "bad.toml:7: contract.dtype: fp8 is not open to user kernels yet"},
      {"b_layout = \"kn\"", "b_layout = \"mk\"", "bad.toml:8: contract.b_layout: 'mk': kn"},
      {"grid = \"ceil(M / BM) * ceil(N / BN)\"", "grid = \"ceil(M / BM) * \"",
       "bad.toml:12: launch.grid: 'ceil(M / BM) * ': "},
      {"grid = \"ceil(M / BM) * ceil(N / BN)\"", "grid = \"ceil(M / TILE)\"",
       "bad.toml:12: launch.grid: 'ceil(M / TILE)': "},
      {"values = [2, 3, 4]", "values = [2, 3.5]", "knob[2].values: expected whole numbers"},
      {"values = [2, 3, 4]", "values = [2, 2]", "knob[2].values: 2 is given twice"},
      {"name = \"SWIZZLE\"", "name = \"STAGES\"", "knob[3].name: 'STAGES' is given twice"},
      {"name = \"SWIZZLE\"", "name = \"K\"", "knob[3].name: 'K': a macro name"},
      {"says = \"K must be a multiple of 32\"", "sayz = \"x\"",
       "condition[0].sayz: unknown key (known: says, when)"},
      {"[contract]", "[contracts]", "bad.toml:6: contracts: unknown key"},
      {"entry = \"tiled_gemm\"", "entry = \"tiled_gemm\"\nlanguage = \"cuda++\"",
       "bad.toml:4: language: 'cuda++': cuda (CUDA C++, the default), ptx (PTX from any compiler) "
       "or cubin"},
      // PTX has no preprocessor: a knob of two values cannot make two builds of one PTX text.
      {"entry = \"tiled_gemm\"", "entry = \"tiled_gemm\"\nlanguage = \"ptx\"",
       "knob[2].values: STAGES has 3 values, but a PTX source is one build"},
  };
  for (const auto& c : cases) {
    std::string text = kTiled;
    const size_t at = text.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    text.replace(at, c.from.size(), c.to);
    const std::string err = Refusal(text);
    EXPECT_NE(err.find(c.says), std::string::npos) << "got: " << err << "\nwanted: " << c.says;
  }
  EXPECT_NE(Refusal("name = \"x\"\nentry = \"e\"\n").find("contract: missing"), std::string::npos);
  EXPECT_NE(Refusal("name = [").find("bad.toml:1:"), std::string::npos);
}

// A kernel's own contract ([contract] kind = "general", contract.h): the worked softmax's sizes,
// tensors, parameters, reference and work model as read, its launch an expression of its sizes.
std::string Example(const std::string& name) {
  std::ifstream in(std::string(SOURCE_DIR) + "/examples/user-kernels/general/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(UserManifest, AKernelOfItsOwnContractNamesItsSizesTensorsReferenceAndWork) {
  const Manifest m = Read(Example("row_softmax.toml"));
  ASSERT_NE(m.general, nullptr);
  const GeneralContract& c = *m.general;
  EXPECT_EQ(c.sizes, (std::vector<std::string>{"rows", "cols"}));
  EXPECT_EQ(c.default_sizes.at("cols"), 4096);
  ASSERT_EQ(c.tensors.size(), 2u);
  EXPECT_EQ(c.tensors[0].name, "x");
  EXPECT_EQ(c.tensors[0].role, TensorRole::kInput);
  EXPECT_EQ(c.tensors[0].fill.kind, Fill::Kind::kNormal);
  EXPECT_EQ(c.tensors[0].fill.b, 2);
  EXPECT_EQ(c.tensors[1].role, TensorRole::kOutput);
  double cols = 0;
  ASSERT_EQ(c.tensors[0].shape[1]->Evaluate({{"rows", 8}, {"cols", 4096}}, &cols), "");
  EXPECT_EQ(cols, 4096);
  EXPECT_EQ(c.params, (std::vector<std::string>{"x", "y", "rows", "cols"}));
  EXPECT_EQ(c.reference.entry, "row_softmax_ref");
  EXPECT_EQ(c.reference.tolerance.rel, 1e-2);
  EXPECT_FALSE(c.reference.tolerance.bit_identical);
  double bytes = 0;
  ASSERT_EQ(c.work.bytes->Evaluate({{"rows", 8192}, {"cols", 4096}}, &bytes), "");
  EXPECT_EQ(bytes, 4.0 * 8192 * 4096);
  EXPECT_EQ(c.work.peak, OpsPeak::kFp32);
  EXPECT_TRUE(m.grid_x->Uses("rows"));
  // Its variants run its own sizes (rows and cols as M and N), not a GEMM's third one.
  const auto variants = Variants(std::make_shared<Manifest>(Read(Example("row_softmax.toml"))));
  EXPECT_TRUE(variants[0].own_contract);
  EXPECT_EQ(variants[0].can_implement(P(8, 16, 1)), "");
  EXPECT_NE(variants[0].can_implement(P(8, 16, 2)).find("K = 2 names none of them"),
            std::string::npos);
  const Manifest rms = Read(Example("rms_norm.toml"));
  ASSERT_EQ(rms.general->scalars.size(), 1u);
  EXPECT_EQ(rms.general->scalars[0].value, 1e-6);
  EXPECT_EQ(Read(Example("gemm_bias_relu.toml")).general->work.peak, OpsPeak::kTensor);
  EXPECT_NE(Read(Example("row_sum.toml")).general, nullptr);
}

TEST(UserManifest, EveryMistakeOfAnOwnContractIsNamedByLineAndKey) {
  const std::string softmax = Example("row_softmax.toml");
  const struct {
    std::string from, to, says;
  } cases[] = {
      {"kind = \"general\"", "kind = \"generic\"", "contract.kind: 'generic': gemm"},
      {"kind = \"general\"\n", "",
       "contract.sizes: belongs to a kernel's own contract: [contract] kind = \"general\""},
      {"sizes = [\"rows\", \"cols\"]", "sizes = [\"rows\", \"rows\"]",
       "contract.sizes[1]: 'rows' is given twice"},
      {"params = [\"x\", \"y\", \"rows\", \"cols\"]", "params = [\"x\", \"rows\", \"cols\"]",
       "contract.params: tensor 'y' is not among the entry's parameters"},
      {"params = [\"x\", \"y\", \"rows\", \"cols\"]", "params = [\"x\", \"y\", \"n\"]",
       "contract.params[2]: 'n' is not a tensor, size or scalar of the contract"},
      {"shape = [\"rows\", \"cols\"]\nrole = \"input\"",
       "shape = [\"rows\", \"K\"]\nrole = \"input\"", "tensor[0].shape[1]: 'K': "},
      {"role = \"output\"", "role = \"output\"\nfill = { kind = \"normal\" }",
       "tensor[1].fill: an output is not filled"},
      {"role = \"output\"", "role = \"input\"",
       "tensor: a kernel reads an input and writes an output"},
      {"fill = { kind = \"normal\", mean = 0, std = 2 }",
       "fill = { kind = \"uniform\", low = 1, high = 0 }",
       "tensor[0].fill.high: must be above low"},
      {"abs = 1e-3\nrel = 1e-2\n", "", "reference: say how close the outputs must be"},
      {"entry = \"row_softmax_ref\"", "entry = \"row softmax\"",
       "reference.entry: 'row softmax' is not a C name"},
      {"[reference]", "[references]", "references: unknown key"},
      {"bytes = \"2 * 2 * rows * cols\"", "bytes = \"2 * M * N\"", "work.bytes: '2 * M * N': "},
      {"peak = \"fp32\"", "peak = \"fp64\"", "work.peak: 'fp64': fp32"},
      {"grid = \"rows\"", "grid = \"M\"", "launch.grid: 'M': "},
  };
  for (const auto& c : cases) {
    std::string text = softmax;
    const size_t at = text.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    text.replace(at, c.from.size(), c.to);
    const std::string err = Refusal(text);
    EXPECT_NE(err.find(c.says), std::string::npos) << "got: " << err << "\nwanted: " << c.says;
    EXPECT_EQ(err.rfind("bad.toml:", 0), 0u) << err;
  }
  // The parts of an own contract in a GEMM's manifest are named as such.
  EXPECT_NE(Refusal(std::string(kTiled) + "\n[work]\nops = \"1\"\nbytes = \"1\"\n")
                .find("work: belongs to a kernel's own contract: [contract] kind = \"general\""),
            std::string::npos);
}

// The example's [reference] replaced by `with` (a built-in one, or a mistake in one).
std::string WithReference(const std::string& manifest, const std::string& with) {
  std::string text = Example(manifest);
  const size_t from = text.find("[reference]");
  const size_t to = text.find("\n[", from + 1);
  text.replace(from, to - from, with + "\n");
  return text;
}

TEST(UserManifest, ABuiltInReferenceIsBoundToTheContractsTensorsByName) {
  const Manifest softmax = Read(WithReference(
      "row_softmax.toml",
      "[reference]\nbuiltin = \"row_softmax\"\ninput = \"x\"\noutput = \"y\"\nabs = 1e-3\n"));
  const ReferenceSpec& r = softmax.general->reference;
  EXPECT_EQ(r.builtin, BuiltinReference::kRowSoftmax);
  EXPECT_EQ(r.entry, "");
  EXPECT_EQ(r.input, "x");
  EXPECT_EQ(r.output, "y");
  EXPECT_EQ(r.tolerance.abs, 1e-3);
  EXPECT_EQ(BuiltinName(r.builtin), "row_softmax");
  const Manifest norm =
      Read(WithReference("rms_norm.toml",
                         "[reference]\nbuiltin = \"rms_norm\"\ninput = \"x\"\noutput = \"y\"\n"
                         "weight = \"w\"\neps = \"eps\"\nrel = 1e-2\n"));
  EXPECT_EQ(norm.general->reference.eps, 1e-6);  // the scalar's value
  EXPECT_EQ(norm.general->reference.eps_scalar, "eps");
  EXPECT_EQ(Read(WithReference("rms_norm.toml",
                               "[reference]\nbuiltin = \"rms_norm\"\ninput = \"x\"\noutput = "
                               "\"y\"\nweight = \"w\"\neps = 1e-5\nrel = 1e-2\n"))
                .general->reference.eps,
            1e-5);
  // Sizes are int64 unless the manifest says the entry takes int32 (Triton's PTX).
  EXPECT_FALSE(softmax.general->sizes_int32);
  std::string text = Example("row_softmax.toml");
  text.replace(text.find("params ="), 0, "size_type = \"int32\"\n");
  EXPECT_TRUE(Read(text).general->sizes_int32);
}

TEST(UserManifest, EveryMistakeOfABuiltInReferenceIsNamed) {
  const std::string tail = "abs = 1e-3\n";
  const struct {
    std::string manifest, reference, says;
  } cases[] = {
      {"row_softmax.toml", "builtin = \"softmax\"\ninput = \"x\"\noutput = \"y\"",
       "reference.builtin: 'softmax': row_softmax, rms_norm or row_sum"},
      {"row_softmax.toml",
       "entry = \"row_softmax_ref\"\nbuiltin = \"row_softmax\"\ninput = \"x\"\noutput = \"y\"",
       "reference.builtin: a reference is an entry of the source or a built-in one, not both"},
      {"row_softmax.toml",
       "builtin = \"row_softmax\"\ninput = \"x\"\noutput = \"y\"\ngrid = \"rows\"",
       "reference.grid: a built-in reference has its own launch"},
      {"row_softmax.toml", "builtin = \"row_softmax\"\ninput = \"y\"\noutput = \"x\"",
       "reference.input: tensor 'y' is not an input of the contract"},
      {"row_softmax.toml", "builtin = \"row_softmax\"\ninput = \"x\"\noutput = \"z\"",
       "reference.output: 'z' is not a tensor of the contract"},
      {"row_softmax.toml", "builtin = \"row_softmax\"\ninput = \"x\"", "reference.output: missing"},
      {"row_softmax.toml",
       "builtin = \"row_softmax\"\ninput = \"x\"\noutput = \"y\"\nweight = \"x\"",
       "reference.weight: belongs to builtin = \"rms_norm\""},
      {"row_softmax.toml",
       "entry = \"row_softmax_ref\"\nblock = \"1\"\ngrid = \"1\"\ninput = \"x\"",
       "reference.input: binds a built-in reference's tensors"},
      {"rms_norm.toml", "builtin = \"rms_norm\"\ninput = \"x\"\noutput = \"y\"\nweight = \"w\"",
       "reference.eps: missing: a number, or the name of a scalar"},
      {"rms_norm.toml",
       "builtin = \"rms_norm\"\ninput = \"x\"\noutput = \"y\"\nweight = \"w\"\neps = \"epsilon\"",
       "reference.eps: 'epsilon' is not a scalar of the contract"},
      {"rms_norm.toml",
       "builtin = \"rms_norm\"\ninput = \"x\"\noutput = \"y\"\nweight = \"w\"\neps = -1",
       "reference.eps: must be finite and not negative"},
  };
  for (const auto& c : cases) {
    const std::string err =
        Refusal(WithReference(c.manifest, "[reference]\n" + c.reference + "\n" + tail));
    EXPECT_NE(err.find(c.says), std::string::npos) << "got: " << err << "\nwanted: " << c.says;
    EXPECT_EQ(err.rfind("bad.toml:", 0), 0u) << err;
  }
  // A second output would be checked against nothing: the built-in writes one.
  std::string two = WithReference(
      "row_softmax.toml",
      "[reference]\nbuiltin = \"row_softmax\"\ninput = \"x\"\noutput = \"y\"\n" + tail);
  two.replace(
      two.find("[reference]"), 0,
      "[[tensor]]\nname = \"z\"\ndtype = \"fp32\"\nshape = [\"rows\"]\nrole = \"output\"\n\n");
  const std::string params = "params = [\"x\", \"y\",";
  two.replace(two.find(params), params.size(), "params = [\"x\", \"y\", \"z\",");
  EXPECT_NE(Refusal(two).find("the built-in reference writes 'y' alone; 'z' would be checked "
                              "against nothing"),
            std::string::npos)
      << Refusal(two);
  std::string text = Example("row_softmax.toml");
  text.replace(text.find("params ="), 0, "size_type = \"int16\"\n");
  EXPECT_NE(Refusal(text).find("contract.size_type: 'int16': int64"), std::string::npos);
}

TEST(UserManifest, LimitsBoundWhatOneManifestMayAskFor) {
  ManifestLimits small;
  small.max_knob_sets = 4;
  EXPECT_NE(Refusal(kTiled, small).find("knob: 6 knob combinations, more than 4"),
            std::string::npos);
  small = {};
  small.max_values_per_knob = 2;
  EXPECT_NE(Refusal(kTiled, small).find("knob[2].values: more than 2 values"), std::string::npos);
  small = {};
  small.max_expression_chars = 10;
  EXPECT_NE(Refusal(kTiled, small).find("launch.grid: longer than 10 characters"),
            std::string::npos);
}

TEST(UserExpression, RemainderCeilFloorAndComparisonsAsAGeometryMeansThem) {
  std::unique_ptr<Expression> e;
  ASSERT_EQ(
      Expression::Parse("ceil(M / 128) * floor(N / 100) + K % 7 + (M >= 256)", {"M", "N", "K"}, &e),
      "");
  double v = 0;
  ASSERT_EQ(e->Evaluate({{"M", 300}, {"N", 250}, {"K", 30}}, &v), "");
  EXPECT_DOUBLE_EQ(v, 3 * 2 + 2 + 1);
  std::unique_ptr<Expression> zero;
  ASSERT_EQ(Expression::Parse("K % BK", {"K", "BK"}, &zero), "");
  EXPECT_NE(zero->Evaluate({{"K", 64}, {"BK", 0}}, &v).find("not a finite number"),
            std::string::npos);
  EXPECT_EQ(zero->Evaluate({{"K", 64}}, &v), "no value for BK");
}

}  // namespace
}  // namespace ablation::kernels::user
