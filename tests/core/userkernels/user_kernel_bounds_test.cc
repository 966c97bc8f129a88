// What one caller may make the daemon hold or do with user kernels, tried as a hostile caller
// would: concurrent adds against the per-owner count, the cubin bytes of a kernel and of an owner,
// manifests nested to crash a recursive parser, a host where the compiler cannot be sandboxed,
// and who reads a kernel's source. Compiles through the real ablation-compile; no GPU needed.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>

#include <gtest/gtest.h>

#include "server/core/userkernels/user_kernels.h"
#include "tests/core/userkernels/user_kernels_fixture.h"

namespace ablation::core {
namespace {

constexpr const char* kSource = R"cu(
extern "C" __global__ void scale_gemm(const float* a, const float* b, float* c, int m, int n,
                                      int k) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m * n) c[i] = a[i % (m * k)] * b[i % (k * n)] * FACTOR;
}
)cu";

// One knob set: one compile per add.
std::string Manifest(const std::string& name) {
  return "name = \"" + name + R"toml("
entry = "scale_gemm"
[contract]
dtype = "fp32"
[launch]
block = "256"
grid = "ceil(M * N / 256)"
[[knob]]
name = "FACTOR"
values = [1]
short = "f"
)toml";
}

class UserKernelBounds : public testing::UserKernelsFixture {
 protected:
  void SetUp() override {
    UserKernelsFixture::SetUp();
    options_.add_role = "run";
  }
  Status Add(const KernelCaller& who, const std::string& name) {
    KernelSummary added;
    return kernels_->Add(who, kSource, Manifest(name), "sm_90a", &added);
  }
};

// The count is checked and the place reserved in one step, before the compile: twelve adds sent
// at once by a caller allowed two hold two, the rest refused by name (max_kernels_per_owner = 2
// admitted 12 under concurrent adds before).
TEST_F(UserKernelBounds, ConcurrentAddsNeverPassTheOwnersCount) {
  options_.max_kernels_per_owner = 2;
  options_.compile_threads = 2;
  options_.max_waiting_adds = 16;
  ASSERT_EQ(Open(), std::vector<std::string>{});
  std::mutex mu;
  std::condition_variable cv;
  int answered = 0, ok = 0, over = 0;
  constexpr int kAdds = 12;
  for (int i = 0; i < kAdds; ++i)
    kernels_->Add(alice_, kSource, Manifest("k" + std::to_string(i)), "sm_90a",
                  [&](const Status& st, const KernelSummary&) {
                    std::lock_guard lock(mu);
                    ok += st.ok();
                    over += st.message().find("the most one caller may") != std::string::npos;
                    ++answered;
                    cv.notify_all();
                  });
  std::unique_lock lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(100), [&] { return answered == kAdds; }));
  EXPECT_EQ(ok, 2);
  EXPECT_EQ(over, kAdds - 2);
  EXPECT_EQ(kernels_->List().size(), 2u);
  EXPECT_EQ(store_->ListUserKernels().size(), 2u);
}

// A kernel's builds and an owner's kernels hold at most so many bytes of cubins; the refusal names
// the bound and its key, and nothing of the refused kernel is stored.
TEST_F(UserKernelBounds, TheCubinBytesOfAKernelAndOfAnOwnerAreBounded) {
  options_.max_bytes_per_kernel = 512;  // smaller than any cubin
  ASSERT_EQ(Open(), std::vector<std::string>{});
  Status st = Add(alice_, "a");
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("user_kernels.max_bytes_per_kernel"), std::string::npos)
      << st.message();
  EXPECT_TRUE(store_->ListUserKernels().empty());

  options_.max_bytes_per_kernel = int64_t(64) << 20;
  ASSERT_EQ(Open(), std::vector<std::string>{});
  ASSERT_TRUE(Add(alice_, "a").ok());
  const int64_t one = kernels_->List()[0].builds[0].cubin_bytes;
  ASSERT_GT(one, 0);
  options_.max_bytes_per_owner = one + one / 2;  // room for one kernel, not two
  ASSERT_EQ(Open(), std::vector<std::string>{});
  st = Add(alice_, "b");
  EXPECT_EQ(st.code(), Code::kFailedPrecondition);
  EXPECT_NE(st.message().find("user_kernels.max_bytes_per_owner"), std::string::npos)
      << st.message();
  EXPECT_TRUE(Add(bob_, "b").ok()) << "another owner's bytes are his own";
  EXPECT_EQ(store_->ListUserKernels().size(), 2u);
}

