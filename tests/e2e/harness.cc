#include "tests/e2e/harness.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "tests/support/test_paths.h"

extern char** environ;

namespace ablation::testing {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> MergedEnv(const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : extra) env[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

pid_t Spawn(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
            const std::string& out_path, const std::string& err_path) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> envs = MergedEnv(env);
  std::vector<char*> envp;
  for (auto& e : envs) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  return rc == 0 ? pid : -1;
}

}  // namespace

std::string MakeTempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/ablation-test-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  char* dir = mkdtemp(buf.data());
  return dir ? dir : "";
}

CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env, int timeout_s) {
  CommandResult r;
  std::string dir = MakeTempDir();
  std::string out = dir + "/out", err = dir + "/err";
  pid_t pid = Spawn(argv, env, out, err);
  if (pid < 0) {
    r.err = "cannot spawn " + argv[0];
    return r;
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  int st = 0;
  while (true) {
    pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      r.err = "timed out after " + std::to_string(timeout_s) + " s\n";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  r.out = ReadFile(out);
  r.err += ReadFile(err);
  std::filesystem::remove_all(dir);
  return r;
}

Daemon::Daemon(std::string dir, std::string worker, std::map<std::string, std::string> env)
    : dir_(std::move(dir)), worker_(TestBinary(worker)), env_(std::move(env)) {}

Daemon::~Daemon() {
  if (pid_ > 0) Stop(SIGKILL);
}

std::string Daemon::log() const { return ReadFile(dir_ + "/daemon.log"); }

std::string Daemon::Start() {
  std::string port_file = dir_ + "/port";
  std::filesystem::remove(port_file);
  std::vector<std::string> argv = {TestBinary(ABLATIOND_PATH),
                                   "--listen",
                                   "127.0.0.1:0",
                                   "--db",
                                   db_path(),
                                   "--worker",
                                   worker_,
                                   "--port-file",
                                   port_file,
                                   "--log-level",
                                   "debug"};
  argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
  argv.insert(argv.begin(), launcher_.begin(), launcher_.end());
  pid_ = Spawn(argv, env_, dir_ + "/daemon.out", dir_ + "/daemon.log");
  if (pid_ < 0) return "cannot spawn ablationd";
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(180);
  while (std::chrono::steady_clock::now() < deadline) {
    int st = 0;
    if (waitpid(pid_, &st, WNOHANG) == pid_) {
      pid_ = -1;
      return "ablationd exited at start; log:\n" + log();
    }
    std::string text = ReadFile(port_file);
    if (!text.empty()) {
      port_ = std::atoi(text.c_str());
      return "";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return "ablationd did not listen within 180 s; log:\n" + log();
}

int Daemon::Stop(int sig) {
  if (pid_ <= 0) return 0;
  kill(pid_, sig);
  int st = 0;
  waitpid(pid_, &st, 0);
  pid_ = -1;
  return st;
}

std::unique_ptr<v1::Ablation::Stub> Daemon::Stub() const {
  auto channel = grpc::CreateChannel(address(), grpc::InsecureChannelCredentials());
  return v1::Ablation::NewStub(channel);
}

CommandResult Daemon::Client(std::vector<std::string> args, int timeout_s) const {
  std::vector<std::string> argv = {TestBinary(CLIENT_PATH), "--server", address()};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, {}, timeout_s);
}

std::vector<pid_t> ChildrenNamed(pid_t parent, const std::string& name) {
  std::vector<pid_t> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::string fname = entry.path().filename();
    if (fname.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string stat = ReadFile(entry.path().string() + "/stat");
    auto open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::string comm = stat.substr(open + 1, close - open - 1);
    std::istringstream rest(stat.substr(close + 2));
    char state;
    pid_t ppid;
    rest >> state >> ppid;
    // comm is cut at 15 characters by the kernel.
    if (ppid == parent && name.compare(0, comm.size(), comm) == 0) out.push_back(std::stoi(fname));
  }
  return out;
}

}  // namespace ablation::testing
