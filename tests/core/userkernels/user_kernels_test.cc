// The user kernels a daemon holds (server/core/userkernels): who may add one, what is refused and
// why, everything compiled before anything is stored, removal by the owner or an admin, and a
// restart that holds them again. Compiles through the real ablation-compile; no GPU needed.
#include "server/core/userkernels/user_kernels.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "server/core/base/sha256.h"
#include "server/core/userkernels/compiler.h"
#include "tests/core/userkernels/user_kernels_fixture.h"

namespace ablation::core {
namespace {

constexpr const char* kSource = R"cu(
extern "C" __global__ void scale_gemm(const float* a, const float* b, float* c, int m, int n,
                                      int k) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m * n) c[i] = a[i % (m * k)] * b[i % (k * n)] * FACTOR + STEP;
}
)cu";

constexpr const char* kManifest = R"toml(
name = "scale"
entry = "scale_gemm"
[contract]
dtype = "fp32"
[launch]
block = "256"
grid = "ceil(M * N / 256)"
[[knob]]
name = "FACTOR"
values = [1, 2]
short = "f"
[[knob]]
name = "STEP"
values = [0, 3]
short = "st"
)toml";

class UserKernelsTest : public testing::UserKernelsFixture {
 protected:
  void SetUp() override {
    UserKernelsFixture::SetUp();
    Open();
  }
  void Open() { EXPECT_TRUE(UserKernelsFixture::Open(&builtin_).empty()); }

  kernels::Registry builtin_ = [] {
    kernels::Registry r;
    kernels::Variant v;
    v.name = "builtin_one";
    v.family = "builtin";
    r.Add(std::move(v));
    return r;
  }();
};

