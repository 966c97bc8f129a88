// The compiler's sandbox (server/compile/sandbox.h) on this build machine: what a user kernel's
// source can make the compiler read, and what comes back of it. Every #include and __has_include
// of a host file (the daemon's secrets among them) gives nothing of the file, only a refusal
// naming the include, with the mount namespace and with Landlock alone; a cubin over its bound
// and a 146-byte source with a 240 MiB data section are refused; the compiler dies with its
// parent.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/core/base/subprocess.h"
#include "server/core/userkernels/compiler.h"

namespace ablation::core {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// As ablationd starts it: where the test runs as root, as nobody.
CompileSandbox AsTheDaemonDoes() {
  CompileSandbox s;
  if (::geteuid() == 0) s.uid = s.gid = 65534;
  return s;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Secrets a hostile source would go for: a 0600 file, this process's environment (the daemon's
// holds ABLATION_FLEET_DB with its password) and its command line.
class Secrets : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ablation_sandbox_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    secret_file_ = (dir_ / "fleet-db").string();
    std::ofstream(secret_file_) << "postgresql://ablationd:SECRET-FILE-PASSWORD@db/fleet\n";
    ::chmod(secret_file_.c_str(), 0600);
    ::setenv("ABLATION_FLEET_DB", "postgresql://ablationd:SECRET-ENV-PASSWORD@db/fleet", 1);
  }
  void TearDown() override {
    ::unsetenv("ABLATION_FLEET_DB");
    std::filesystem::remove_all(dir_);
  }
  // The paths a hostile client tried: system files, the secret, the daemon's /proc, relative
  // escapes.
  std::vector<std::string> Targets() const {
    const std::string self = "/proc/" + std::to_string(::getpid());
    return {
        "/etc/passwd",     "/etc/shadow",     secret_file_, "/proc/self/environ",
        self + "/environ", self + "/cmdline", "/etc",       "../../../../../../../../etc/passwd"};
  }
  // What none of the answers may hold: a line of /etc/passwd, the secrets, this command line.
  void ExpectNothingOfTheFiles(const std::string& log) {
    EXPECT_THAT(log, Not(HasSubstr("root:x:0:0")));
    EXPECT_THAT(log, Not(HasSubstr("SECRET-FILE-PASSWORD")));
    EXPECT_THAT(log, Not(HasSubstr("SECRET-ENV-PASSWORD")));
    EXPECT_THAT(log, Not(HasSubstr("user_compile_tests")));
  }
  std::filesystem::path dir_;
  std::string secret_file_;
};

kernels::user::CompileRequest Request(const std::string& source) {
  kernels::user::CompileRequest r;
  r.source = source;
  r.entry = "add";
  return r;
}

constexpr const char* kEntry = "extern \"C\" __global__ void add(int* x) { x[0] = 1; }\n";

// The compiler run directly (the daemon's way, plus flags of its own), for the Landlock-only case.
ProcessResult RunCompiler(std::vector<std::string> args, const std::string& source) {
  const std::string scratch =
      std::filesystem::temp_directory_path() / ("ablation_scratch_" + std::to_string(::getpid()));
  std::filesystem::create_directories(scratch);
  args.insert(args.begin(), COMPILER_PATH);
  if (::geteuid() == 0) args.insert(args.end(), {"--user", "65534:65534"});
  ProcessOptions o;
  o.stdin_data = source;
  o.empty_environment = true;
  o.working_dir = scratch;
  o.close_other_fds = true;
  ProcessResult r = RunProcess(args, std::chrono::seconds(60), o);
  std::filesystem::remove_all(scratch);
  return r;
}

