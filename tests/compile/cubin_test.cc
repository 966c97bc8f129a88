// A cubin brought built (server/compile/cubin.h): decoded from base64, checked as a CUDA ELF for
// the daemon's architecture with its entries, and its registers, stack frame, static shared memory
// and parameters read from its .nv.info records, held here to what ptxas -v said when nvcc built
// it (examples/user-kernels/cubin: make-cubin.sh). Hostile bytes are refused, not read past.
#include "server/compile/cubin.h"

#include <fstream>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "absl/strings/escaping.h"

namespace ablation::compile {
namespace {

using kernels::user::CompileRequest;
using kernels::user::CompileResult;

std::string Example(const std::string& name) {
  std::ifstream in(std::string(SOURCE_DIR) + "/examples/user-kernels/cubin/" + name,
                   std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

CompileRequest Request(const std::string& bytes) {
  CompileRequest r;
  r.source = absl::Base64Escape(bytes);
  r.source_name = "row_softmax_t128.cubin";
  r.entry = "row_softmax";
  r.also_entries = {"row_softmax_ref"};
  r.arch = "sm_90a";
  r.language = "cubin";
  return r;
}

// ptxas' "Used N registers" and "N bytes smem" for `entry` in its -v report.
void PtxasSaid(const std::string& report, const std::string& entry, int* registers, int64_t* smem) {
  const size_t at = report.find("Compiling entry function '" + entry + "'");
  ASSERT_NE(at, std::string::npos);
  std::smatch m;
  const std::string rest = report.substr(at);
  ASSERT_TRUE(std::regex_search(rest, m, std::regex(R"(Used (\d+) registers[^\n]*)")));
  *registers = std::stoi(m[1]);
  std::smatch s;
  const std::string line = m[0];
  *smem = std::regex_search(line, s, std::regex(R"((\d+) bytes smem)")) ? std::stoll(s[1]) : 0;
}

TEST(Cubin, ItsRegistersSharedMemoryAndParametersAreWhatPtxasSaid) {
  const CompileResult r = ReadCubin(Request(Example("row_softmax_t128.cubin")));
  ASSERT_TRUE(r.ok) << r.log;
  int registers = 0;
  int64_t smem = 0;
  PtxasSaid(Example("row_softmax_t128.ptxas.txt"), "row_softmax", &registers, &smem);
  EXPECT_TRUE(r.ptxas.found);
  EXPECT_EQ(r.ptxas.registers, registers);
  EXPECT_EQ(r.ptxas.static_smem_bytes, smem);
  EXPECT_EQ(smem, 512);  // float scratch[128]
  EXPECT_EQ(r.ptxas.stack_bytes, 0);
  EXPECT_EQ(r.ptxas.spill_store_bytes, -1);  // a cubin does not record them
  // (const bf16* x, bf16* y, long long rows, long long cols)
  EXPECT_EQ(r.param_bytes, (std::vector<size_t>{8, 8, 8, 8}));
  EXPECT_EQ(r.cubin, Example("row_softmax_t128.cubin"));
  EXPECT_EQ(r.compiler, "cubin (as given)");
  // The reference entry's own figures, read the same way.
  CompileRequest ref = Request(Example("row_softmax_t128.cubin"));
  ref.entry = "row_softmax_ref";
  ref.also_entries.clear();
  const CompileResult rr = ReadCubin(ref);
  ASSERT_TRUE(rr.ok) << rr.log;
  PtxasSaid(Example("row_softmax_t128.ptxas.txt"), "row_softmax_ref", &registers, &smem);
  EXPECT_EQ(rr.ptxas.registers, registers);
  EXPECT_EQ(rr.ptxas.static_smem_bytes, 0);
}

TEST(Cubin, AnotherArchitectureAMissingEntryOrBytesThatAreNoCubinAreRefusedByName) {
  const std::string cubin = Example("row_softmax_t128.cubin");
  CompileRequest r = Request(cubin);
  r.arch = "sm_100a";
  CompileResult out = ReadCubin(r);
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.log.find("the cubin is for sm_90; this daemon's GPU runs sm_100a"),
            std::string::npos)
      << out.log;
  r = Request(cubin);
  r.also_entries = {"row_softmax_reference"};
  out = ReadCubin(r);
  EXPECT_NE(out.log.find("the cubin has no kernel named row_softmax_reference (the manifest's "
                         "reference entry"),
            std::string::npos)
      << out.log;
  r.source = "this is not base64!";
  EXPECT_NE(ReadCubin(r).log.find("not base64 of a cubin"), std::string::npos);
  r = Request("plain text, not an ELF file at all");
  EXPECT_NE(ReadCubin(r).log.find("it is not an ELF file"), std::string::npos);
  // A truncated file is refused (its section headers lie at its end), never read past.
  for (size_t n :
       {size_t(4), size_t(63), size_t(64), size_t(700), cubin.size() / 2, cubin.size() - 1}) {
    const CompileResult cut = ReadCubin(Request(cubin.substr(0, n)));
    EXPECT_FALSE(cut.ok) << n << " bytes";
    EXPECT_FALSE(cut.log.empty()) << n << " bytes";
  }
  // A machine other than CUDA's.
  std::string x86 = cubin;
  x86[18] = 62;  // e_machine: EM_X86_64
  x86[19] = 0;
  EXPECT_NE(ReadCubin(Request(x86)).log.find("not a CUDA cubin (EM_CUDA, 190)"), std::string::npos);
}

}  // namespace
}  // namespace ablation::compile