TEST_F(UserKernelsTest, OnlyAnAdminMayAddUnlessTheConfigurationLetsTheRunRole) {
  KernelSummary added;
  Status st = kernels_->Add(alice_, kSource, kManifest, "sm_90a", &added);
  EXPECT_EQ(st.code(), Code::kFailedPrecondition);
  EXPECT_NE(st.message().find("needs the admin role"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("add_role = \"run\""), std::string::npos) << st.message();
  options_.add_role = "run";
  Open();
  st = kernels_->Add(alice_, kSource, kManifest, "sm_90a", &added);
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_FALSE(kernels_
                   ->Add(KernelCaller{"eve", false, false}, kSource,
                         std::string(kManifest).replace(7, 5, "other"), "sm_90a", &added)
                   .ok());  // a read-only caller never
}

// A check compiles every knob set and keeps nothing: the run role may ask for one, a held
// kernel's name may be checked again (its edit), and the answer names each build.
TEST_F(UserKernelsTest, ACheckCompilesEveryKnobSetAndKeepsNothing) {
  KernelSummary checked;
  UserKernels::AddOptions check;
  check.check_only = true;
  check.source_name = "scale.cu";
  Status st = kernels_->Add(alice_, kSource, kManifest, "sm_90a", &checked, check);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(checked.name, "scale");
  EXPECT_EQ(checked.builds.size(), checked.variants.size());
  EXPECT_EQ(checked.builds.size(), 4u);
  for (const db::UserKernelBuild& b : checked.builds) {
    EXPECT_EQ(b.arch, "sm_90a");
    EXPECT_GT(b.registers, 0) << b.variant;
    EXPECT_TRUE(b.cubin.empty()) << "a check answers with no cubin";
  }
  EXPECT_TRUE(kernels_->List().empty());
  EXPECT_TRUE(store_->ListUserKernels().empty());
  // Held, the same name is checked again; a broken edit names the user's file and is a compile
  // error by its reason.
  KernelSummary added;
  ASSERT_TRUE(kernels_->Add(admin_, kSource, kManifest, "sm_90a", &added).ok());
  EXPECT_TRUE(kernels_->Add(alice_, kSource, kManifest, "sm_80", &checked, check).ok());
  std::string broken = kSource;
  broken.replace(broken.find("FACTOR + STEP"), 13, "FACTOR + STEPS");
  st = kernels_->Add(alice_, broken, kManifest, "sm_90a", &checked, check);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_EQ(st.reason(), kCompileError);
  EXPECT_NE(st.message().find("scale.cu:5:"), std::string::npos) << st.message();
  EXPECT_EQ(kernels_->List().size(), 1u);
  // A read-only caller may not make the daemon compile.
  EXPECT_EQ(
      kernels_
          ->Add(KernelCaller{"eve", false, false}, kSource, kManifest, "sm_90a", &checked, check)
          .code(),
      Code::kFailedPrecondition);
}

TEST_F(UserKernelsTest, EveryKnobSetIsCompiledAndStoredWithItsHashesAndOwner) {
  KernelSummary added;
  ASSERT_TRUE(kernels_->Add(admin_, kSource, kManifest, "sm_90a", &added).ok());
  EXPECT_EQ(added.name, "scale");
  EXPECT_EQ(added.owner, "root");
  EXPECT_EQ(added.dtype, "fp32");
  EXPECT_EQ(added.source_sha256, Sha256Hex(kSource));
  ASSERT_EQ(added.variants.size(), 4u);
  EXPECT_EQ(added.variants[3], "user.scale.factor=2.step=3");
  ASSERT_EQ(added.builds.size(), 4u);
  for (const db::UserKernelBuild& b : added.builds) {
    EXPECT_GT(b.registers, 0) << b.variant;
    EXPECT_EQ(b.arch, "sm_90a");
    EXPECT_EQ(b.compiler.rfind("nvrtc ", 0), 0u);
    EXPECT_EQ(b.cubin_sha256.size(), 64u);
  }
  EXPECT_NE(added.builds[3].options.find("-DFACTOR=2 -DSTEP=3"), std::string::npos);
  KernelSummary shown;
  ASSERT_TRUE(kernels_->Show(admin_, "scale", &shown).ok());
  EXPECT_EQ(shown.source, kSource);
  EXPECT_EQ(shown.manifest, kManifest);
  const auto variants = kernels_->Variants();
  ASSERT_EQ(variants.size(), 4u);
  EXPECT_EQ(variants[0].family, "user.scale");
  EXPECT_EQ(variants[0].can_implement(kernels::Problem{64, 64, 64, kernels::DType::kFP32}), "");
}

TEST_F(UserKernelsTest, ACompileErrorIsRefusedWithTheLogAndNothingIsStored) {
  KernelSummary added;
  std::string broken = kSource;
  broken.replace(broken.find("FACTOR + STEP"), 13, "FACTOR + STEPS");
  const Status st = kernels_->Add(admin_, broken, kManifest, "sm_90a", &added);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("user.scale.factor=1.step=0 does not compile"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("kernel.cu:5:"), std::string::npos) << st.message();
  EXPECT_EQ(st.reason(), kCompileError);
  EXPECT_TRUE(kernels_->List().empty());
  EXPECT_TRUE(store_->ListUserKernels().empty());
}

TEST_F(UserKernelsTest, ABadManifestOrAnOversizedSourceIsRefusedNamingWhat) {
  KernelSummary added;
  Status st =
      kernels_->Add(admin_, kSource, std::string(kManifest) + "[extra]\n", "sm_90a", &added);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("manifest.toml:17: extra: unknown key"), std::string::npos)
      << st.message();
  options_.manifest.max_source_bytes = 64;
  Open();
  st = kernels_->Add(admin_, kSource, kManifest, "sm_90a", &added);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("source: "), std::string::npos);
  EXPECT_NE(st.message().find("more than 64"), std::string::npos) << st.message();
}

