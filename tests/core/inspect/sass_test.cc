#include "server/core/inspect/sass.h"
#include "server/core/inspect/sass_inspect.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace ablation::core {
namespace {

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(SASS_TESTDATA_DIR) + "/" + name);
  EXPECT_TRUE(in.good()) << "missing fixture " << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

SassFunction OnlyFunction(const std::string& listing) {
  auto fs = ParseSass(listing);
  EXPECT_EQ(fs.size(), 1u);
  return fs.empty() ? SassFunction{} : fs.front();
}

bool HasLine(const SassVerdict& v, const std::string& marker, int64_t offset) {
  for (const auto& l : v.excerpt)
    if (l.marker == marker && l.offset == offset) return true;
  return false;
}

TEST(SassTest, ClassifiesOpcodes) {
  EXPECT_EQ(ClassifyOpcode("LDG.E.128.CONSTANT"), SassClass::kGlobalLoad);
  EXPECT_EQ(ClassifyOpcode("LDGSTS.E.BYPASS.LTC128B.128"), SassClass::kGlobalLoad);
  EXPECT_EQ(ClassifyOpcode("LDGDEPBAR"), SassClass::kAsyncWait);
  EXPECT_EQ(ClassifyOpcode("DEPBAR.LE"), SassClass::kAsyncWait);
  EXPECT_EQ(ClassifyOpcode("HMMA.16816.F32"), SassClass::kTensorCore);
  EXPECT_EQ(ClassifyOpcode("IMMA.16832.S8.S8"), SassClass::kTensorCore);
  EXPECT_EQ(ClassifyOpcode("FFMA"), SassClass::kFfma);
  EXPECT_EQ(ClassifyOpcode("BAR.SYNC.DEFER_BLOCKING"), SassClass::kBarrier);
  EXPECT_EQ(ClassifyOpcode("BAR.ARV"), SassClass::kOther);
  EXPECT_EQ(ClassifyOpcode("LDL.64"), SassClass::kLocal);
  EXPECT_EQ(ClassifyOpcode("STL.128"), SassClass::kLocal);
  EXPECT_EQ(ClassifyOpcode("LDSM.16.MT88.2"), SassClass::kSharedLoad);
  EXPECT_EQ(ClassifyOpcode("STS.128"), SassClass::kSharedStore);
  EXPECT_EQ(ClassifyOpcode("BRA"), SassClass::kBranch);
  EXPECT_EQ(ClassifyOpcode("IMAD.WIDE"), SassClass::kOther);
}

TEST(SassTest, ParsesCuobjdumpLines) {
  auto fs = ParseSass(
      "\n\tcode for sm_90\n\t\tFunction : _Z1kv\n"
      "\t.headerflags    @\"EF_CUDA_SM90 EF_CUDA_PTX_SM(EF_CUDA_SM90)\"\n"
      "        /*0000*/                   LDC R1, c[0x0][0x28] ;      /* 0x00000a00ff017b82 */\n"
      "                                                               /* 0x000ff00000000800 */\n"
      "        /*0010*/              @!P0 BRA 0xdc0 ;                 /* 0x0000000800ac8947 */\n"
      "        /*0020*/                   EXIT ;                      /* 0x000000000000794d */\n"
      "        /*0030*/                   BRA 0x30;                   /* 0xfffffffc00fc7947 */\n");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].name, "_Z1kv");
  EXPECT_EQ(fs[0].arch, "sm_90");
  ASSERT_EQ(fs[0].instructions.size(), 4u);
  const auto& bra = fs[0].instructions[1];
  EXPECT_EQ(bra.offset, 0x10);
  EXPECT_EQ(bra.predicate, "@!P0");
  EXPECT_EQ(bra.mnemonic, "BRA");
  EXPECT_EQ(bra.target, 0xdc0);
  EXPECT_EQ(bra.text, "@!P0 BRA 0xdc0");
  EXPECT_EQ(fs[0].instructions[2].cls, SassClass::kExit);
  EXPECT_EQ(fs[0].instructions[3].target, 0x30);
  EXPECT_TRUE(FindLoops(fs[0]).empty());  // the trap "BRA 0x30" at 0x30 is not a loop
}

