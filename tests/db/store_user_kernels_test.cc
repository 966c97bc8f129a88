// User kernels in the store (schema v13): a kernel with its builds in one transaction, versions
// of one name (v20), removal that keeps what was stored, a restart that finds everything again.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "db/store.h"
#include "tests/db/db_test_support.h"
#include "tests/db/old_schemas.h"
#include "tests/db/store_test_support.h"

namespace ablation::db {
namespace {

using testing::StoreTest;

UserKernelRecord Kernel(const std::string& name) {
  UserKernelRecord k;
  k.name = name;
  k.owner = "alice";
  k.source = "extern \"C\" __global__ void tiled_gemm() {}\n";
  k.source_sha256 = std::string(64, 'a');
  k.manifest = "name = \"" + name + "\"\n";
  k.manifest_sha256 = std::string(64, 'b');
  return k;
}

UserKernelBuild Build(const std::string& variant, std::string cubin) {
  UserKernelBuild b;
  b.variant = variant;
  b.arch = "sm_90a";
  b.compiler = "nvrtc 13.0";
  b.options = "--gpu-architecture=sm_90a -DSTAGES=3";
  b.cubin = std::move(cubin);
  b.cubin_sha256 = std::string(64, 'c');
  b.registers = 96;
  b.static_smem_bytes = 1024;
  b.log = "ptxas info    : Used 96 registers";
  return b;
}

TEST_F(StoreTest, AUserKernelAndItsBuildsAreStoredTogetherAndReadBack) {
  std::string cubin(
      "\x7f"
      "ELF\0\x01\x02",
      7);  // binary, with a NUL inside
  const int64_t id = store_->InsertUserKernel(
      Kernel("tiled"), {Build("user.tiled.stages=2", cubin), Build("user.tiled.stages=3", "x")});
  EXPECT_GT(id, 0);
  const auto kernels = store_->ListUserKernels();
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].name, "tiled");
  EXPECT_EQ(kernels[0].owner, "alice");
  EXPECT_GT(kernels[0].created_at_ms, 0);
  const auto builds = store_->UserKernelBuilds(id, true);
  ASSERT_EQ(builds.size(), 2u);
  EXPECT_EQ(builds[0].variant, "user.tiled.stages=2");
  EXPECT_EQ(builds[0].cubin, cubin);
  EXPECT_EQ(builds[0].registers, 96);
  EXPECT_EQ(builds[0].kernel_id, id);
  EXPECT_TRUE(store_->UserKernelBuilds(id, false)[0].cubin.empty());  // not read unless asked
}

// v20: a name added again is its next version; the old one stays, each read by its number, the
// highest by default; a number is never given twice, removed versions counted.
TEST_F(StoreTest, ANameAddedAgainIsItsNextVersionAndTheOldOneStays) {
  const int64_t v1 = store_->InsertUserKernel(Kernel("tiled"), {});
  UserKernelRecord edited = Kernel("tiled");
  edited.source_sha256 = std::string(64, 'd');
  const int64_t v2 = store_->InsertUserKernel(edited, {Build("user.tiled.stages=2", "x")});
  const auto kernels = store_->ListUserKernels();
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].version, 1);
  EXPECT_EQ(kernels[1].version, 2);
  EXPECT_EQ(store_->GetUserKernel("tiled")->id, v2);
  EXPECT_EQ(store_->GetUserKernel("tiled", 1)->id, v1);
  EXPECT_EQ(store_->GetUserKernel("tiled", 2)->source_sha256, std::string(64, 'd'));
  EXPECT_FALSE(store_->GetUserKernel("tiled", 3).has_value());
  // One version removed: the other stays, and the next add is 3, not 2 again.
  EXPECT_TRUE(store_->RemoveUserKernel("tiled", 0, 2));
  EXPECT_EQ(store_->GetUserKernel("tiled")->id, v1);
  const int64_t v3 = store_->InsertUserKernel(Kernel("tiled"), {});
  EXPECT_EQ(store_->GetUserKernel("tiled")->id, v3);
  EXPECT_EQ(store_->GetUserKernel("tiled")->version, 3);
  UserKernelRecord again = Kernel("tiled");
  again.version = 2;
  try {
    store_->InsertUserKernel(again, {Build("user.tiled.stages=2", "x")});
    FAIL() << "a version number was given twice";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Error::Code::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("has had version 3"), std::string::npos) << e.what();
  }
  EXPECT_EQ(store_->ListUserKernels().size(), 2u);  // nothing of the refused one was kept
}

