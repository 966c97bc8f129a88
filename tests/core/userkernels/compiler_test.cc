// ablation-compile as the daemon runs it (server/core/userkernels/compiler.h): a child process with
// limits; what comes back for a source that compiles, one that does not, and a compiler that
// does not finish or is killed by its limits.
#include "server/core/userkernels/compiler.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace ablation::core {
namespace {

kernels::user::CompileRequest Request(const std::string& source) {
  kernels::user::CompileRequest r;
  r.source = source;
  r.entry = "add";
  r.defines = {{"STEP", 2}};
  return r;
}

constexpr const char* kAdd =
    "extern \"C\" __global__ void add(int* x) { x[threadIdx.x] += STEP; }\n";

TEST(CompilerProcess, ASourceThatCompilesComesBackAsACubinWithItsReport) {
  const auto r = CompileInChild(COMPILER_PATH, Request(kAdd), CompileLimits{}, {}).result;
  ASSERT_TRUE(r.ok) << r.log;
  EXPECT_EQ(r.cubin.substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_GT(r.ptxas.registers, 0);
  EXPECT_EQ(r.compiler.rfind("nvrtc ", 0), 0u);
  EXPECT_NE(r.options.find("-DSTEP=2"), std::string::npos) << r.options;
}

TEST(CompilerProcess, TheProjectsPtxHelpersAreThereForTheIncludeOfThem) {
  // cp.async with wait_group<N>, ldmatrix and mma.sync, as the built-in kernels write them.
  const char* source = R"cu(
#include "ablation/ptx.cuh"
namespace ptx = ablation::kernels::ptx;
extern "C" __global__ void add(const float* g, float* out) {
  __shared__ __align__(16) unsigned short tile[16 * 16];
  ptx::CpAsyncCg16(ptx::SmemAddr(tile + threadIdx.x * 8), g + threadIdx.x * 4);
  ptx::CpAsyncCommitGroup();
  ptx::CpAsyncWaitGroup<0>();
  __syncthreads();
  uint32_t a[4], b[2];
  ptx::LdmatrixX4(a, ptx::SmemAddr(tile + (threadIdx.x % 16) * 16));
  ptx::LdmatrixX2(b, ptx::SmemAddr(tile + (threadIdx.x % 16) * 16));
  float d[4] = {0, 0, 0, 0};
  ptx::MmaM16N8K16Bf16(d, a, b);
  out[threadIdx.x] = d[0] + d[1] + d[2] + d[3] + STEP;
}
)cu";
  const auto r = CompileInChild(COMPILER_PATH, Request(source), CompileLimits{}, {}).result;
  ASSERT_TRUE(r.ok) << r.log;
  EXPECT_GT(r.ptxas.registers, 0);
  EXPECT_EQ(r.ptxas.static_smem_bytes, 512);
}

TEST(CompilerProcess, TheHopperEquivalentsAreThereForSm90a) {
  // mbarrier, the bulk copy engine without a tensor map, wgmma's fence/commit/wait, stmatrix.
  const char* source = R"cu(
#include "ablation/ptx_sm90.cuh"
namespace sm90 = ablation::kernels::sm90;
extern "C" __global__ void add(const float* g, float* out) {
  __shared__ __align__(128) float tile[256];
  __shared__ __align__(8) uint64_t bar;
  if (threadIdx.x == 0) {
    sm90::MbarInit(&bar, 1);
    sm90::FenceBarrierInit();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    sm90::MbarArriveExpectTx(&bar, sizeof(tile));
    sm90::BulkLoad(tile, g, sizeof(tile), &bar);
  }
  sm90::MbarWait(&bar, 0);
  sm90::WgmmaFence();
  sm90::WgmmaCommit();
  sm90::WgmmaWait<0>();
  out[threadIdx.x] = tile[threadIdx.x] + STEP;
}
)cu";
  auto request = Request(source);
  request.arch = "sm_90a";
  const auto r = CompileInChild(COMPILER_PATH, request, CompileLimits{}, {}).result;
  ASSERT_TRUE(r.ok) << r.log;
  EXPECT_GT(r.ptxas.registers, 0);
  EXPECT_GE(r.ptxas.static_smem_bytes, 1024 + 8);
}

TEST(CompilerProcess, ACompileErrorIsTheCompilersLogWithItsLineNumbers) {
  const auto r = CompileInChild(COMPILER_PATH,
                                Request("extern \"C\" __global__ void add(int* x) {\n  x[0] += "
                                        "STEPS;\n}\n"),
                                CompileLimits{}, {})
                     .result;
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("kernel.cu:2:"), std::string::npos) << r.log;
  EXPECT_EQ(r.log.find("the compiler ended"), std::string::npos) << r.log;  // an ordinary error
  EXPECT_TRUE(r.cubin.empty());
}

TEST(CompilerProcess, AMemoryLimitTheCompilerCannotWorkInIsReportedNotHidden) {
  CompileLimits tiny;
  tiny.memory_mb = 256;  // the compiler is loaded first; its work on a 64 MiB section does not fit
  const auto r =
      CompileInChild(COMPILER_PATH,
                     Request("__device__ char big[64 << 20] = {1};\n" + std::string(kAdd)), tiny,
                     {})
          .result;
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("it ran out of the 256 MiB it may use"), std::string::npos) << r.log;
  EXPECT_TRUE(r.cubin.empty());
}

TEST(CompilerProcess, ACompilerThatDoesNotFinishIsKilledAtTheDeadline) {
  const std::string fake = (std::filesystem::temp_directory_path() /
                            ("ablation-slow-compiler-" + std::to_string(::getpid())))
                               .string();
  std::ofstream(fake) << "#!/bin/sh\nsleep 30\n";
  std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  CompileLimits limits;
  limits.timeout = std::chrono::seconds(1);
  const auto start = std::chrono::steady_clock::now();
  const auto r = CompileInChild(fake, Request(kAdd), limits, {}).result;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("the compiler ended: did not finish in 1 s"), std::string::npos) << r.log;
  std::filesystem::remove(fake);
}

}  // namespace
}  // namespace ablation::core