// A manifest nested 50,000 deep (the hostile probe's 100 KB: SIGSEGV in toml++'s recursion, 6 of
// 6) is refused at its size; nested 12,000 deep within the size, it is refused at its depth, in
// every form TOML nests in. Either way this test's own process would have died.
TEST_F(UserKernelBounds, AManifestNestedToCrashTheParserIsRefused) {
  ASSERT_EQ(Open(), std::vector<std::string>{});
  std::string probe = "x";
  for (int i = 0; i < 50000; ++i) probe += ".a";
  KernelSummary refused;
  Status st =
      kernels_->Add(alice_, kSource, Manifest("deep") + probe + " = 1\n", "sm_90a", &refused);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("bytes, more than 65536"), std::string::npos) << st.message();
  const int kDeep = 12000;
  const std::string arrays = "x = " + std::string(kDeep, '[') + std::string(kDeep, ']') + "\n";
  std::string tables = "x = ";
  for (int i = 0; i < kDeep; ++i) tables += "{a=";
  tables += "1" + std::string(kDeep, '}') + "\n";
  std::string dotted = "x";
  for (int i = 0; i < kDeep; ++i) dotted += ".a";
  dotted += " = 1\n";
  for (const std::string& nested : {arrays, tables, dotted}) {
    KernelSummary added;
    ASSERT_LT(Manifest("deep").size() + nested.size(), 65536u);
    st = kernels_->Add(alice_, kSource, Manifest("deep") + nested, "sm_90a", &added);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << nested.substr(0, 20);
    EXPECT_NE(st.message().find("nest"), std::string::npos) << st.message().substr(0, 300);
  }
  EXPECT_TRUE(Add(alice_, "after").ok()) << "the daemon's side goes on";
}

// Where the compiler says it cannot confine a compile (here a stand-in whose probe fails, as on a
// host with neither namespaces nor Landlock), adding is refused with the reason and the key that
// allows it; with the key set, every start says compiles run unsandboxed, and adds work.
TEST_F(UserKernelBounds, AHostThatCannotSandboxRefusesAddsUnlessTheOperatorAllowsThem) {
  const std::filesystem::path stand_in = dir_ / "ablation-compile";
  {
    std::ofstream f(stand_in);
    f << "#!/bin/sh\n"
         "for a in \"$@\"; do\n"
         "  if [ \"$a\" = --probe-sandbox ]; then\n"
         "    echo 'ablation-compile: neither a mount namespace nor Landlock here' >&2; exit 3\n"
         "  fi\n"
         "done\n"
         "exec '" COMPILER_PATH "' \"$@\"\n";
  }
  ::chmod(stand_in.c_str(), 0755);
  options_.compiler_path = stand_in.string();
  std::vector<std::string> problems = Open();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("neither a mount namespace nor Landlock"), std::string::npos)
      << problems[0];
  Status st = Add(alice_, "a");
  EXPECT_EQ(st.code(), Code::kFailedPrecondition);
  EXPECT_NE(st.message().find("user_kernels.allow_unsandboxed_compiles = true"), std::string::npos)
      << st.message();
  EXPECT_TRUE(store_->ListUserKernels().empty());

  options_.allow_unsandboxed_compiles = true;
  problems = Open();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("UNSANDBOXED"), std::string::npos) << problems[0];
  EXPECT_NE(kernels_->SandboxState().find("UNSANDBOXED"), std::string::npos);
  EXPECT_TRUE(Add(alice_, "a").ok());
}

// A kernel's source is the owner's unless the configuration says otherwise.
TEST_F(UserKernelBounds, OnlyTheReadersTheConfigurationNamesSeeASource) {
  ASSERT_EQ(Open(), std::vector<std::string>{});
  ASSERT_TRUE(Add(alice_, "mine").ok());
  KernelSummary shown;
  ASSERT_TRUE(kernels_->Show(bob_, "mine", &shown).ok());
  EXPECT_EQ(shown.source, "");
  EXPECT_EQ(shown.manifest, "");
  EXPECT_NE(shown.source_withheld.find("source_readers"), std::string::npos);
  ASSERT_TRUE(kernels_->Show(alice_, "mine", &shown).ok());
  EXPECT_EQ(shown.source, kSource);
  options_.source_readers = "run";
  ASSERT_EQ(Open(), std::vector<std::string>{});
  ASSERT_TRUE(kernels_->Show(bob_, "mine", &shown).ok());
  EXPECT_EQ(shown.source, kSource);
  ASSERT_TRUE(kernels_->Show(KernelCaller{"eve", false, false}, "mine", &shown).ok());
  EXPECT_EQ(shown.source, "") << "a read-only caller is not of the run role";
}

}  // namespace
}  // namespace ablation::core