TEST(SassTest, SynthesizedFfmaLoopWithSpills) {
  auto f = OnlyFunction(
      "Function : simt\n"
      "/*0000*/ MOV R1, R2 ;\n"
      "/*0010*/ LDG.E R4, [R2.64] ;\n"
      "/*0020*/ FFMA R5, R6, R7, R5 ;\n"
      "/*0030*/ FFMA R8, R6, R7, R8 ;\n"
      "/*0040*/ STL [R1], R5 ;\n"
      "/*0050*/ BAR.SYNC.DEFER_BLOCKING 0x0 ;\n"
      "/*0060*/ STS [R9], R4 ;\n"
      "/*0070*/ BAR.SYNC.DEFER_BLOCKING 0x0 ;\n"
      "/*0080*/ @P0 BRA 0x10 ;\n"
      "/*0090*/ LDL R5, [R1] ;\n"
      "/*00a0*/ EXIT ;\n");
  SassVerdict v = InspectFunction(f);
  ASSERT_TRUE(v.loop_found);
  EXPECT_EQ(v.loop_start, 0x10);
  EXPECT_EQ(v.loop_end, 0x80);
  EXPECT_EQ(v.compute_opcode, "FFMA");
  EXPECT_EQ(v.compute_per_iteration, 2);
  EXPECT_EQ(v.load_opcode, "LDG");
  EXPECT_TRUE(v.overlap);  // the LDG-register pipeline's pattern: LDG, compute, sync, STS, sync
  EXPECT_TRUE(v.barrier_after_compute);
  EXPECT_EQ(v.barrier_after, 0x50);
  EXPECT_EQ(v.local_loads, 1);
  EXPECT_EQ(v.local_stores, 1);
  EXPECT_EQ(v.local_in_loop, 1);
  EXPECT_TRUE(HasLine(v, "LOCAL!", 0x40));
  EXPECT_TRUE(HasLine(v, "LOOP^", 0x80));
}

TEST(SassTest, LoadsAfterComputeWrapAroundTheLoop) {
  // Rotated loop: the load of the next tile sits after the compute; it still reaches the next
  // iteration's compute with no barrier (the back branch leads to the head).
  auto f = OnlyFunction(
      "/*0000*/ HMMA.16816.F32 R0, R4, R8, R0 ;\n"
      "/*0010*/ BAR.SYNC.DEFER_BLOCKING 0x0 ;\n"
      "/*0020*/ LDGSTS.E.BYPASS.LTC128B.128 [R3], [R4.64] ;\n"
      "/*0030*/ @P0 BRA 0x0 ;\n");
  SassVerdict v = InspectFunction(f);
  ASSERT_TRUE(v.loop_found);
  EXPECT_TRUE(v.overlap);
  EXPECT_EQ(v.first_overlap_load, 0x20);
  EXPECT_EQ(v.overlap_compute, 0x0);
  EXPECT_TRUE(v.barrier_after_compute);
}

