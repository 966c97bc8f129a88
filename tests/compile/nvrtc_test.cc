// NVRTC on a user kernel, in this process (server/compile/nvrtc.h): no GPU is needed to compile.
#include "server/compile/nvrtc.h"

#include <gtest/gtest.h>

namespace ablation::compile {
namespace {

constexpr const char* kScale = R"cu(
#ifndef FACTOR
#error FACTOR is a knob: compile with -DFACTOR=<n>
#endif
extern "C" __global__ void scale(float* x, int n) {
  __shared__ float tile[256];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? x[i] * FACTOR : 0.f;
  __syncthreads();
  if (i < n) x[i] = tile[255 - threadIdx.x];
}
)cu";

CompileRequest Request(const std::string& source = kScale) {
  CompileRequest r;
  r.source = source;
  r.entry = "scale";
  r.defines = {{"FACTOR", 3}};
  return r;
}

TEST(UserCompile, AKnobSetCompilesToACubinWithPtxasReport) {
  const CompileResult r = Compile(Request(), 64 * 1024);
  ASSERT_TRUE(r.ok) << r.log;
  EXPECT_GT(r.cubin.size(), 1000u);
  EXPECT_EQ(r.cubin.substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_TRUE(r.ptxas.found);
  EXPECT_GT(r.ptxas.registers, 0);
  EXPECT_EQ(r.ptxas.static_smem_bytes, 1024);
  EXPECT_EQ(r.ptxas.spill_store_bytes, 0);
  EXPECT_EQ(r.compiler.rfind("nvrtc ", 0), 0u) << r.compiler;
  EXPECT_NE(r.options.find("-DFACTOR=3"), std::string::npos) << r.options;
  EXPECT_NE(r.options.find("--gpu-architecture=sm_90a"), std::string::npos) << r.options;
}

TEST(UserCompile, ACompileErrorComesBackWithTheSourcesLineNumbers) {
  CompileRequest missing_knob = Request();
  missing_knob.defines.clear();
  CompileResult r = Compile(missing_knob, 64 * 1024);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("kernel.cu(3)"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("FACTOR is a knob"), std::string::npos) << r.log;
  r = Compile(Request("extern \"C\" __global__ void scale(float* x) {\n  x[0] = y;\n}\n"), 4096);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("kernel.cu(2)"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("\"y\""), std::string::npos) << r.log;
  EXPECT_TRUE(r.cubin.empty());
}

TEST(UserCompile, AnEntryTheSourceDoesNotExportIsRefused) {
  CompileRequest r = Request();
  r.entry = "scale_v2";
  const CompileResult out = Compile(r, 64 * 1024);
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.log.find("entry 'scale_v2' is not a kernel of this source"), std::string::npos)
      << out.log;
  EXPECT_TRUE(out.cubin.empty());
}

TEST(UserCompile, ALongLogIsCutSayingSo) {
  std::string noisy = "extern \"C\" __global__ void scale(float* x) {\n";
  for (int i = 0; i < 200; ++i) noisy += "  x[0] = undefined_" + std::to_string(i) + ";\n";
  noisy += "}\n";
  const CompileResult r = Compile(Request(noisy), 2000);
  EXPECT_FALSE(r.ok);
  EXPECT_LT(r.log.size(), 2200u);
  EXPECT_NE(r.log.find("[the compiler's log was cut at 2000 bytes]"), std::string::npos);
}

TEST(UserCompile, PtxasReportIsReadForTheEntryOnly) {
  const std::string log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'other' for 'sm_90a'\n"
      "ptxas info    : Function properties for other\n"
      "ptxas         .     8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 0 bytes smem\n"
      "ptxas info    : Compiling entry function 'gemm' for 'sm_90a'\n"
      "ptxas info    : Function properties for gemm\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 1 barriers, 32768 bytes smem, 400 bytes cmem[0]\n";
  const PtxasReport r = ParsePtxasReport(log, "gemm");
  EXPECT_TRUE(r.found);
  EXPECT_EQ(r.registers, 168);
  EXPECT_EQ(r.static_smem_bytes, 32768);
  EXPECT_EQ(r.spill_store_bytes, 0);
  const PtxasReport o = ParsePtxasReport(log, "other");
  EXPECT_EQ(o.registers, 255);
  EXPECT_EQ(o.spill_load_bytes, 4);
  EXPECT_EQ(o.stack_bytes, 8);
  EXPECT_FALSE(ParsePtxasReport(log, "missing").found);
}

}  // namespace
}  // namespace ablation::compile