// A held name added again is the kernel's next version, its owner's or an admin's to add; one
// identical to the newest is refused; a caller's kernels are counted by name, whatever their
// versions.
TEST_F(UserKernelsTest, ANameAddedAgainIsANewVersionOfItsOwnersAndACallerHoldsABoundedNumber) {
  options_.add_role = "run";
  options_.max_kernels_per_owner = 1;
  options_.max_versions_per_kernel = 2;
  Open();
  KernelSummary added;
  ASSERT_TRUE(kernels_->Add(alice_, kSource, kManifest, "sm_90a", &added).ok());
  EXPECT_EQ(added.version, 1);
  Status st =
      kernels_->Add(bob_, kSource + std::string("// bob's edit\n"), kManifest, "sm_90a", &added);
  EXPECT_EQ(st.code(), Code::kFailedPrecondition);
  EXPECT_NE(st.message().find("belongs to alice; only its owner or an admin may add a version"),
            std::string::npos)
      << st.message();
  st = kernels_->Add(alice_, kSource, kManifest, "sm_90a", &added);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("version 1's exactly; nothing to add"), std::string::npos)
      << st.message();
  // The edit: version 2, alice still holding one kernel.
  const std::string edited = std::string(kSource) + "// edited\n";
  ASSERT_TRUE(kernels_->Add(alice_, edited, kManifest, "sm_90a", &added).ok());
  EXPECT_EQ(added.version, 2);
  ASSERT_EQ(added.versions.size(), 2u);
  EXPECT_EQ(added.versions[0].source_sha256, Sha256Hex(kSource));
  EXPECT_EQ(added.versions[1].source_sha256, Sha256Hex(edited));
  EXPECT_EQ(added.versions[0].variants[0], "user.scale@1.factor=1.step=0");
  EXPECT_EQ(added.versions[1].variants[0], "user.scale.factor=1.step=0");
  st = kernels_->Add(admin_, edited + "// 3\n", kManifest, "sm_90a", &added);
  EXPECT_EQ(st.code(), Code::kFailedPrecondition);
  EXPECT_NE(st.message().find("holds 2 versions, the most one kernel may"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("kernel remove scale@1"), std::string::npos) << st.message();
  std::string other = kManifest;
  other.replace(other.find("\"scale\""), 7, "\"scale2\"");
  st = kernels_->Add(alice_, kSource, other, "sm_90a", &added);
  EXPECT_EQ(st.code(), Code::kFailedPrecondition);
  EXPECT_NE(st.message().find("alice holds 1 user kernels (with those compiling), the most one "
                              "caller may"),
            std::string::npos)
      << st.message();
  EXPECT_TRUE(kernels_->Add(bob_, kSource, other, "sm_90a", &added).ok());
}

// Every version runs: the newest under the plain names (and its number), each older one under
// its own, each with its own build; Show takes NAME@V; one version removed leaves the others,
// the one before becoming the newest; a restart holds every version again.
TEST_F(UserKernelsTest, EveryVersionRunsUnderItsNameAndOneRemovedLeavesTheOthers) {
  KernelSummary added;
  ASSERT_TRUE(kernels_->Add(admin_, kSource, kManifest, "sm_90a", &added).ok());
  const std::string edited = std::string(kSource) + "// edited\n";
  ASSERT_TRUE(kernels_->Add(admin_, edited, kManifest, "sm_90a", &added).ok());
  auto catalog = kernels_->Catalog();
  const kernels::Variant* newest = catalog->Find("user.scale.factor=2.step=3");
  const kernels::Variant* first = catalog->Find("user.scale@1.factor=2.step=3");
  ASSERT_NE(newest, nullptr);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(newest->Param("version"), "2");
  EXPECT_EQ(first->Param("version"), "1");
  EXPECT_EQ(first->short_name, "scale@1_f2_st3");
  ASSERT_TRUE(newest->code && first->code);
  EXPECT_NE(newest->code->build_id, first->code->build_id);
  EXPECT_EQ(catalog->Find("user.scale@2.factor=2.step=3"), nullptr);  // the newest: plain name
  EXPECT_EQ(kernels_->Variants().size(), 8u);
  const auto ladders = kernels_->VersionLadders();
  ASSERT_EQ(ladders.size(), 1u);
  ASSERT_EQ(ladders[0].versions.size(), 2u);
  EXPECT_EQ(ladders[0].versions[0].second[3], "user.scale@1.factor=2.step=3");
  EXPECT_EQ(ladders[0].versions[1].second[3], "user.scale.factor=2.step=3");

  KernelSummary shown;
  ASSERT_TRUE(kernels_->Show(admin_, "scale@1", &shown).ok());
  EXPECT_EQ(shown.version, 1);
  EXPECT_EQ(shown.source, kSource);
  EXPECT_EQ(shown.builds[0].variant, "user.scale@1.factor=1.step=0");
  ASSERT_TRUE(kernels_->Show(admin_, "scale@latest", &shown).ok());
  EXPECT_EQ(shown.source, edited);
  Status st = kernels_->Show(admin_, "scale@7", &shown);
  EXPECT_EQ(st.code(), Code::kNotFound);
  EXPECT_NE(st.message().find("has no version '7' (held: 1, 2; or @latest)"), std::string::npos)
      << st.message();

  Open();  // a restart holds both
  EXPECT_NE(kernels_->Catalog()->Find("user.scale@1.factor=2.step=3"), nullptr);
  ASSERT_TRUE(kernels_->Remove(admin_, "scale@2").ok());
  catalog = kernels_->Catalog();
  ASSERT_NE(catalog->Find("user.scale.factor=2.step=3"), nullptr);
  EXPECT_EQ(catalog->Find("user.scale.factor=2.step=3")->Param("version"), "1");
  EXPECT_EQ(catalog->Find("user.scale@1.factor=2.step=3"), nullptr);
  ASSERT_EQ(kernels_->List().size(), 1u);
  EXPECT_EQ(kernels_->List()[0].version, 1);
  // The next add is version 3: a number is never given twice.
  ASSERT_TRUE(kernels_->Add(admin_, edited + "// 3\n", kManifest, "sm_90a", &added).ok());
  EXPECT_EQ(added.version, 3);
  ASSERT_TRUE(kernels_->Remove(admin_, "scale").ok());  // every version
  EXPECT_TRUE(kernels_->List().empty());
}

