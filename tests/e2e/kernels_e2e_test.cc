// User kernels end to end: the real client adds the repository's example kernel to a real daemon
// (the fake worker; NVRTC compiles without a GPU), lists, shows and removes it; a compile error
// comes back with the compiler's log; who may add and remove is enforced; a restarted daemon
// holds what was added.
#include <signal.h>

#include <unistd.h>
#include <filesystem>

#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernels/sm90/sm90_buckets.h"
#include "tests/e2e/daemon_fixture.h"
#include "tests/e2e/harness.h"

namespace ablation::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace sm90 = ::ablation::kernels::sm90;
using ::ablation::kernels::DType;

const std::string kExamples = std::string(SOURCE_DIR) + "/examples/user-kernels";

class KernelsE2E : public DaemonFixture {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  // A daemon whose configuration names the compiler and lets the run role add kernels.
  void StartDaemon(const std::string& extra_config = "add_role = \"run\"\n",
                   std::map<std::string, std::string> env = {}) {
    if (daemon_) daemon_->Stop(SIGTERM);
    const std::string config = Write(
        "ablationd.toml", "[user_kernels]\ncompiler = \"" COMPILER_PATH "\"\n" + extra_config);
    StartFakeDaemon(std::move(env), {"--config", config});
  }
  // A run of `variant` (at `size`, or its default sizes) verified: it succeeds, its row stands at
  // `shape` and its check passed.
  void ExpectRunsVerified(const std::string& variant, const std::string& size,
                          const std::string& shape) {
    std::vector<std::string> args = {"--format", "csv", "run", "--variant", variant, "--verify"};
    if (!size.empty()) args.insert(args.end(), {"--size", size});
    const CommandResult run = Client(args);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_THAT(run.out, HasSubstr(variant + ",bf16," + shape + ","));
    EXPECT_THAT(run.out, HasSubstr(",passed,"));
  }

  CommandResult AddExample() {
    return Client({"kernel", "add", kExamples + "/tiled_gemm.cu", "--manifest",
                   kExamples + "/tiled_gemm.toml"});
  }
};

// A daemon given another worker (here the test double, in another folder) and no
// [user_kernels] compiler finds the compiler beside its own binary, as an install puts them.
TEST_F(KernelsE2E, TheCompilerIsFoundBesideTheDaemonWhateverTheWorker) {
  const std::string config = Write("ablationd.toml", "[user_kernels]\nadd_role = \"run\"\n");
  StartFakeDaemon({}, {"--config", config});
  CommandResult add = AddExample();
  ASSERT_EQ(add.exit_code, 0) << add.out << add.err;
  EXPECT_THAT(add.err, HasSubstr("added user kernel tiled: 4 variants compiled"));
}

// `kernel check` on a daemon with no usable GPU: the architecture named, every knob set compiled,
// nothing kept; a broken source exits 1 in the user's words, a bad manifest 65, no --arch 69.
TEST_F(KernelsE2E, KernelCheckNeedsNoGpuAndKeepsNothing) {
  StartDaemon("add_role = \"run\"\n", {{"ABLATION_FAKE_NO_DEVICE", "no CUDA device (test)"}});
  const std::string manifest = kExamples + "/tiled_gemm.toml";
  CommandResult check = Client({"kernel", "check", kExamples + "/tiled_gemm.cu", "--manifest",
                                manifest, "--arch", "sm_90a"});
  ASSERT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_THAT(check.err,
              HasSubstr("checked user kernel tiled: 4 variants compiled for sm_90a, nothing kept"));
  EXPECT_THAT(check.out, HasSubstr("user.tiled.pad=1.unroll=4"));
  EXPECT_EQ(Client({"kernel", "list", "--format", "csv"}).out.find("tiled,"), std::string::npos);

  std::ifstream in(kExamples + "/tiled_gemm.cu");
  std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  source.replace(source.find("acc += As"), 9, "acc += Az");
  CommandResult broken =
      Client({"kernel", "check", Write("edit.cu", source), "-m", manifest, "--arch", "sm_90a"});
  EXPECT_EQ(broken.exit_code, 1) << broken.err;
  EXPECT_THAT(broken.err, HasSubstr("edit.cu:23:"));
  EXPECT_THAT(broken.err, HasSubstr(": error: identifier \"Az\" is undefined"));
  EXPECT_EQ(broken.err.find('\0'), std::string::npos);

  CommandResult bad =
      Client({"kernel", "check", kExamples + "/tiled_gemm.cu", "-m",
              Write("t.toml", "name = \"tiled\"\nentry = 3\n"), "--arch", "sm_90a"});
  EXPECT_EQ(bad.exit_code, 65) << bad.err;
  EXPECT_THAT(bad.err, HasSubstr("t.toml:2:"));

  CommandResult no_arch = Client({"kernel", "check", kExamples + "/tiled_gemm.cu", "-m", manifest});
  EXPECT_EQ(no_arch.exit_code, 69) << no_arch.err;
  EXPECT_THAT(no_arch.err, HasSubstr("a check can name one (arch)"));
  CommandResult odd_arch =
      Client({"kernel", "check", kExamples + "/tiled_gemm.cu", "-m", manifest, "--arch", "sm_90b"});
  EXPECT_EQ(odd_arch.exit_code, 65) << odd_arch.err;
  EXPECT_THAT(odd_arch.err, HasSubstr("arch: 'sm_90b' is not an architecture"));
}

