#include "tests/e2e/postgres_server.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/e2e/harness.h"

namespace ablation::testing {
namespace {

// The port only names the socket file (.s.PGSQL.<port>) in our own folder.
constexpr int kPort = 5439;
constexpr unsigned kNobody = 65534;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string PostgresServer::FindBinDir() {
  const std::filesystem::path root = "/usr/lib/postgresql";
  std::error_code ec;
  std::string best;
  int best_version = 0;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    const int version = std::atoi(name.c_str());
    if (version > best_version && std::filesystem::exists(entry.path() / "bin" / "initdb") &&
        std::filesystem::exists(entry.path() / "bin" / "pg_ctl")) {
      best_version = version;
      best = (entry.path() / "bin").string();
    }
  }
  return best;
}

PostgresServer::~PostgresServer() {
  if (running_) Stop();
  if (!dir_.empty()) std::filesystem::remove_all(dir_);
}

std::string PostgresServer::Run(const std::string& program, std::vector<std::string> args) const {
  std::vector<std::string> argv;
  if (as_nobody_) argv = {"/usr/sbin/runuser", "-u", "nobody", "--"};
  argv.push_back(bin_ + "/" + program);
  argv.insert(argv.end(), args.begin(), args.end());
  // LC_ALL=C: initdb's locale check; PGTZ: stable timestamps.
  const CommandResult r = RunCommand(argv, {{"LC_ALL", "C"}, {"PGTZ", "UTC"}}, 120);
  if (r.exit_code == 0) return "";
  return program + " exited " + std::to_string(r.exit_code) + ": " + r.out + r.err +
         "\nserver log:\n" + ReadAll(dir_ + "/server.log");
}

std::string PostgresServer::Create(const std::string& bin_dir) {
  bin_ = bin_dir;
  // /tmp, not $TMPDIR: the unprivileged server must reach its folder, and a socket's path is
  // limited to about 100 characters.
  char tmpl[] = "/tmp/ablation-pg-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return "cannot make a folder in /tmp";
  dir_ = tmpl;
  as_nobody_ = geteuid() == 0;
  if (as_nobody_ && chown(dir_.c_str(), kNobody, kNobody) != 0)
    return "cannot give " + dir_ + " to nobody";
  std::string error = Run("initdb", {"-D", dir_ + "/data", "-U", "fleet", "--auth=trust",
                                     "--no-sync", "-E", "UTF8", "--no-instructions"});
  if (!error.empty()) return error;
  if (!(error = Start()).empty()) return error;
  return Run("createdb", {"-h", dir_, "-p", std::to_string(kPort), "-U", "fleet", "fleet"});
}

std::string PostgresServer::Start() {
  const std::string options =
      "-c listen_addresses='' -k " + dir_ + " -p " + std::to_string(kPort) + " -c fsync=off";
  std::string error = Run("pg_ctl", {"-D", dir_ + "/data", "-l", dir_ + "/server.log", "-o",
                                     options, "-w", "-t", "60", "start"});
  running_ = error.empty();
  return error;
}

std::string PostgresServer::Stop() {
  std::string error = Run("pg_ctl", {"-D", dir_ + "/data", "-m", "fast", "-w", "stop"});
  if (error.empty()) running_ = false;
  return error;
}

std::string PostgresServer::conninfo() const {
  return "host=" + dir_ + " port=" + std::to_string(kPort) + " user=fleet dbname=fleet";
}

}  // namespace ablation::testing