TEST(SassTest, ABarrierBeforeTheRefillIsEnoughWhenTheLastStepComputesFromRegisters) {
  // The sm90 M1 order: the last k-step's fragments are loaded, then wait, barrier, that step's
  // mma interleaved with the refill, then the next stage's first fragments. No barrier follows
  // the last HMMA, but none is needed: every LDGSTS is fenced from the shared loads before it.
  const char* fenced =
      "/*0000*/ LDSM.16.M88.4 R4, [R2] ;\n"
      "/*0010*/ HMMA.16816.F32.BF16 R8, R4, R6, R8 ;\n"
      "/*0020*/ LDSM.16.M88.4 R5, [R2+0x800] ;\n"
      "/*0030*/ DEPBAR.LE SB0, 0x1 ;\n"
      "/*0040*/ BAR.SYNC.DEFER_BLOCKING 0x0 ;\n"
      "/*0050*/ HMMA.16816.F32.BF16 R12, R5, R6, R12 ;\n"
      "/*0060*/ LDGSTS.E.BYPASS.LTC128B.128 [R3], [R10.64] ;\n"
      "/*0070*/ HMMA.16816.F32.BF16 R16, R5, R6, R16 ;\n"
      "/*0080*/ LDGSTS.E.BYPASS.LTC128B.128 [R3+0x4000], [R14.64] ;\n"
      "/*0090*/ LDGDEPBAR ;\n"
      "/*00a0*/ LDSM.16.M88.4 R4, [R20] ;\n"
      "/*00b0*/ @P0 BRA 0x0 ;\n";
  SassVerdict v = InspectFunction(OnlyFunction(fenced));
  ASSERT_TRUE(v.loop_found);
  EXPECT_FALSE(v.barrier_after_compute);
  EXPECT_TRUE(v.barrier_before_refill);
  EXPECT_EQ(v.refill_barrier, 0x40);
  // A shared load moved between the barrier and a refill: that refill may overwrite a stage
  // another warp still reads.
  std::string unfenced = fenced;
  unfenced.replace(unfenced.find("/*0070*/ HMMA.16816.F32.BF16 R16, R5, R6, R16"), 45,
                   "/*0070*/ LDSM.16.M88.4 R16, [R22]            ");
  SassVerdict u = InspectFunction(OnlyFunction(unfenced));
  ASSERT_TRUE(u.loop_found);
  EXPECT_FALSE(u.barrier_before_refill);
  EXPECT_EQ(u.refill_barrier, -1);
  // The ladder's plain order (barrier, refill, then every step) keeps its barrier after compute.
  SassVerdict plain =
      InspectFunction(OnlyFunction("/*0000*/ BAR.SYNC.DEFER_BLOCKING 0x0 ;\n"
                                   "/*0010*/ LDGSTS.E.BYPASS.LTC128B.128 [R3], [R10.64] ;\n"
                                   "/*0020*/ LDSM.16.M88.4 R4, [R2] ;\n"
                                   "/*0030*/ HMMA.16816.F32.BF16 R8, R4, R6, R8 ;\n"
                                   "/*0040*/ @P0 BRA 0x0 ;\n"));
  EXPECT_TRUE(plain.barrier_after_compute);
  EXPECT_TRUE(plain.barrier_before_refill);
}

TEST(SassTest, NeverExecutedPaddingIsNotClassified) {
  auto f = OnlyFunction("/*0000*/ @!PT LDS RZ, [RZ] ;\n/*0010*/ @P0 LDS R1, [R2] ;\n");
  ASSERT_EQ(f.instructions.size(), 2u);
  EXPECT_EQ(f.instructions[0].cls, SassClass::kOther);
  EXPECT_EQ(f.instructions[1].cls, SassClass::kSharedLoad);
}

TEST(SassTest, NoLoopNoVerdict) {
  auto f = OnlyFunction("/*0000*/ HMMA.16816.F32 R0, R4, R8, R0 ;\n/*0010*/ EXIT ;\n");
  SassVerdict v = InspectFunction(f);
  EXPECT_FALSE(v.loop_found);
  EXPECT_EQ(DescribeVerdict(v), "no loop with tensor-core or FFMA instructions found");
}

// abl_L0_R1_bl0_s1_sw1: load, sync, compute, sync. The K-tile loop (0x07f0..0x0db0) holds an inner
// k-step loop of 16 HMMA; LDG -> STS -> BAR.SYNC -> HMMA: nothing overlaps.
TEST(SassFixtureTest, SingleStageBaselineHasNoOverlap) {
  auto f = OnlyFunction(Fixture("abl_L0_R1_bl0_s1_sw1.fp16.sm_90.sass"));
  EXPECT_EQ(f.arch, "sm_90");
  EXPECT_NE(f.name.find("ConfigILi0ELi1ELi0ELi1ELi1ELi0E"), std::string::npos);
  SassVerdict v = InspectFunction(f);
  ASSERT_TRUE(v.loop_found);
  EXPECT_EQ(v.loop_start, 0x07f0);
  EXPECT_EQ(v.loop_end, 0x0db0);
  EXPECT_EQ(v.compute_opcode, "HMMA");
  EXPECT_EQ(v.compute_per_iteration, 16);
  EXPECT_EQ(v.compute_in_inner_loops, 16);
  EXPECT_EQ(v.load_opcode, "LDG");
  EXPECT_EQ(v.loads, 4);
  EXPECT_FALSE(v.overlap);
  EXPECT_EQ(v.overlapping_loads, 0);
  EXPECT_EQ(v.blocking_barrier, 0x0b20);
  EXPECT_TRUE(v.barrier_after_compute);
  EXPECT_EQ(v.barrier_after, 0x0da0);
  EXPECT_EQ(v.local_loads + v.local_stores, 0);
  EXPECT_TRUE(HasLine(v, "LOAD", 0x0870));
  EXPECT_TRUE(HasLine(v, "BAR", 0x0b20));
  EXPECT_TRUE(HasLine(v, "MMA", 0x0c80));
  EXPECT_TRUE(HasLine(v, "LOOP", 0x0b30));  // the inner loop's head
  EXPECT_TRUE(HasLine(v, "LOOP^", 0x0d90));
  EXPECT_TRUE(HasLine(v, "LOOP^", 0x0db0));
  EXPECT_EQ(DescribeVerdict(v).rfind("no overlap:", 0), 0u) << DescribeVerdict(v);
}