// A PTX kernel from another compiler (examples/user-kernels/ptx: nvcc -ptx) is added through the
// sandboxed compiler like a CUDA one, its build with ptxas' report; a source in the other
// language than the manifest says is refused naming the key to set.
TEST_F(UserKernelsTest, APtxKernelIsAddedThroughTheSandboxedCompiler) {
  const auto read = [](const std::string& name) {
    std::ifstream in(std::string(SOURCE_DIR) + "/examples/user-kernels/ptx/" + name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  const std::string ptx = read("tiled_gemm_u4.ptx"), manifest = read("tiled_gemm_u4.toml");
  ASSERT_FALSE(ptx.empty());
  KernelSummary added;
  UserKernels::AddOptions how;
  how.source_name = "tiled_gemm_u4.ptx";
  Status st = kernels_->Add(admin_, ptx, manifest, "sm_90a", &added, how);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(added.builds.size(), 1u);
  EXPECT_EQ(added.builds[0].variant, "user.tiled_ptx.pad=1.unroll=4");
  EXPECT_GT(added.builds[0].registers, 0);
  EXPECT_NE(added.builds[0].options.find("nvjitlink"), std::string::npos);
  ASSERT_NE(kernels_->Catalog()->Find("user.tiled_ptx.pad=1.unroll=4"), nullptr);

  std::string as_cuda = manifest;
  as_cuda.replace(as_cuda.find("language = \"ptx\"\n"), 17, "");
  st = kernels_->Add(admin_, ptx, as_cuda, "sm_90a", &added, how);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("tiled_gemm_u4.ptx: this source is PTX (it has a .version "
                              "directive), but the manifest's language is cuda: add language = "
                              "\"ptx\""),
            std::string::npos)
      << st.message();
  st = kernels_->Add(admin_, kSource, manifest, "sm_90a", &added);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("no PTX .version directive"), std::string::npos) << st.message();
}

TEST_F(UserKernelsTest, TheOwnerOrAnAdminRemovesAndTheRowsStay) {
  options_.add_role = "run";
  Open();
  KernelSummary added;
  ASSERT_TRUE(kernels_->Add(alice_, kSource, kManifest, "sm_90a", &added).ok());
  Status st = kernels_->Remove(bob_, "scale");
  EXPECT_EQ(st.code(), Code::kFailedPrecondition);
  EXPECT_NE(st.message().find("belongs to alice"), std::string::npos);
  EXPECT_TRUE(kernels_->Remove(alice_, "scale").ok());
  EXPECT_EQ(kernels_->Remove(admin_, "scale").code(), Code::kNotFound);
  EXPECT_TRUE(kernels_->List().empty());
  EXPECT_EQ(store_->UserKernelBuilds(1, false).size(), 4u);  // kept for what measured with them
}

TEST_F(UserKernelsTest, ARestartHoldsEveryStoredKernelAgain) {
  KernelSummary added;
  ASSERT_TRUE(kernels_->Add(admin_, kSource, kManifest, "sm_90a", &added).ok());
  Open();  // a new daemon on the same database
  const auto held = kernels_->List();
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].name, "scale");
  EXPECT_EQ(held[0].builds.size(), 4u);
  EXPECT_EQ(kernels_->Variants().size(), 4u);
}