TEST_F(StoreTest, RemovingKeepsTheKernelAndItsBuilds) {
  const int64_t first = store_->InsertUserKernel(Kernel("tiled"), {Build("user.tiled.s=1", "x")});
  store_->InsertUserKernel(Kernel("tiled"), {});
  EXPECT_TRUE(store_->RemoveUserKernel("tiled", 0));  // every version
  EXPECT_FALSE(store_->RemoveUserKernel("tiled", 0));
  EXPECT_FALSE(store_->GetUserKernel("tiled").has_value());
  EXPECT_EQ(store_->UserKernelBuilds(first, false).size(), 1u);  // measurements may point at it
  const int64_t again = store_->InsertUserKernel(Kernel("tiled"), {});
  EXPECT_NE(again, first);
  ASSERT_TRUE(store_->GetUserKernel("tiled").has_value());
  EXPECT_EQ(store_->GetUserKernel("tiled")->id, again);
  EXPECT_EQ(store_->GetUserKernel("tiled")->version, 3);
}

TEST_F(StoreTest, UserKernelsSurviveAReopen) {
  store_->InsertUserKernel(Kernel("a"), {Build("user.a.x=1", "cubin-a")});
  store_->InsertUserKernel(Kernel("b"), {});
  store_.reset();
  store_ = Store::Open(path_);
  const auto kernels = store_->ListUserKernels();
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].name, "a");
  EXPECT_EQ(store_->UserKernelBuilds(kernels[0].id, true)[0].cubin, "cubin-a");
}

// v19: a cubin is stored compressed with its size (a big initialised __device__ array is mostly
// zeros), read back whole, and one build's cubin is read alone; the builds list without cubins
// says each one's size.
TEST_F(StoreTest, ACubinIsStoredCompressedAndReadBackExactly) {
  std::string cubin(8 << 20, '\0');
  cubin.replace(0, 4,
                "\x7f"
                "ELF");
  cubin[5 << 20] = '\x2a';
  const int64_t id = store_->InsertUserKernel(Kernel("big"), {Build("user.big.x=1", cubin)});
  const auto listed = store_->UserKernelBuilds(id, false);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].cubin, "");
  EXPECT_EQ(listed[0].cubin_bytes, int64_t(cubin.size()));
  EXPECT_EQ(store_->UserKernelCubin(listed[0].id), cubin);
  EXPECT_EQ(store_->UserKernelBuilds(id, true)[0].cubin, cubin);
  store_.reset();
  testing::RawDb raw(path_);
  EXPECT_EQ(raw.Text("SELECT cubin_encoding FROM user_kernel_builds"), "zlib");
  EXPECT_LT(raw.Int("SELECT length(cubin) FROM user_kernel_builds"), 1 << 20);
}

// A v18 database's builds (raw cubins) read back unchanged after the migration.
TEST_F(StoreTest, BuildsStoredBeforeCompressionReadBackRaw) {
  const int64_t id = store_->InsertUserKernel(Kernel("old"), {});
  store_.reset();
  {
    testing::RawDb raw(path_);
    testing::UndoV19(raw);
    raw.Exec(
        "INSERT INTO user_kernel_builds (kernel_id, variant, arch, compiler, options, cubin, "
        "cubin_sha256, registers, log, created_at_ms) VALUES (" +
        std::to_string(id) +
        ", 'user.old.x=1', 'sm_90a', 'nvrtc 13.0', '', x'7f454c46', '', 32, '', 1)");
    raw.Exec("PRAGMA user_version = 18");
  }
  store_ = Store::Open(path_);
  EXPECT_EQ(store_->GetUserKernel("old")->version, 1);  // v20: a kernel stored before is version 1
  const auto builds = store_->UserKernelBuilds(id, true);
  ASSERT_EQ(builds.size(), 1u);
  EXPECT_EQ(builds[0].cubin,
            "\x7f"
            "ELF");
  EXPECT_EQ(builds[0].cubin_bytes, 4);
  EXPECT_EQ(store_->UserKernelCubin(builds[0].id),
            "\x7f"
            "ELF");
}

}  // namespace
}  // namespace ablation::db