// abl_L1_R1_bl0_s3_sw1: three cp.async stages. LDGSTS (0x0cf0..) then LDGDEPBAR, then the k-step
// loop of HMMA with no BAR.SYNC in between; DEPBAR.LE + BAR.SYNC after the compute.
TEST(SassFixtureTest, MultistageCpAsyncOverlaps) {
  auto f = OnlyFunction(Fixture("abl_L1_R1_bl0_s3_sw1.fp16.sm_90.sass"));
  SassVerdict v = InspectFunction(f);
  ASSERT_TRUE(v.loop_found);
  EXPECT_EQ(v.loop_start, 0x0b30);
  EXPECT_EQ(v.loop_end, 0x1100);
  EXPECT_EQ(v.compute_opcode, "HMMA");
  EXPECT_EQ(v.compute_per_iteration, 16);
  EXPECT_EQ(v.load_opcode, "LDGSTS");
  EXPECT_EQ(v.loads, 4);
  EXPECT_TRUE(v.overlap);
  EXPECT_EQ(v.overlapping_loads, 4);
  EXPECT_EQ(v.first_overlap_load, 0x0cf0);
  EXPECT_EQ(v.overlap_compute, 0x0f90);
  EXPECT_TRUE(v.barrier_after_compute);
  EXPECT_EQ(v.barrier_after, 0x10f0);
  EXPECT_EQ(v.local_loads + v.local_stores, 0);
  EXPECT_TRUE(HasLine(v, "LOAD>", 0x0cf0));
  EXPECT_TRUE(HasLine(v, "WAIT", 0x0d60));
  EXPECT_TRUE(HasLine(v, "WAIT", 0x10d0));
  EXPECT_TRUE(HasLine(v, "BAR", 0x10f0));
  // 16 consecutive HMMA fold to first two, a "... 13 more HMMA" line, and the last.
  int mma = 0;
  bool folded = false;
  for (const auto& l : v.excerpt) {
    mma += l.marker == "MMA" && l.offset >= 0;
    folded |= l.offset < 0 && l.text == "... 13 more HMMA";
  }
  EXPECT_EQ(mma, 3);
  EXPECT_TRUE(folded);
  EXPECT_EQ(DescribeVerdict(v).rfind("overlap:", 0), 0u) << DescribeVerdict(v);
}

// The same function as nvdisasm prints it: branch targets are labels, the verdict is the same.
TEST(SassFixtureTest, NvdisasmListingGivesTheSameVerdict) {
  auto fs = ParseSass(Fixture("abl_L1_R1_bl0_s3_sw1.fp16.sm_90.nvdisasm"));
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_NE(fs[0].name.find("ConfigILi1ELi1ELi0ELi3ELi1ELi0E"), std::string::npos);
  SassVerdict v = InspectFunction(fs[0]);
  auto ref = InspectFunction(OnlyFunction(Fixture("abl_L1_R1_bl0_s3_sw1.fp16.sm_90.sass")));
  EXPECT_EQ(v.loop_start, ref.loop_start);
  EXPECT_EQ(v.loop_end, ref.loop_end);
  EXPECT_EQ(v.overlap, ref.overlap);
  EXPECT_EQ(v.first_overlap_load, ref.first_overlap_load);
  EXPECT_EQ(v.compute_per_iteration, ref.compute_per_iteration);
  EXPECT_EQ(v.barrier_after, ref.barrier_after);
}