// A kernel edited and added again under its name: compare of a run before and one after names
// the builds each ran, with their source digests, beside the row's change.
// The edit loop: the kernel added, its edit added under the same name (version 2, version 1
// kept), both run in one run, paired, and the report gives the change between the versions with
// its interval, in time, work (cycles) and clock; `kernel diff` prints the edit; `kernel show`
// lists the versions; the versions are a preset; and `compare` of a run of each names the
// versions and digests.
TEST_F(KernelsE2E, AnEditIsANewVersionMeasuredPairedAgainstTheOld) {
  StartDaemon();
  ASSERT_EQ(AddExample().exit_code, 0);
  auto digest = [&](const std::string& name) {
    const std::string json = Client({"--format", "json", "kernel", "show", name}).out;
    const std::size_t at = json.find("\"source_sha256\":\"");
    return at == std::string::npos ? std::string() : json.substr(at + 17, 12);
  };
  const std::string before = digest("tiled");
  ASSERT_EQ(before.size(), 12u);
  const std::vector<std::string> run = {"run", "--variant", "user.tiled.pad=0.unroll=1", "--shape",
                                        "256"};
  ASSERT_EQ(Client(run).exit_code, 0);
  std::ifstream in(kExamples + "/tiled_gemm.cu");
  const std::string source = "// edited\n" + std::string((std::istreambuf_iterator<char>(in)),
                                                         std::istreambuf_iterator<char>());
  const std::string edited = Write("tiled_gemm.cu", source);
  const CommandResult added =
      Client({"kernel", "add", edited, "--manifest", kExamples + "/tiled_gemm.toml"});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  EXPECT_THAT(added.err, HasSubstr("added user kernel tiled version 2 (the older ones stay"));
  // The same edit again is no version.
  const CommandResult again =
      Client({"kernel", "add", edited, "--manifest", kExamples + "/tiled_gemm.toml"});
  EXPECT_EQ(again.exit_code, 65);
  EXPECT_THAT(again.err, HasSubstr("version 2's exactly; nothing to add"));
  const std::string after = digest("tiled");
  ASSERT_NE(after, before);
  EXPECT_EQ(digest("tiled@1"), before);
  const CommandResult show = Client({"kernel", "show", "tiled"});
  EXPECT_THAT(show.out, HasSubstr("user kernel tiled version 2 of 2"));
  EXPECT_THAT(show.out, HasSubstr(before));
  EXPECT_THAT(show.out, HasSubstr("user.tiled@1.pad=0.unroll=1 ..."));
  const CommandResult diff = Client({"kernel", "diff", "tiled"});
  EXPECT_EQ(diff.exit_code, 1) << diff.err;  // they differ, as diff says it
  EXPECT_THAT(diff.out, HasSubstr("--- tiled@1/source\n+++ tiled@2/source\n"));
  EXPECT_THAT(diff.out, HasSubstr("\n+// edited\n"));
  EXPECT_EQ(Client({"kernel", "diff", "tiled", "2", "2"}).exit_code, 0);
  EXPECT_EQ(Client({"kernel", "diff", "tiled", "1", "5"}).exit_code, 65);

  // Both versions in one run: paired, the change named by the versions.
  const CommandResult paired =
      Client({"run", "--variant", "user.tiled@1.pad=0.unroll=1", "--variant",
              "user.tiled@latest.pad=0.unroll=1", "--shape", "256", "--rounds", "3"});
  ASSERT_EQ(paired.exit_code, 0) << paired.err;
  // The run's own answer has the change between the versions.
  EXPECT_THAT(paired.out,
              HasSubstr("User kernel tiled: its versions, each against the one before"));
  const CommandResult report = Client({"report", "latest", "--format", "md"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_THAT(report.out,
              HasSubstr("User kernel tiled: its versions, each against the one before"));
  EXPECT_THAT(report.out, HasSubstr("pad=0 unroll=1: version 1 (source " + before + ")"));
  EXPECT_THAT(report.out, HasSubstr("pad=0 unroll=1: version 2 (source " + after + ")"));
  const CommandResult json = Client({"--format", "json", "report", "latest"});
  EXPECT_THAT(json.out, HasSubstr("\"vs\":\"v1\""));
  EXPECT_THAT(json.out, HasSubstr("\"paired\":true"));
  EXPECT_THAT(json.out, HasSubstr("\"clock_change\":"));

  const CommandResult preset = Client({"presets", "user.tiled.versions"});
  ASSERT_EQ(preset.exit_code, 0) << preset.err;
  EXPECT_THAT(preset.out, HasSubstr("user.tiled@1.pad=1.unroll=4"));
  // The versions preset sweeps both at every knob set; its section is the one drawn first.
  const CommandResult sweep =
      Client({"-q", "sweep", "--preset", "user.tiled.versions", "--shape", "256"});
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  const CommandResult swept = Client({"report", "latest", "--format", "md"});
  EXPECT_THAT(swept.out, HasSubstr("pad=1 unroll=4: version 2 (source " + after + ")"));
  const size_t versions_at = swept.out.find("its versions, each against the one before");
  ASSERT_NE(versions_at, std::string::npos);
  EXPECT_LT(versions_at, swept.out.find("All measurements of the run"));

  ASSERT_EQ(Client(run).exit_code, 0);  // run 4: the plain name, now version 2
  const CommandResult compare = Client({"compare", "1", "4"});
  EXPECT_THAT(compare.out, HasSubstr("warning: user.tiled.pad=0.unroll=1 bf16 256x256x256 ran "
                                     "other code in run 4: version 1, build "));
  EXPECT_THAT(compare.out, HasSubstr("(source " + before + ", cubin "));
  EXPECT_THAT(compare.out, HasSubstr(") -> version 2, build "));
  EXPECT_THAT(compare.out, HasSubstr("(source " + after + ", cubin "));
  const CommandResult cjson = Client({"--format", "json", "compare", "1", "4"});
  EXPECT_THAT(cjson.out, HasSubstr("\"build_change\":\"version 1, build "));
  // history names the edit where the series' code changed
  const CommandResult history = Client({"--format", "csv", "history", "user.tiled.pad=0.unroll=1"});
  EXPECT_THAT(history.out, HasSubstr("version 1 -> 2 (source " + before + " -> " + after + ")"));
}

TEST_F(KernelsE2E, TheExampleIsAddedCompiledListedShownAndRemoved) {
  StartDaemon();
  CommandResult add = AddExample();
  ASSERT_EQ(add.exit_code, 0) << add.out << add.err;
  EXPECT_THAT(add.err, HasSubstr("added user kernel tiled: 4 variants compiled"));
  EXPECT_THAT(add.out, HasSubstr("user.tiled.pad=1.unroll=4"));
  EXPECT_THAT(add.out, HasSubstr("sm_90a"));  // the fake worker's GPU is a 9.0

  CommandResult list = Client({"kernel", "list", "--format", "csv"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_THAT(list.out, HasSubstr("tiled,1,1,,bf16,4,tiled_gemm,"));

  CommandResult show = Client({"kernel", "show", "tiled", "--source", "--width", "0"});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr("user kernel tiled version 1 of 1 (entry tiled_gemm, bf16"));
  EXPECT_THAT(show.out, HasSubstr("-DPAD=0 -DUNROLL=1"));
  EXPECT_THAT(show.out, HasSubstr("__shared__ float As[TILE][TILE + PAD];"));

  // The short name (the manifest's knob shorts: pad, u) is taken wherever a name is.
  CommandResult by_short = Client({"variants", "tiled_pad1_u4", "--format", "csv"});
  ASSERT_EQ(by_short.exit_code, 0) << by_short.err;
  EXPECT_THAT(by_short.out, HasSubstr("user.tiled.pad=1.unroll=4,"));
  CommandResult run_short = Client({"run", "--variant", "tiled_pad0_u1", "--shape", "256"});
  ASSERT_EQ(run_short.exit_code, 0) << run_short.err;
  EXPECT_THAT(Client({"results", "latest", "--format", "csv"}).out,
              HasSubstr("user.tiled.pad=0.unroll=1"));
  CommandResult variants = Client({"variants", "user.tiled.*", "--format", "csv"});
  ASSERT_EQ(variants.exit_code, 0) << variants.err;
  // A user kernel's launch (16 x 16 threads, no dynamic shared memory) and its build's registers
  // and static shared memory (two 16 x 16(+PAD) float tiles) from ptxas, not zeros.
  EXPECT_THAT(variants.out, HasSubstr("name,family,dtypes,tile,threads,smem_bytes,registers,"
                                      "static_smem_bytes"));
  EXPECT_THAT(variants.out, HasSubstr("user.tiled.pad=0.unroll=1,user.tiled,bf16,,256,0,"));
  EXPECT_THAT(variants.out, HasSubstr(",2048\r\n"));  // 2 x 16 x 16 x 4 bytes with PAD = 0
  EXPECT_THAT(variants.out, HasSubstr("user.tiled.pad=1.unroll=4,user.tiled,"));
  EXPECT_THAT(Client({"variants", "--format", "csv"}).out, HasSubstr("user.tiled.pad=0.unroll=1,"));

  CommandResult json = Client({"kernel", "show", "tiled", "--format", "json"});
  EXPECT_THAT(json.out, HasSubstr("\"registers\":"));

  CommandResult again = AddExample();  // the same source and manifest: no new version
  EXPECT_EQ(again.exit_code, 65);
  EXPECT_THAT(again.err, HasSubstr("version 1's exactly; nothing to add"));

  ASSERT_EQ(Client({"kernel", "remove", "tiled"}).exit_code, 0);
  CommandResult after = Client({"kernel", "list", "--format", "csv"});
  EXPECT_THAT(after.out, ::testing::Not(HasSubstr("tiled,")));
  CommandResult gone = Client({"kernel", "show", "tiled"});
  EXPECT_NE(gone.exit_code, 0);
  EXPECT_THAT(gone.err, HasSubstr("no user kernel named 'tiled'"));
}

// A source whose comments hold a right-to-left override and a C1 control ("Trojan Source": the
// terminal shows other code than the one compiled) is shown with them escaped.
TEST_F(KernelsE2E, KernelShowEscapesBidiAndC1Characters) {
  StartDaemon();
  std::ifstream in(kExamples + "/tiled_gemm.cu");
  std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  source =
      "// access \xE2\x80\xAE level \xC2\x9B"
      "2J\n" +
      source;
  ASSERT_EQ(Client({"kernel", "add", Write("trojan.cu", source), "--manifest",
                    kExamples + "/tiled_gemm.toml"})
                .exit_code,
            0);
  CommandResult show = Client({"kernel", "show", "tiled", "--source", "--width", "0"});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr("// access \\u{202E} level \\u{009B}2J"));
  EXPECT_EQ(show.out.find("\xE2\x80\xAE"), std::string::npos);
  EXPECT_EQ(show.out.find("\xC2\x9B"), std::string::npos);
}

TEST_F(KernelsE2E, ACompileErrorComesBackWithTheCompilersLogAndNothingIsHeld) {
  StartDaemon();
  std::ifstream in(kExamples + "/tiled_gemm.cu");
  std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  source.replace(source.find("acc += As"), 9, "acc += Az");
  CommandResult add = Client(
      {"kernel", "add", Write("broken.cu", source), "--manifest", kExamples + "/tiled_gemm.toml"});
  EXPECT_EQ(add.exit_code, 1) << "a compile error is the kernel's failure, not a refusal";
  EXPECT_THAT(add.err, HasSubstr("user.tiled.pad=0.unroll=1 does not compile"));
  // In the user's file name, in the form problem matchers read: line 23, the column of "Az".
  EXPECT_THAT(add.err, HasSubstr("broken.cu:23:"));
  EXPECT_THAT(add.err, HasSubstr(": error: identifier \"Az\" is undefined"));
  EXPECT_THAT(add.err, HasSubstr("\"Az\""));
  EXPECT_EQ(Client({"kernel", "list", "--format", "csv"}).out.find("tiled,"), std::string::npos);
}

// A log of hundreds of errors (64 KiB bounded in the daemon) reaches the real client: its first
// errors and how much was withheld, not gRPC's "trailing metadata size exceeds limit" (a compile
// error over about 8 KiB could not be read by default clients before).
TEST_F(KernelsE2E, ACompileLogLongerThanAnErrorMayBeComesBackCutAndReadable) {
  StartDaemon();
  std::ifstream in(kExamples + "/tiled_gemm.cu");
  std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string broken;
  for (int i = 0; i < 400; ++i)
    broken += "__device__ int broken_" + std::to_string(i) + "() { return undefined_" +
              std::to_string(i) + "; }\n";
  CommandResult add = Client({"kernel", "add", Write("loud.cu", broken + source), "--manifest",
                              kExamples + "/tiled_gemm.toml"});
  EXPECT_NE(add.exit_code, 0);
  EXPECT_THAT(add.err, HasSubstr("does not compile"));
  EXPECT_THAT(add.err, HasSubstr("undefined_0"));
  EXPECT_THAT(add.err, HasSubstr("more bytes of this message withheld"));
  EXPECT_THAT(add.err, ::testing::Not(HasSubstr("metadata")));
  EXPECT_LT(add.err.size(), 8000u);
}

TEST_F(KernelsE2E, AManifestMistakeIsNamedByLineAndKey) {
  StartDaemon();
  CommandResult add = Client({"kernel", "add", kExamples + "/tiled_gemm.cu", "--manifest",
                              Write("bad.toml",
                                    "name = \"tiled\"\nentry = \"tiled_gemm\"\n[contract]\n"
                                    "dtype = \"bf17\"\n")});
  EXPECT_EQ(add.exit_code, 65);
  EXPECT_THAT(add.err, HasSubstr("bad.toml:4: contract.dtype: 'bf17' is not bf16"));
}

TEST_F(KernelsE2E, AnAdminAddsWhereTheRunRoleMayNot) {
  StartDaemon("");  // add_role unset; the local caller without tokens is an anonymous admin
  ASSERT_EQ(AddExample().exit_code, 0);  // admin may
}

TEST_F(KernelsE2E, ARestartedDaemonHoldsWhatWasAdded) {
  StartDaemon();
  ASSERT_EQ(AddExample().exit_code, 0);
  StartDaemon();
  CommandResult list = Client({"kernel", "list", "--format", "csv"});
  EXPECT_THAT(list.out, HasSubstr("tiled,1,1,,bf16,4,"));
  CommandResult show = Client({"kernel", "show", "tiled", "--format", "csv"});
  EXPECT_THAT(show.out, HasSubstr("user.tiled.pad=1.unroll=4,sm_90a,"));
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A run names user variants beside cuBLAS; every task carries their builds (the fake worker, as
// the real one, refuses a user variant without its code) and every row points at its build.
TEST_F(KernelsE2E, UserVariantsRunBesideCublasAndEachRowPointsAtItsBuild) {
  StartDaemon();
  ASSERT_EQ(AddExample().exit_code, 0);
  CommandResult run =
      Client({"run", "--variant", "user.tiled.*", "--variant", "cublas_bf16", "--shape", "256"});
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  CommandResult rows = Client({"--format", "json", "results", "latest"});
  ASSERT_EQ(rows.exit_code, 0) << rows.err;
  EXPECT_THAT(rows.out, HasSubstr("\"variant\":\"user.tiled.pad=1.unroll=4\""));
  EXPECT_THAT(rows.out, HasSubstr("\"variant\":\"cublas_bf16\""));
  // The four user rows point at their builds (ids 1 to 4); cuBLAS's at none.
  for (const char* id : {"1", "2", "3", "4"})
    EXPECT_THAT(rows.out, HasSubstr("\"user_build_id\":" + std::string(id) + ","));
  EXPECT_EQ(Count(rows.out, "\"user_build_id\":0,"), 1u) << rows.out;
  EXPECT_EQ(Count(rows.out, "\"status\":\"ok\""), 5u) << rows.out;
  // A user variant is verified before it is timed even where the run did not ask (no --verify).
  EXPECT_EQ(Count(rows.out, "\"verification_outcome\":\"passed\""), 4u);

  // Removed, the kernel is no longer named by a run; its rows stay.
  ASSERT_EQ(Client({"kernel", "remove", "tiled"}).exit_code, 0);
  CommandResult again = Client({"run", "--variant", "user.tiled.*", "--shape", "256"});
  EXPECT_NE(again.exit_code, 0);
  EXPECT_THAT(again.err, HasSubstr("user.tiled.*"));
  EXPECT_EQ(Count(Client({"--format", "json", "results", "--variant", "user.tiled.*"}).out,
                  "\"user_build_id\":"),
            4u);
}

// Every example in the repository is added whole: each knob set compiles, with no spills.
TEST_F(KernelsE2E, EveryExampleCompilesInEveryKnobSetWithoutSpills) {
  StartDaemon();
  for (const auto& [file, added] : std::vector<std::pair<std::string, std::string>>{
           {"pipe_gemm", "added user kernel pipe: 4 variants compiled"},
           {"mma_tiled", "added user kernel mma_tiled: 6 variants compiled"},
           {"tiled_gemm", "added user kernel tiled: 4 variants compiled"}}) {
    CommandResult add = Client({"kernel", "add", kExamples + "/" + file + ".cu", "--manifest",
                                kExamples + "/" + file + ".toml"});
    ASSERT_EQ(add.exit_code, 0) << file << ": " << add.err;
    EXPECT_THAT(add.err, HasSubstr(added));
  }
  for (const char* name : {"pipe", "mma_tiled", "tiled"}) {
    CommandResult show = Client({"--format", "json", "kernel", "show", name});
    ASSERT_EQ(show.exit_code, 0) << show.err;
    // A JSON number does not start with 0 unless it is 0.
    EXPECT_EQ(Count(show.out, "\"spill_store_bytes\":"), Count(show.out, "\"spill_store_bytes\":0"))
        << name << " spills: " << show.out;
    EXPECT_GT(Count(show.out, "\"spill_store_bytes\":0"), 3u);
  }
}

// Kernels of their own contract (examples/user-kernels/general: a row softmax, RMSNorm, a row
// reduction, a pure stream of rows, a GEMM with a fused epilogue): each manifest validates and
// every knob set compiles with its reference entry, with no GPU; added, it is listed; a run of one
// is refused, naming why (the worker runs the GEMM contract alone so far). A reference entry the
// source lacks is caught at the check.
TEST_F(KernelsE2E, KernelsOfTheirOwnContractValidateAndCompileWithTheirReference) {
  StartDaemon();
  const std::string dir = kExamples + "/general/";
  for (const auto& [file, says] : std::vector<std::pair<std::string, std::string>>{
           {"row_softmax", "checked user kernel softmax: 2 variants compiled for sm_90a"},
           {"rms_norm", "checked user kernel rmsnorm: 4 variants compiled for sm_90a"},
           {"row_sum", "checked user kernel rowsum: 2 variants compiled for sm_90a"},
           {"stream_sum", "checked user kernel streamsum: 4 variants compiled for sm_90a"},
           {"gemm_bias_relu", "checked user kernel gemm_bias_relu: 2 variants compiled for sm_90a"},
           {"cheats/softmax_cheats",
            "checked user kernel softmax_cheat: 6 variants compiled for sm_90a"}}) {
    const CommandResult check = Client(
        {"kernel", "check", dir + file + ".cu", "-m", dir + file + ".toml", "--arch", "sm_90a"});
    EXPECT_EQ(check.exit_code, 0) << file << ": " << check.err;
    EXPECT_THAT(check.err, HasSubstr(says)) << file;
    const CommandResult json = Client({"--format", "json", "kernel", "check", dir + file + ".cu",
                                       "-m", dir + file + ".toml", "--arch", "sm_90a"});
    EXPECT_EQ(Count(json.out, "\"spill_store_bytes\":"), Count(json.out, "\"spill_store_bytes\":0"))
        << file << " spills: " << json.out;
  }
  std::ifstream in(dir + "row_softmax.toml");
  std::string toml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  toml.replace(toml.find("entry = \"row_softmax_ref\""), 25, "entry = \"softmax_reference\"");
  const CommandResult missing = Client({"kernel", "check", dir + "row_softmax.cu", "-m",
                                        Write("softmax.toml", toml), "--arch", "sm_90a"});
  EXPECT_EQ(missing.exit_code, 1) << missing.err;
  EXPECT_THAT(missing.err, HasSubstr("row_softmax.cu: error: reference entry "
                                     "'softmax_reference' is not a kernel of this source"));
}

// A manifest's knob axes as its text has them: each [[knob]]'s name and the text of its values.
struct KnobAxis {
  std::string name;
  std::vector<std::string> values;
  size_t at = 0, length = 0;  ///< where its `values = [...]` stands in the text
};
std::vector<KnobAxis> KnobAxes(const std::string& toml) {
  std::vector<KnobAxis> out;
  for (size_t at = toml.find("[[knob]]"); at != std::string::npos;
       at = toml.find("[[knob]]", at + 1)) {
    KnobAxis k;
    const size_t name = toml.find("name = \"", at) + 8;
    k.name = toml.substr(name, toml.find('"', name) - name);
    k.at = toml.find("values = [", at);
    const size_t close = toml.find(']', k.at);
    k.length = close + 1 - k.at;
    std::stringstream list(toml.substr(k.at + 10, close - k.at - 10));
    for (std::string v; std::getline(list, v, ',');)
      k.values.push_back(v.substr(v.find_first_not_of(' ')));
    out.push_back(k);
  }
  return out;
}

// The PTX path over every worked example and planted kernel of the general contract: each knob
// set emitted as PTX by the toolkit's nvcc (both entries: the kernel and its reference), its
// manifest made the PTX's (language = "ptx", each knob at that set's value), and checked with no
// GPU: it assembles for sm_90a with no spills, as its CUDA source compiles through NVRTC.
TEST_F(KernelsE2E, EveryKernelOfItsOwnContractAssemblesAsPtxInEveryKnobSet) {
  const std::string nvcc = "/usr/local/cuda/bin/nvcc";
  if (::access(nvcc.c_str(), X_OK) != 0) GTEST_SKIP() << "no nvcc at " << nvcc;
  StartDaemon();
  const std::string dir = kExamples + "/general/";
  int checked = 0;
  for (const std::string file : {"row_softmax", "rms_norm", "row_sum", "stream_sum",
                                 "gemm_bias_relu", "cheats/softmax_cheats"}) {
    std::ifstream in(dir + file + ".toml");
    const std::string toml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::vector<KnobAxis> axes = KnobAxes(toml);
    std::vector<std::vector<size_t>> sets = {{}};
    for (const KnobAxis& k : axes) {
      std::vector<std::vector<size_t>> next;
      for (const auto& set : sets)
        for (size_t v = 0; v < k.values.size(); ++v) {
          next.push_back(set);
          next.back().push_back(v);
        }
      sets = next;
    }
    for (const auto& set : sets) {
      std::string manifest = toml, tag;
      std::vector<std::string> args = {nvcc, "-ptx", "-arch=compute_90a"};
      for (size_t i = axes.size(); i-- > 0;) {  // from the back: earlier positions stay valid
        const std::string& v = axes[i].values[set[i]];
        args.push_back("-D" + axes[i].name + "=" + v);
        manifest.replace(axes[i].at, axes[i].length, "values = [" + v + "]");
        tag += "_" + v;
      }
      const size_t entry = manifest.find("\nentry = ");
      manifest.insert(manifest.find('\n', entry + 1) + 1, "language = \"ptx\"\n");
      const std::string ptx = dir_ + "/" + std::to_string(checked) + tag + ".ptx";
      args.insert(args.end(), {dir + file + ".cu", "-o", ptx});
      const CommandResult made = RunCommand(args);
      ASSERT_EQ(made.exit_code, 0) << file << tag << ": " << made.err;
      const std::string toml_path = Write(std::to_string(checked) + tag + ".toml", manifest);
      const CommandResult check =
          Client({"--format", "json", "kernel", "check", ptx, "-m", toml_path, "--arch", "sm_90a"});
      EXPECT_EQ(check.exit_code, 0) << file << tag << ": " << check.err;
      EXPECT_EQ(Count(check.out, "\"spill_store_bytes\":0"), 1) << file << tag << check.out;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2 + 4 + 2 + 4 + 2 + 6);  // every knob set of every one
}

// A kernel of its own contract runs as a GEMM user kernel does, with the test double: its sizes
// (--size, or its defaults) planned into the rows' M, N, K, verified against its own reference
// entry before it is timed (the worker's plan of its tensors, canaries, arguments and reference
// launch), timed, and reported on its roofline (GB/s by its work model against the device's
// measured bandwidth, its share of the compute roof it names, the nearer roof); a wrong output
// fails with the element the comparison names; sizes it does not have are refused by name.
TEST_F(KernelsE2E, AKernelOfItsOwnContractIsPlannedVerifiedTimedAndOnItsRoofline) {
  StartDaemon("add_role = \"run\"\n", {{"ABLATION_FAKE_FAIL_VERIFY", "user.softmax.threads=512"}});
  const std::string dir = kExamples + "/general/";
  ASSERT_EQ(
      Client({"kernel", "add", dir + "row_softmax.cu", "-m", dir + "row_softmax.toml"}).exit_code,
      0);
  const CommandResult run =
      Client({"--format", "csv", "run", "--variant", "user.softmax.threads=128", "--size",
              "rows=1024,cols=4096", "--size", "rows=4096,cols=8192", "--verify"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // Each size is its own problem, its sizes in the rows' M and N; verified against its reference.
  EXPECT_THAT(run.out, HasSubstr("user.softmax.threads=128,bf16,1024x4096x1,"));
  EXPECT_THAT(run.out, HasSubstr("user.softmax.threads=128,bf16,4096x8192x1,"));
  EXPECT_THAT(run.out, HasSubstr(",passed,"));
  EXPECT_THAT(run.out, HasSubstr("roofline_bytes_per_second"));
  EXPECT_THAT(run.out, HasSubstr(",memory,"));
  // The stored rows hold the roofline: GB/s by the work model (2 * 2 * rows * cols bytes) over
  // the median time, its share of the fake device's 4.2 TB/s, the fp32 compute roof.
  const CommandResult json = Client(
      {"--format", "json", "results", "--variant", "user.softmax.threads=128", "--limit", "0"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_THAT(json.out, HasSubstr("\"roofline_bandwidth\":4200000000000"));
  EXPECT_THAT(json.out, HasSubstr("\"roofline_compute_roof\":\"fp32\""));
  EXPECT_THAT(json.out, HasSubstr("\"roofline_bound\":\"memory\""));
  EXPECT_THAT(json.out, HasSubstr("\"roofline_intensity\":1.25"));  // 5 ops per 4 bytes
  // A GEMM's row is on its roofline too: A, B and C moved once (3 x 2 MiB at 1024^3 in bf16:
  // 341 operations per byte, beyond the fake H200's ridge of 1070 TFLOPS / 4.2 TB/s).
  ASSERT_EQ(Client({"run", "--variant", "cublas_bf16", "--shape", "1024"}).exit_code, 0);
  const CommandResult gemm = Client({"--format", "json", "results", "--variant", "cublas_bf16"});
  EXPECT_THAT(gemm.out, HasSubstr("\"roofline_compute_roof\":\"bf16\""));
  EXPECT_THAT(gemm.out, HasSubstr("\"roofline_bound\":\"compute\""));
  EXPECT_THAT(gemm.out, HasSubstr("\"roofline_intensity\":341.33"));
  // The report draws each row against its roofs.
  const CommandResult report = Client({"report", "1", "--format", "md"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_THAT(report.out, HasSubstr("% of measured bandwidth"));
  EXPECT_THAT(report.out, HasSubstr("(fp32)"));
  // The HTML report draws the roofline: both roofs and a point per measured row.
  const CommandResult html = Client({"report", "1", "--format", "html"});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_THAT(html.out, HasSubstr("Roofline: tera-operations per second"));
  EXPECT_THAT(html.out, HasSubstr("memory 4200 GB/s"));
  EXPECT_THAT(html.out, HasSubstr("user.softmax.threads=128: "));
  // Its default sizes where a run names none; its ladder preset measures every rung at them.
  const CommandResult defaults =
      Client({"--format", "csv", "run", "--variant", "user.softmax.threads=128"});
  ASSERT_EQ(defaults.exit_code, 0) << defaults.err;
  EXPECT_THAT(defaults.out, HasSubstr("user.softmax.threads=128,bf16,8192x4096x1,"));
  // (Its second rung is the one this daemon's test double gets wrong: the run is partial.)
  const CommandResult ladder = Client({"--format", "csv", "sweep", "--preset", "user.softmax",
                                       "--size", "rows=512,cols=1024", "--rounds", "1"});
  EXPECT_EQ(ladder.exit_code, 1) << ladder.err;
  EXPECT_THAT(ladder.out, HasSubstr("user.softmax.threads=128,bf16,512x1024x1,"));
  EXPECT_THAT(ladder.out, HasSubstr("user.softmax.threads=512,bf16,512x1024x1,"));
  EXPECT_THAT(ladder.out, ::testing::Not(HasSubstr("cublas_")));
  // A wrong output is a failed verification naming the first element outside the tolerance.
  const CommandResult wrong =
      Client({"--format", "csv", "run", "--variant", "user.softmax.threads=512", "--size",
              "rows=64,cols=64", "--verify"});
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_THAT(wrong.out + wrong.err, HasSubstr("the reference"));
  EXPECT_THAT(wrong.out + wrong.err, HasSubstr("output elements outside the tolerance"));
  // `verify` checks it against its own reference, whatever --against says of GEMMs.
  const CommandResult verify = Client({"--format", "csv", "verify", "--variant",
                                       "user.softmax.threads=128", "--size", "rows=64,cols=64"});
  EXPECT_EQ(verify.exit_code, 0) << verify.err;
  EXPECT_THAT(verify.out, HasSubstr("user.softmax.threads=128,bf16,64x64x1,own,"));
  // Sizes it does not have, or a size missing with no default, are refused by name.
  const CommandResult unknown =
      Client({"run", "--variant", "user.softmax.threads=128", "--size", "rows=64,columns=64"});
  EXPECT_EQ(unknown.exit_code, 65) << unknown.err;
  EXPECT_THAT(unknown.err, HasSubstr("columns"));
}

// Bytes per second above 1.25 times the device's measured bandwidth are refused, as TFLOPS above
// the peak are: the test double runs this variant twice as fast as its work model's bytes at
// 3 TB/s allow (6 TB/s against its 4.2 measured).
// A per-bucket rung's row names the entry it ran at its shape (its table's pick, or its default),
// stored and shown as the `ran` column; a variant of its own launch leaves it empty.
TEST_F(KernelsE2E, APerBucketRungsRowsNameTheBuildTheyRan) {
  StartDaemon();
  const std::string pick(
      sm90::BucketVariantFor({128, 4096, 4096, DType::kBF16}, sm90::kBucketTables[2]));
  ASSERT_NE(pick, sm90::kBucketTables[2].fallback);  // 128 rows of 4096 columns: a pick
  ASSERT_EQ(sm90::BucketVariantFor({1, 4096, 4096, DType::kBF16}, sm90::kBucketTables[2]),
            sm90::kBucketTables[2].fallback);
  const CommandResult run =
      Client({"--format", "csv", "run", "--variant", "sm90_s12_buckets", "--variant",
              "sm90_h12_fitted_unclustered", "--shape", "128x4096x4096", "--shape", "1x4096x4096"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const CommandResult json =
      Client({"--format", "json", "results", "--variant", "sm90_s12_buckets", "--limit", "0"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_THAT(json.out, HasSubstr("\"dispatched_to\":\"" + pick + "\""));
  EXPECT_THAT(json.out, HasSubstr("\"dispatched_to\":\"sm90_s11_ring\""));
  const CommandResult table =
      Client({"--width", "0", "results", "--variant", "sm90_*", "--limit", "0"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("ran"));
  EXPECT_THAT(table.out, HasSubstr(pick));
  const CommandResult h12 = Client(
      {"--format", "json", "results", "--variant", "sm90_h12_fitted_unclustered", "--limit", "0"});
  EXPECT_THAT(h12.out, HasSubstr("\"dispatched_to\":\"\""));
  EXPECT_THAT(h12.out, Not(HasSubstr("\"dispatched_to\":\"sm90")));
  // The report's table of how each row ran names it too (the pick ran under the rung's name).
  const CommandResult report = Client({"--width", "0", "report", "1", "--format", "md"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_THAT(report.out, HasSubstr("| ran |"));
  EXPECT_THAT(report.out, HasSubstr("| " + pick + " |"));
}

TEST_F(KernelsE2E, AFigureAboveTheMeasuredBandwidthIsRefused) {
  StartDaemon("add_role = \"run\"\n", {{"ABLATION_FAKE_SPEEDUP", "user.softmax.threads=512=2"}});
  const std::string dir = kExamples + "/general/";
  ASSERT_EQ(
      Client({"kernel", "add", dir + "row_softmax.cu", "-m", dir + "row_softmax.toml"}).exit_code,
      0);
  const CommandResult run =
      Client({"--format", "csv", "run", "--variant", "user.softmax.threads=128", "--variant",
              "user.softmax.threads=512", "--size", "rows=1024,cols=4096"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.out + run.err, HasSubstr("refused: 6000 GB/s is 143% of the device's measured "
                                           "bandwidth (4200 GB/s)"));
  EXPECT_THAT(run.out, HasSubstr("user.softmax.threads=128,bf16,1024x4096x1,"));
}

// The few-row GEMM example (a stream of B, one warp per column) compiles in every knob set without
// spills, and runs the decode shapes its conditions allow, refusing more rows than it takes.
TEST_F(KernelsE2E, TheFewRowGemmCompilesWithoutSpillsAndRunsDecodeShapes) {
  StartDaemon("add_role = \"run\"\n");
  const std::string cu = kExamples + "/gemv_rows.cu", toml = kExamples + "/gemv_rows.toml";
  const CommandResult json =
      Client({"--format", "json", "kernel", "check", cu, "-m", toml, "--arch", "sm_90a"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(Count(json.out, "\"spill_store_bytes\":0"), 4) << json.out;
  ASSERT_EQ(Client({"kernel", "add", cu, "-m", toml}).exit_code, 0);
  const CommandResult run =
      Client({"--format", "csv", "run", "--variant", "user.gemv_rows.rows=16.warps=8", "--shape",
              "1x4096x4096", "--shape", "16x14336x4096"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("user.gemv_rows.rows=16.warps=8,bf16,16x14336x4096,"));
  const CommandResult refused =
      Client({"run", "--variant", "user.gemv_rows.rows=1.warps=8", "--shape", "16x4096x4096"});
  EXPECT_EQ(refused.exit_code, 65) << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("M must be at most ROWS"));
}

// PTX from another compiler (examples/user-kernels/ptx, made by make-ptx.sh with nvcc -ptx):
// checked with no GPU, added, listed with ptxas' report, and run beside its CUDA twin, each row
// pointing at its build.
TEST_F(KernelsE2E, APtxKernelIsCheckedAddedAndRunLikeACudaOne) {
  StartDaemon();
  const std::string ptx = kExamples + "/ptx/tiled_gemm_u4.ptx",
                    toml = kExamples + "/ptx/tiled_gemm_u4.toml";
  const CommandResult check = Client({"kernel", "check", ptx, "-m", toml, "--arch", "sm_90a"});
  ASSERT_EQ(check.exit_code, 0) << check.err;
  EXPECT_THAT(check.err,
              HasSubstr("checked user kernel tiled_ptx: 1 variants compiled for sm_90a"));
  const CommandResult add = Client({"kernel", "add", ptx, "-m", toml});
  ASSERT_EQ(add.exit_code, 0) << add.err;
  EXPECT_THAT(add.out, HasSubstr("nvjitlink"));
  ASSERT_EQ(AddExample().exit_code, 0);
  const CommandResult run =
      Client({"--format", "csv", "run", "--variant", "user.tiled_ptx.pad=1.unroll=4", "--variant",
              "user.tiled.pad=1.unroll=4", "--shape", "256"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("user.tiled_ptx.pad=1.unroll=4,"));
  // A broken PTX comes back in the user's words, exit 1 as any compile error.
  std::ifstream in(ptx);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.replace(text.find("\tret;"), 5, "\trett;");
  const CommandResult broken =
      Client({"kernel", "check", Write("mine.ptx", text), "-m", toml, "--arch", "sm_90a"});
  EXPECT_EQ(broken.exit_code, 1) << broken.err;
  EXPECT_THAT(broken.err, HasSubstr(": error: Not a name of any known instruction: 'rett'"));
  EXPECT_THAT(broken.err, HasSubstr("mine.ptx:"));
  // A PTX entry whose parameters are not the contract's is refused before it is assembled.
  std::string fewer = text;
  const std::string last = ",\n\t.param .u32 tiled_gemm_param_5";
  fewer.erase(fewer.find(last), last.size());
  const CommandResult mismatch =
      Client({"kernel", "check", Write("fewer.ptx", fewer), "-m", toml, "--arch", "sm_90a"});
  EXPECT_NE(mismatch.exit_code, 0);
  EXPECT_THAT(mismatch.err, HasSubstr("the entry tiled_gemm takes 5 parameters unlike the GEMM "
                                      "contract's (const A*, const B*, C*, int M, int N, int K)"));
}

// A kernel checked against one of the service's references (no reference entry in its source:
// PTX from another compiler has none): its manifest binds the built-in row softmax to its
// tensors; it compiles without a reference entry and runs verified; a built-in whose tensors do
// not fit the sizes is refused by name before anything runs.
TEST_F(KernelsE2E, AKernelCheckedAgainstABuiltInReferenceRunsVerified) {
  StartDaemon("add_role = \"run\"\n");
  const std::string dir = kExamples + "/general/";
  std::ifstream in(dir + "row_softmax.toml");
  std::string toml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t from = toml.find("[reference]");
  toml.replace(from, toml.find("\n[", from + 1) - from,
               "[reference]\nbuiltin = \"row_softmax\"\ninput = \"x\"\noutput = \"y\"\n"
               "abs = 1e-3\nrel = 1e-2\n");
  const std::string manifest = Write("builtin.toml", toml);
  const CommandResult add = Client({"kernel", "add", dir + "row_softmax.cu", "-m", manifest});
  ASSERT_EQ(add.exit_code, 0) << add.err;
  ExpectRunsVerified("user.softmax.threads=128", "rows=512,cols=2048", "512x2048x1");
  // The same source under a row sum's reference: one value per row, y holds a row's worth.
  const std::string softmax = "builtin = \"row_softmax\"", name = "name = \"softmax\"";
  toml.replace(toml.find(softmax), softmax.size(), "builtin = \"row_sum\"");
  toml.replace(toml.find(name), name.size(), "name = \"softsum\"");
  ASSERT_EQ(
      Client({"kernel", "add", dir + "row_softmax.cu", "-m", Write("sum.toml", toml)}).exit_code,
      0);
  const CommandResult refused =
      Client({"run", "--variant", "user.softsum.threads=128", "--size", "rows=64,cols=64"});
  EXPECT_EQ(refused.exit_code, 65) << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("row_sum writes one value per row of x (64); y holds 4096"));
}

// A kernel brought built (examples/user-kernels/cubin: nvcc's cubin of the softmax example, made
// by make-cubin.sh): the client sends it as base64; the compiler process reads it in its sandbox,
// checks it and its reference entry, and reports ptxas' figures the cubin records (spills are not
// among them: "-"); added, it runs verified. A cubin under a manifest of another language, a
// source that is none under language = "cubin", and a cubin manifest of two knob values are
// refused by name.
TEST_F(KernelsE2E, ACubinIsReadCheckedAddedAndRunLikeASource) {
  StartDaemon("add_role = \"run\"\n");
  const std::string cubin = kExamples + "/cubin/row_softmax_t128.cubin",
                    toml = kExamples + "/cubin/row_softmax_t128.toml";
  const CommandResult check = Client({"kernel", "check", cubin, "-m", toml, "--arch", "sm_90a"});
  ASSERT_EQ(check.exit_code, 0) << check.err;
  EXPECT_THAT(check.out, HasSubstr("cubin (as given)"));
  EXPECT_THAT(check.out, HasSubstr("      30             -            -          512"));
  const CommandResult add = Client({"kernel", "add", cubin, "-m", toml});
  ASSERT_EQ(add.exit_code, 0) << add.err;
  ExpectRunsVerified("user.softmax_cubin.threads=128", "rows=256,cols=1024", "256x1024x1");
  // Shown as what it is, not as pages of base64.
  const CommandResult show = Client({"kernel", "show", "softmax_cubin", "--source"});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr("(a cubin of 25272 bytes, source sha256 "));
  EXPECT_THAT(show.out, ::testing::Not(HasSubstr("f0VMRg")));
  // The wrong language either way.
  std::ifstream in(toml);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string as_cuda = text;
  as_cuda.erase(as_cuda.find("language = \"cubin\"\n"), 19);
  const CommandResult cuda = Client({"kernel", "check", cubin, "-m", Write("cuda.toml", as_cuda)});
  EXPECT_EQ(cuda.exit_code, 65) << cuda.err;
  EXPECT_THAT(cuda.err, HasSubstr("row_softmax_t128.cubin: this source is a cubin (an ELF file), "
                                  "but the manifest's language is cuda: add language = \"cubin\""));
  const CommandResult source =
      Client({"kernel", "check", kExamples + "/general/row_softmax.cu", "-m", toml});
  EXPECT_EQ(source.exit_code, 65) << source.err;
  EXPECT_THAT(source.err, HasSubstr("the manifest says language = \"cubin\", but this source is "
                                    "not one"));
  std::string two = text;
  two.replace(two.find("values = [128]"), 14, "values = [128, 512]");
  const CommandResult knobs = Client({"kernel", "check", cubin, "-m", Write("two.toml", two)});
  EXPECT_EQ(knobs.exit_code, 65) << knobs.err;
  EXPECT_THAT(knobs.err, HasSubstr("THREADS has 2 values, but a cubin source is one build"));
}

// The manifest examples/user-kernels/ptx/triton_row_softmax.py writes beside the PTX Triton
// emits (on a GPU node, where Triton is): Triton's parameters (two pointers, int32 rows and cols,
// then its scratch pointers) against the built-in row softmax. Here over a PTX of that signature
// written by hand (Triton is not on this machine): added, run verified with the test double; a
// PTX with a parameter fewer than the manifest names is refused before it is assembled.
TEST_F(KernelsE2E, TheTritonScriptsManifestTakesTritonsParametersAndTheBuiltInReference) {
  StartDaemon("add_role = \"run\"\n");
  const std::string params[] = {".param .u64 .ptr .global .align 1 triton_softmax_param_0",
                                ".param .u64 .ptr .global .align 1 triton_softmax_param_1",
                                ".param .u32 triton_softmax_param_2",
                                ".param .u32 triton_softmax_param_3",
                                ".param .u64 .ptr .global .align 1 triton_softmax_param_4",
                                ".param .u64 .ptr .global .align 1 triton_softmax_param_5"};
  const auto ptx = [&](int n) {
    std::string text =
        ".version 8.4\n.target sm_90a\n.address_size 64\n\n"
        ".visible .entry triton_softmax(\n";
    for (int i = 0; i < n; ++i) text += "\t" + params[i] + (i + 1 < n ? ",\n" : "\n");
    return text + ")\n.reqntid 256\n{\n\tret;\n}\n";
  };
  const CommandResult made = RunCommand(
      {"/usr/bin/env", "python3", "-c",
       "import sys; sys.path.insert(0, '" + kExamples +
           "/ptx'); import triton_row_softmax as t; sys.stdout.write(t.manifest({'triton': "
           "'3.x', 'device': 'none', 'warps': 8, 'block': 4096, 'cols': 4096, 'entry': "
           "'triton_softmax', 'params': [0] * 6, 'shared_bytes': 0}))"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string toml = Write("triton_softmax_w8.toml", made.out);
  const CommandResult add = Client({"kernel", "add", Write("w8.ptx", ptx(6)), "-m", toml});
  ASSERT_EQ(add.exit_code, 0) << add.err;
  ExpectRunsVerified("user.triton_softmax_w8.warps=8", "", "8192x4096x1");
  // Its condition: Triton specialised cols as a multiple of 16.
  const CommandResult odd =
      Client({"run", "--variant", "user.triton_softmax_w8.warps=8", "--size", "rows=64,cols=1008"});
  EXPECT_EQ(odd.exit_code, 0) << odd.err;
  const CommandResult refused =
      Client({"run", "--variant", "user.triton_softmax_w8.warps=8", "--size", "rows=64,cols=1001"});
  EXPECT_EQ(refused.exit_code, 65) << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("Triton specialised cols as a multiple of 16"));
  const CommandResult fewer =
      Client({"kernel", "check", Write("w5.ptx", ptx(5)), "-m", toml, "--arch", "sm_90a"});
  EXPECT_NE(fewer.exit_code, 0);
  EXPECT_THAT(fewer.err, HasSubstr("the entry triton_softmax takes 5 parameters; contract.params "
                                   "names 6"));
}

// The Triton softmax as Triton 3.6.0 emitted it on an H100 (examples/user-kernels/ptx, made by
// triton_row_softmax.py, with the manifests it wrote): both builds assemble for sm_90a through
// the PTX path with no spills, are added, and run verified against the built-in row softmax.
TEST_F(KernelsE2E, TheTritonEmittedPtxAssemblesAndRunsAgainstTheBuiltInReference) {
  StartDaemon("add_role = \"run\"\n");
  for (const std::string warps : {"4", "8"}) {
    const std::string base = kExamples + "/ptx/triton_softmax_w" + warps;
    const CommandResult check = Client({"--format", "json", "kernel", "check", base + ".ptx", "-m",
                                        base + ".toml", "--arch", "sm_90a"});
    ASSERT_EQ(check.exit_code, 0) << check.err;
    EXPECT_EQ(Count(check.out, "\"spill_store_bytes\":0"), 1) << check.out;
    ASSERT_EQ(Client({"kernel", "add", base + ".ptx", "-m", base + ".toml"}).exit_code, 0);
    ExpectRunsVerified("user.triton_softmax_w" + warps + ".warps=" + warps, "", "8192x4096x1");
  }
}

// The planted kernels the GPU session checks are caught (a forgotten epilogue, a kept result, a
// hang) are added like any other: they compile. The forgotten epilogue is made from the example,
// two lines fewer.
TEST_F(KernelsE2E, ThePlantedKernelsCompileAndTheForgottenEpilogueIsTheExampleLessItsEpilogue) {
  StartDaemon();
  const std::string planted = std::string(SOURCE_DIR) + "/tests/e2e/gpu/user_kernels";
  const std::string made = dir_ + "/forgot_epilogue.cu";
  CommandResult make =
      RunCommand({"/bin/sh", "-c",
                  planted + "/make_forgot_epilogue.sh " + kExamples + "/pipe_gemm.cu > " + made});
  ASSERT_EQ(make.exit_code, 0) << make.err;
  std::ifstream example_in(kExamples + "/pipe_gemm.cu"), made_in(made);
  const std::string example((std::istreambuf_iterator<char>(example_in)), {});
  const std::string forgot((std::istreambuf_iterator<char>(made_in)), {});
  EXPECT_EQ(Count(example, "compute((k_tiles - 1) & 1);"), 2u);
  EXPECT_EQ(Count(forgot, "compute((k_tiles - 1) & 1);"), 0u);
  EXPECT_EQ(example.size() - forgot.size(),
            2 * std::string("  compute((k_tiles - 1) & 1);\n").size());
  for (const auto& [source, manifest] : std::vector<std::pair<std::string, std::string>>{
           {made, planted + "/forgot_epilogue.toml"},
           {planted + "/keeps_result.cu", planted + "/keeps_result.toml"},
           {planted + "/hangs.cu", planted + "/hangs.toml"}}) {
    CommandResult add = Client({"kernel", "add", source, "--manifest", manifest});
    EXPECT_EQ(add.exit_code, 0) << source << ": " << add.err;
  }
}

// The manifest's ladder is a preset: listed, run by sweep, drawn by report like a built-in one.
TEST_F(KernelsE2E, TheKernelsLadderIsAPresetThatSweepRunsAndReportDraws) {
  StartDaemon();
  ASSERT_EQ(AddExample().exit_code, 0);
  CommandResult preset = Client({"presets", "user.tiled"});
  ASSERT_EQ(preset.exit_code, 0) << preset.err;
  EXPECT_THAT(preset.out, HasSubstr("user.tiled.pad=1.unroll=1"));
  CommandResult sweep = Client({"-q", "sweep", "--preset", "user.tiled", "--shape", "256"});
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err << sweep.out;
  CommandResult report = Client({"report", "latest", "--format", "md"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_THAT(report.out, HasSubstr("User kernel tiled: its knobs one at a time"));
  EXPECT_THAT(report.out, HasSubstr("PAD 0 -> 1 (shared-memory rows padded by one element)"));
  EXPECT_THAT(report.out, HasSubstr("UNROLL 1 -> 4"));
  // Removed, the kernel's preset is gone too.
  ASSERT_EQ(Client({"kernel", "remove", "tiled"}).exit_code, 0);
  EXPECT_NE(Client({"presets", "user.tiled"}).exit_code, 0);
}

// No kernel computes faster than the hardware: a figure above the clock-adjusted peak is refused.
TEST_F(KernelsE2E, AFigureAboveThePeakIsRefused) {
  StartDaemon("add_role = \"run\"\n", {{"ABLATION_FAKE_SPEEDUP", "user.tiled.pad=1.unroll=4=50"}});
  ASSERT_EQ(AddExample().exit_code, 0);
  CommandResult run = Client({"run", "--variant", "user.tiled.pad=1.unroll=4", "--variant",
                              "user.tiled.pad=0.unroll=1", "--shape", "1024"});
  CommandResult rows = Client({"--format", "json", "results", "latest"});
  EXPECT_THAT(rows.out, HasSubstr("refused: "));
  EXPECT_THAT(rows.out, HasSubstr("of the dense peak at the measured clock"));
  EXPECT_EQ(Count(rows.out, "\"status\":\"ok\""), 1u) << rows.out;
}

}  // namespace
}  // namespace ablation::testing