TEST(CompilerSandbox, ThisHostConfinesACompileWithANamespaceLandlockAndAFilter) {
  const SandboxProbe probe = ProbeCompilerSandbox(COMPILER_PATH, AsTheDaemonDoes());
  ASSERT_TRUE(probe.ok) << probe.why;
  EXPECT_THAT(probe.description, HasSubstr("mount-namespace"));
  EXPECT_THAT(probe.description, HasSubstr("landlock="));
  EXPECT_THAT(probe.description, HasSubstr("seccomp"));
  EXPECT_THAT(probe.description, HasSubstr("no-network"));
  if (::geteuid() == 0) EXPECT_THAT(probe.description, HasSubstr("uid=65534"));
  // And a compile says what it ran in.
  const ChildCompile c =
      CompileInChild(COMPILER_PATH, Request(kEntry), CompileLimits{}, AsTheDaemonDoes());
  ASSERT_TRUE(c.result.ok) << c.result.log;
  EXPECT_EQ(c.sandbox, probe.description);
}

TEST_F(Secrets, AnIncludeOfAHostFileIsRefusedNamingItAndReturnsNothingOfIt) {
  for (const std::string& path : Targets()) {
    SCOPED_TRACE(path);
    // Written as a literal: refused before the compiler reads anything, naming the include.
    ChildCompile c = CompileInChild(COMPILER_PATH, Request("#include \"" + path + "\"\n" + kEntry),
                                    CompileLimits{}, AsTheDaemonDoes());
    EXPECT_FALSE(c.result.ok);
    EXPECT_THAT(c.result.log, HasSubstr("#include \"" + path + "\" is refused"));
    ExpectNothingOfTheFiles(c.result.log);
    // Through a macro, which no scan of the source sees: the sandbox has no such file.
    c = CompileInChild(COMPILER_PATH, Request("#define P \"" + path + "\"\n#include P\n" + kEntry),
                       CompileLimits{}, AsTheDaemonDoes());
    EXPECT_FALSE(c.result.ok);
    EXPECT_THAT(c.result.log, HasSubstr("cannot open source file \"" + path +
                                        "\": not among the headers a user kernel may include"));
    ExpectNothingOfTheFiles(c.result.log);
  }
}

// With Landlock alone (a host without namespaces), what exists cannot be opened, and the
// compiler's message is made the same for a file that exists as for one that does not.
TEST_F(Secrets, WithLandlockAloneTheAnswersAreTheSame) {
  for (const std::string& path : Targets()) {
    SCOPED_TRACE(path);
    const ProcessResult r =
        RunCompiler({"--entry", "add", "--no-namespaces"},
                    "#define P \"" + path + "\"\n#include P\n" + std::string(kEntry));
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_THAT(r.out, HasSubstr("sandbox no-mount-namespace landlock="));
    EXPECT_THAT(r.err, HasSubstr("cannot open source file \"" + path +
                                 "\": not among the headers a user kernel may include"));
    EXPECT_THAT(r.err, Not(HasSubstr("Permission denied")));
    EXPECT_THAT(r.err, Not(HasSubstr("is a directory")));
    ExpectNothingOfTheFiles(r.err);
  }
}

// __has_include would tell whether a path exists: it answers "no" for every path outside the
// allowed folders, existing or not, and a literal one is refused outright.
TEST_F(Secrets, HasIncludeTellsNothingOfPathsOutsideTheHeaders) {
  std::vector<std::string> paths = Targets();
  paths.push_back("/etc/no-such-file-" + std::to_string(::getpid()));
  for (const bool namespaces : {true, false}) {
    for (const std::string& path : paths) {
      SCOPED_TRACE(path + (namespaces ? " (namespace)" : " (Landlock alone)"));
      const std::string source = "#define P \"" + path +
                                 "\"\n#if __has_include(P)\n#error it is there\n#else\n"
                                 "#error it is not there\n#endif\n" +
                                 kEntry;
      std::vector<std::string> args = {"--entry", "add"};
      if (!namespaces) args.push_back("--no-namespaces");
      const ProcessResult r = RunCompiler(args, source);
      EXPECT_THAT(r.err, HasSubstr("it is not there"));
      EXPECT_THAT(r.err, Not(HasSubstr("it is there\n")));
    }
  }
  // The toolkit's headers are there (what the sandbox allows).
  const ProcessResult r = RunCompiler(
      {"--entry", "add"},
      std::string("#if __has_include(<cuda_fp16.h>)\n#error cuda is there\n#endif\n") + kEntry);
  EXPECT_THAT(r.err, HasSubstr("cuda is there"));
  const ChildCompile literal = CompileInChild(
      COMPILER_PATH, Request("#if __has_include(\"/etc/shadow\")\n#endif\n" + std::string(kEntry)),
      CompileLimits{}, AsTheDaemonDoes());
  EXPECT_THAT(literal.result.log, HasSubstr("__has_include \"/etc/shadow\" is refused"));
}