// The pipe_ family's fp16 64x64x16 trio as the H200 node's own cuobjdump 13.0 printed it: the
// baseline loads, syncs and computes; ldg and cpasync issue the next tile's loads before the
// HMMA with no barrier between; all three do the same 8 HMMA per iteration.
TEST(SassFixtureTest, PipeFamilyFromTheGpuNode) {
  struct Case {
    const char* file;
    bool overlap;
    const char* load_opcode;
  };
  for (const Case& c : {Case{"pipe_baseline_f16_64x64x16.fp16.sm_90.sass", false, "LDG"},
                        Case{"pipe_ldg_f16_64x64x16.fp16.sm_90.sass", true, "LDG"},
                        Case{"pipe_cpasync_f16_64x64x16.fp16.sm_90.sass", true, "LDG+LDGSTS"}}) {
    auto f = OnlyFunction(Fixture(c.file));
    EXPECT_EQ(f.arch, "sm_90") << c.file;
    SassVerdict v = InspectFunction(f);
    ASSERT_TRUE(v.loop_found) << c.file;
    EXPECT_EQ(v.compute_opcode, "HMMA") << c.file;
    EXPECT_EQ(v.compute_per_iteration, 8) << c.file;
    EXPECT_EQ(v.load_opcode, c.load_opcode) << c.file;
    EXPECT_EQ(v.loads, 20) << c.file;
    EXPECT_EQ(v.overlap, c.overlap) << c.file << ": " << DescribeVerdict(v);
    EXPECT_EQ(v.overlapping_loads, c.overlap ? 20 : 0) << c.file;
    if (!c.overlap) EXPECT_GE(v.blocking_barrier, 0) << c.file;
    EXPECT_TRUE(v.barrier_after_compute) << c.file;
    EXPECT_EQ(v.local_loads + v.local_stores, 0) << c.file;
  }
}

}  // namespace
}  // namespace ablation::core

namespace ablation::core {
namespace {

// A warp-specialised wgmma kernel as the sm90 family builds it: the producer's loop issues TMA,
// the consumers' loop computes with HGMMA and holds no load.
constexpr const char* kWarpSpecialisedListing =
    "Function : ws\n"
    "/*0000*/ MOV R1, R2 ;\n"
    "/*0010*/ SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4], R3 ;\n"
    "/*0020*/ UTMALDG.2D [UR8], [UR10] ;\n"
    "/*0030*/ UTMALDG.2D.MULTICAST [UR12], [UR10], UR14 ;\n"
    "/*0040*/ @P1 BRA 0x10 ;\n"
    "/*0050*/ SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR5], R3 ;\n"
    "/*0060*/ HGMMA.64x256x16.F32.BF16 R24, gdesc[UR16], R24 ;\n"
    "/*0070*/ HGMMA.64x256x16.F32.BF16 R24, gdesc[UR18], R24 ;\n"
    "/*0080*/ WARPGROUP.DEPBAR.LE gsb0, 0x0 ;\n"
    "/*0088*/ SYNCS.ARRIVE.TRANS64.RED.A1T0 RZ, [UR6], RZ ;\n"
    "/*0090*/ @P2 BRA 0x50 ;\n"
    "/*00a0*/ EXIT ;\n";

SassTarget Target(std::string expect_tensor, bool expect_tma) {
  SassTarget t;
  t.variant = "sm90_h3_ws";
  t.dtype = "bf16";
  t.symbol = "ws";
  t.expect_tensor = std::move(expect_tensor);
  t.expect_tma = expect_tma;
  return t;
}

const v1::SassCheck* Check(const v1::SassResponse& r, const std::string& name) {
  for (const auto& c : r.kernel().checks())
    if (c.name() == name) return &c;
  return nullptr;
}

TEST(SassSm90Test, WgmmaRungIsHeldToHgmmaAndTma) {
  v1::SassResponse r = BuildSassResponse(kWarpSpecialisedListing, {Target("HGMMA", true)});
  ASSERT_NE(Check(r, "tensor_instruction"), nullptr);
  EXPECT_TRUE(Check(r, "tensor_instruction")->passed()) << Check(r, "tensor_instruction")->detail();
  ASSERT_NE(Check(r, "tma_loads"), nullptr);
  EXPECT_TRUE(Check(r, "tma_loads")->passed());
  EXPECT_NE(Check(r, "tma_loads")->detail().find("2 UTMALDG"), std::string::npos);
  // The consumers' loop has no load: the producer's TMA overlaps it through the mbarriers.
  ASSERT_NE(Check(r, "overlap"), nullptr);
  EXPECT_TRUE(Check(r, "overlap")->passed()) << Check(r, "overlap")->detail();
  EXPECT_TRUE(Check(r, "spills")->passed());
  // Stages are released by mbarrier arrives, not a block barrier.
  ASSERT_NE(Check(r, "barrier_after_compute"), nullptr);
  EXPECT_TRUE(Check(r, "barrier_after_compute")->passed())
      << Check(r, "barrier_after_compute")->detail();
}

TEST(SassSm90Test, AWgmmaRungThatComputesWithHmmaFails) {
  v1::SassResponse r = BuildSassResponse(kWarpSpecialisedListing, {Target("HMMA", false)});
  ASSERT_NE(Check(r, "tensor_instruction"), nullptr);
  EXPECT_FALSE(Check(r, "tensor_instruction")->passed());
  EXPECT_EQ(Check(r, "tma_loads"), nullptr);
  // Without the TMA expectation a compute loop with no load is "no overlap", as before.
  EXPECT_FALSE(Check(r, "overlap")->passed());
}

TEST(SassSm90Test, OtherFamiliesGetNoSm90Checks) {
  v1::SassResponse r = BuildSassResponse(kWarpSpecialisedListing, {Target("", false)});
  EXPECT_EQ(Check(r, "tensor_instruction"), nullptr);
  EXPECT_EQ(Check(r, "tma_loads"), nullptr);
}

}  // namespace
}  // namespace ablation::core

