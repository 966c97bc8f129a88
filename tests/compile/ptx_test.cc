// PTX from another compiler, assembled by the toolkit's PTX compiler in this process
// (server/compile/ptx.h): a cubin with ptxas' report, the entry checked, errors in the user's
// words. No GPU is needed.
#include "server/compile/ptx.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace ablation::compile {
namespace {

using kernels::user::CompileRequest;
using kernels::user::CompileResult;

std::string ExamplePtx() {
  std::ifstream in(std::string(SOURCE_DIR) + "/examples/user-kernels/ptx/tiled_gemm_u4.ptx");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

CompileRequest Request(const std::string& source) {
  CompileRequest r;
  r.source = source;
  r.source_name = "tiled_gemm_u4.ptx";
  r.entry = "tiled_gemm";
  r.arch = "sm_90a";
  r.language = "ptx";
  return r;
}

TEST(PtxCompile, ThePtxExampleAssemblesToACubinWithPtxasReport) {
  const std::string ptx = ExamplePtx();
  ASSERT_NE(ptx.find(".target sm_80"), std::string::npos) << "make-ptx.sh emits compute_80 PTX";
  const CompileResult r = CompilePtx(Request(ptx), 64 * 1024);
  ASSERT_TRUE(r.ok) << r.log;
  EXPECT_EQ(r.cubin.substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_TRUE(r.ptxas.found) << r.log;
  EXPECT_GT(r.ptxas.registers, 0);
  EXPECT_EQ(r.ptxas.static_smem_bytes, 2 * 16 * 17 * 4);  // As and Bs, PAD = 1, as float
  EXPECT_EQ(r.ptxas.spill_store_bytes, 0);
  EXPECT_NE(r.options.find("-arch=sm_90a"), std::string::npos) << r.options;
  EXPECT_EQ(r.options.rfind("nvjitlink ", 0), 0u) << r.options;
}

TEST(PtxCompile, AnErrorNamesTheUsersFileAndLineAndAMissingEntryComesFirst) {
  std::string ptx = ExamplePtx();
  const size_t ret = ptx.find("\tret;");
  ASSERT_NE(ret, std::string::npos);
  const int line = int(std::count(ptx.begin(), ptx.begin() + ret, '\n')) + 1;
  ptx.replace(ret, 5, "\trett;");
  CompileResult r = CompilePtx(Request(ptx), 64 * 1024);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.cubin.empty());
  EXPECT_NE(r.log.find("tiled_gemm_u4.ptx:" + std::to_string(line) +
                       ":1: error: Not a name of any known instruction: 'rett'"),
            std::string::npos)
      << r.log;
  CompileRequest wrong = Request(ExamplePtx());
  wrong.entry = "tiled";
  r = CompilePtx(wrong, 64 * 1024);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.log.rfind("tiled_gemm_u4.ptx: error: entry 'tiled' is not a kernel of this source: "
                        "it needs a .visible .entry",
                        0),
            0u)
      << r.log;
  // An architecture older than the PTX's target is refused with its reason.
  CompileRequest old = Request(ExamplePtx());
  old.arch = "sm_75";
  r = CompilePtx(old, 64 * 1024);
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.log.empty());
}

TEST(PtxCompile, PtxasLocationsReadAsFileLineColumnAndControlsAreDropped) {
  EXPECT_EQ(PtxInUserWords("ptxas application ptx input, line 47; error   : Not a name 'x'\n"
                           "ptxas fatal   : Ptx assembly aborted due to errors\x01\n",
                           "k.ptx"),
            "k.ptx:47:1: error: Not a name 'x'\nptxas fatal   : Ptx assembly aborted due to "
            "errors\n");
  EXPECT_EQ(PtxInUserWords("ptxas application ptx input, line 3; warning : old\n", "k.ptx"),
            "k.ptx:3:1: warning: old\n");
}

}  // namespace
}  // namespace ablation::compile