// A cubin over the bound is refused naming its size; the big-section kernel a hostile client sent
// (146 bytes of source that made a 240 MiB cubin in 80 s and 3.5 GB) ends at the compile's memory
// limit within seconds, and says so.
TEST(CompilerSandbox, ACubinOverItsBoundIsRefusedAtItsSize) {
  CompileLimits limits;
  limits.max_cubin_bytes = 1 << 20;
  const ChildCompile c = CompileInChild(
      COMPILER_PATH,
      Request("__device__ char big[4 << 20] = {1};\n"
              "extern \"C\" __global__ void add(int* x) { x[0] = big[threadIdx.x]; }\n"),
      limits, AsTheDaemonDoes());
  EXPECT_FALSE(c.result.ok);
  EXPECT_TRUE(c.result.cubin.empty());
  EXPECT_THAT(c.result.log, HasSubstr("the cubin is 4"));
  EXPECT_THAT(c.result.log, HasSubstr("bytes, more than the 1048576 a build may have "
                                      "(user_kernels.max_cubin_bytes)"));
}

TEST(CompilerSandbox, TheBigSectionKernelIsRefusedWithinSeconds) {
  const auto start = std::chrono::steady_clock::now();
  const ChildCompile c = CompileInChild(
      COMPILER_PATH,
      Request("__device__ char big[240<<20] = {1};\n"
              "extern \"C\" __global__ void add(int* x) { x[0] = big[threadIdx.x]; }\n"),
      CompileLimits{}, AsTheDaemonDoes());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_FALSE(c.result.ok);
  EXPECT_TRUE(c.result.cubin.empty());
  EXPECT_THAT(c.result.log, HasSubstr("it ran out of the 2048 MiB it may use, "
                                      "user_kernels.compile_memory_mb"));
  EXPECT_LT(seconds, 40.0);
  std::printf("[sandbox] the big-section kernel refused after %.1f s\n", seconds);
}

// The compiler dies with the process that started it, however that one ends (SIGKILL here: no
// handler of its own runs).
TEST(CompilerSandbox, TheCompilerDiesWithItsParent) {
  const pid_t parent = ::fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    CompileLimits slow;  // the big section with room to grow: NVVM works on it for a minute
    slow.memory_mb = 16384;
    (void)CompileInChild(COMPILER_PATH,
                         Request("__device__ char big[240<<20] = {1};\n" + std::string(kEntry)),
                         slow, AsTheDaemonDoes());
    ::_exit(0);
  }
  pid_t compiler = -1;
  for (int i = 0; i < 200 && compiler < 0; ++i) {
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
      const std::string stat = Slurp(e.path().string() + "/stat");
      const size_t close = stat.rfind(')');
      if (close == std::string::npos || stat.find("(ablation-compil") == std::string::npos)
        continue;
      if (std::atoi(stat.c_str() + close + 4) == parent)
        compiler = pid_t(std::atoi(e.path().filename().c_str()));
    }
    if (compiler < 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_GT(compiler, 0) << "the compiler did not start";
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // well into the sandbox
  ASSERT_EQ(::kill(parent, SIGKILL), 0);
  ::waitpid(parent, nullptr, 0);
  bool gone = false;
  for (int i = 0; i < 50 && !gone; ++i) {
    gone = ::kill(compiler, 0) != 0 ||
           Slurp("/proc/" + std::to_string(compiler) + "/stat").find(") Z") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(gone) << "ablation-compile " << compiler << " outlived its parent";
}

}  // namespace
}  // namespace ablation::core
