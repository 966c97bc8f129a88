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
  EXPECT_NE(r.log.find("kernel.cu:3:"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("FACTOR is a knob"), std::string::npos) << r.log;
  r = Compile(Request("extern \"C\" __global__ void scale(float* x) {\n  x[0] = y;\n}\n"), 4096);
  EXPECT_FALSE(r.ok);
  // The form editors' problem matchers read: file:line:column: error: (the column from NVRTC's
  // caret under the echoed line: "  x[0] = y;" has y in column 10).
  EXPECT_NE(r.log.find("kernel.cu:2:10: error: identifier \"y\" is undefined"), std::string::npos)
      << r.log;
  EXPECT_NE(r.log.find("\"y\""), std::string::npos) << r.log;
  EXPECT_TRUE(r.cubin.empty());
}

TEST(UserCompile, AnEntryTheSourceDoesNotExportIsRefused) {
  CompileRequest r = Request();
  r.entry = "scale_v2";
  const CompileResult out = Compile(r, 64 * 1024);
  EXPECT_FALSE(out.ok);
  // The cause first, in the source's name, then the compiler's report (which names the kernels
  // there are); no control character (NVRTC's log carried a NUL before it).
  EXPECT_EQ(out.log.rfind("kernel.cu: error: entry 'scale_v2' is not a kernel of this source", 0),
            0u)
      << out.log;
  EXPECT_NE(out.log.find("the compiler's report:\n"), std::string::npos) << out.log;
  EXPECT_EQ(out.log.find('\0'), std::string::npos);
  EXPECT_TRUE(out.cubin.empty());
}

TEST(UserCompile, MessagesNameTheUsersFile) {
  CompileRequest r = Request("extern \"C\" __global__ void scale(float* x) {\n    x[0] = y;\n}\n");
  r.source_name = "my_gemm.cu";
  const CompileResult out = Compile(r, 64 * 1024);
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.log.find("my_gemm.cu:2:12: error: identifier \"y\" is undefined"),
            std::string::npos)
      << out.log;
  EXPECT_EQ(out.log.find("kernel.cu"), std::string::npos) << out.log;
  // A refused include is an error in the same form.
  r.source = "#include \"/etc/passwd\"\n" + r.source;
  const CompileResult refused = Compile(r, 64 * 1024);
  EXPECT_EQ(refused.log.rfind("my_gemm.cu:1:1: error: #include", 0), 0u) << refused.log;
}

TEST(UserCompile, InUserWordsRewritesEveryDiagnosticAndDropsControls) {
  const std::string log =
      std::string(
          "k.cu(7): warning #177-D: variable \"t\" was declared but never referenced\n"
          "        int t;\n"
          "            ^\n"
          "\n"
          "k.cu(9): error: expected a \";\"\n"
          "k.cu(12): remark: no caret below\n"
          "k.cu(x): error: not a line number\n"
          "other.cu(3): error: another file is left alone\n") +
      std::string("a\x01") + "b\x1b[31mred" + std::string(1, '\0') + "\tend\n";
  EXPECT_EQ(InUserWords(log, "k.cu"),
            "k.cu:7:11: warning #177-D: variable \"t\" was declared but never referenced\n"
            "        int t;\n"
            "            ^\n"
            "\n"
            "k.cu:9:1: error: expected a \";\"\n"
            "k.cu:12:1: remark: no caret below\n"
            "k.cu(x): error: not a line number\n"
            "other.cu(3): error: another file is left alone\n"
            "ab[31mred\tend\n");
}

TEST(UserCompile, OnlyAPlainFileNameNamesTheSource) {
  using kernels::user::SourceFileName;
  EXPECT_EQ(SourceFileName("tiled_gemm.cu"), "tiled_gemm.cu");
  EXPECT_EQ(SourceFileName("/home/me/src/tiled_gemm.cu"), "tiled_gemm.cu");
  EXPECT_EQ(SourceFileName("g++-kernel.cuh"), "g++-kernel.cuh");
  for (const char* odd :
       {"", "a b.cu", "--entry", ".hidden.cu", "x;rm.cu", "k\n.cu", "dir/", "\xE2\x80\xAE.cu"})
    EXPECT_EQ(SourceFileName(odd), "kernel.cu") << odd;
  EXPECT_EQ(SourceFileName(std::string(65, 'a')), "kernel.cu");
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