namespace ablation::core {
namespace {

TEST(SassTest, ModifiersMayHoldLowerCase) {
  auto f = OnlyFunction(
      "Function : k\n"
      "/*0000*/ HGMMA.64x256x16.F32.BF16 R24, gdesc[UR16], R24 ;\n"
      "/*0010*/ hgmma R1 ;\n");
  ASSERT_EQ(f.instructions.size(), 1u) << "a lower-case mnemonic is not an instruction";
  EXPECT_EQ(f.instructions[0].mnemonic, "HGMMA");
  EXPECT_EQ(f.instructions[0].cls, SassClass::kTensorCore);
}

}  // namespace
}  // namespace ablation::core

namespace ablation::core {
namespace {

// What ptxas made of the 2x1 cluster rung on the H200: the consumers' mbarrier spin branches back
// from the end of the function, so the loop's address range holds the producer's TMA and a block
// barrier on the way out. That barrier separates nothing.
TEST(SassTest, ABarrierOnTheWayOutSeparatesNothing) {
  auto f = OnlyFunction(
      "Function : mc2\n"
      "/*0000*/ WARPGROUP.ARRIVE ;\n"
      "/*0010*/ HGMMA.64x256x16.F32.BF16 R24, gdesc[UR16], R24 ;\n"
      "/*0020*/ SYNCS.ARRIVE.TRANS64.RED.A1T0 RZ, [UR6], RZ ;\n"
      "/*0030*/ UTMALDG.2D.MULTICAST [UR16], [UR8], UR4 ;\n"
      "/*0040*/ EXIT ;\n"
      "/*0050*/ BAR.SYNC.DEFER_BLOCKING 0x0 ;\n"
      "/*0060*/ EXIT ;\n"
      "/*0070*/ SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR9], R9 ;\n"
      "/*0080*/ BRA 0x0 ;\n");
  EXPECT_EQ(f.instructions[5].cls, SassClass::kOther);
  SassVerdict v = InspectFunction(f);
  ASSERT_TRUE(v.loop_found);
  EXPECT_EQ(v.compute_opcode, "HGMMA");
  EXPECT_TRUE(v.overlap) << DescribeVerdict(v);
}

}  // namespace
}  // namespace ablation::core