// What runs are planned against: the built-in catalog and every held kernel's variants, each
// with its build; a snapshot taken before a removal keeps the removed kernel's variants.
TEST_F(UserKernelsTest, TheCatalogHoldsBuiltInAndUserVariantsWithTheirBuilds) {
  EXPECT_EQ(kernels_->Catalog()->All().size(), 1u);
  KernelSummary added;
  ASSERT_TRUE(kernels_->Add(admin_, kSource, kManifest, "sm_90a", &added).ok());
  std::shared_ptr<const kernels::Registry> before = kernels_->Catalog();
  ASSERT_EQ(before->All().size(), 5u);
  EXPECT_NE(before->Find("builtin_one"), nullptr);
  EXPECT_EQ(before->Find("builtin_one")->code, nullptr);
  const kernels::Variant* v = before->Find("user.scale.factor=2.step=3");
  ASSERT_NE(v, nullptr);
  ASSERT_NE(v->code, nullptr);
  EXPECT_EQ(v->code->entry, "scale_gemm");
  // The cubin is read from the store when asked, not held by the catalog.
  const std::string cubin = v->code->cubin();
  EXPECT_EQ(cubin.substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_EQ(v->code->cubin_sha256, Sha256Hex(cubin));
  EXPECT_EQ(v->code->cubin_bytes, int64_t(cubin.size()));
  EXPECT_GT(v->code->build_id, 0);
  EXPECT_NE(v->code->manifest.find("name = \"scale\""), std::string::npos);
  // Each variant its own build.
  EXPECT_NE(before->Find("user.scale.factor=1.step=0")->code->build_id, v->code->build_id);

  ASSERT_TRUE(kernels_->Remove(admin_, "scale").ok());
  EXPECT_EQ(kernels_->Catalog()->All().size(), 1u);
  EXPECT_NE(before->Find("user.scale.factor=2.step=3"), nullptr)
      << "a run planned before the removal keeps its variants";

  // A restart makes the same catalog from the store.
  ASSERT_TRUE(kernels_->Add(admin_, kSource, kManifest, "sm_90a", &added).ok());
  Open();
  const kernels::Variant* again = kernels_->Catalog()->Find("user.scale.factor=2.step=3");
  ASSERT_NE(again, nullptr);
  ASSERT_NE(again->code, nullptr);
  EXPECT_FALSE(again->code->cubin().empty());
}

// Builds record their compiler: a daemon whose compiler is another compiles every knob set again
// at start, keeps the old builds (rows point at them) and runs the new ones.
TEST_F(UserKernelsTest, BuildsOfAnotherCompilerAreMadeAgainAtStartAndTheOldOnesKept) {
  const std::string compiler = CompilerVersionOf(COMPILER_PATH);
  ASSERT_EQ(compiler.rfind("nvrtc ", 0), 0u) << compiler;
  KernelSummary added;
  ASSERT_TRUE(kernels_->Add(admin_, kSource, kManifest, "sm_90a", &added).ok());
  const int64_t old_build = kernels_->Catalog()->Find("user.scale.factor=2.step=3")->code->build_id;
  kernels_.reset();
  {
    db::testing::RawDb raw((dir_ / "results.db").string());
    raw.Exec("UPDATE user_kernel_builds SET compiler = 'nvrtc 12.0'");
  }
  kernels_ = std::make_unique<UserKernels>(store_.get(), options_, &builtin_);
  std::vector<std::string> problems;
  kernels_->Load(&problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0], "user kernel scale: 4 knob sets compiled again with " + compiler);
  const kernels::Variant* v = kernels_->Catalog()->Find("user.scale.factor=2.step=3");
  ASSERT_NE(v, nullptr);
  EXPECT_NE(v->code->build_id, old_build) << "the new compiler's build runs";
  KernelSummary shown;
  ASSERT_TRUE(kernels_->Show(admin_, "scale", &shown).ok());
  EXPECT_EQ(shown.builds.size(), 8u) << "the old builds are kept beside the new";
  // Started again with the same compiler: nothing to do.
  problems.clear();
  kernels_->Load(&problems);
  EXPECT_TRUE(problems.empty());
}

}  // namespace
}  // namespace ablation::core
