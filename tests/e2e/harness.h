// End-to-end test harness: starts a real ablationd on loopback with a real SQLite file, runs
// the real ablation-client, and gives tests a gRPC stub of their own.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ablation/v1/ablation.grpc.pb.h"

namespace ablation::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// Runs argv (argv[0] a path) with extra environment, waits at most timeout_s.
CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env = {}, int timeout_s = 300);

/// A fresh directory under $TMPDIR (or /tmp), removed by the caller if it cares.
std::string MakeTempDir();

class Daemon {
 public:
  /// dir holds the database, port file and log. worker: the worker executable to use.
  Daemon(std::string dir, std::string worker, std::map<std::string, std::string> env = {});
  ~Daemon();

  /// Starts ablationd and waits until it listens. Returns "" or what went wrong (with its log).
  std::string Start();
  /// Sends a signal and waits for the process; returns its wait status.
  int Stop(int sig);
  pid_t pid() const { return pid_; }
  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string db_path() const { return dir_ + "/results.db"; }
  std::string log() const;
  std::unique_ptr<v1::Ablation::Stub> Stub() const;
  /// Extra command-line arguments for the next Start().
  void set_extra_args(std::vector<std::string> args) { extra_args_ = std::move(args); }
  /// A command the daemon is started through (e.g. setpriv with capabilities), argv prefix.
  void set_launcher(std::vector<std::string> launcher) { launcher_ = std::move(launcher); }

  /// Runs ablation-client against this daemon.
  CommandResult Client(std::vector<std::string> args, int timeout_s = 300) const;

 private:
  std::string dir_;
  std::string worker_;
  std::map<std::string, std::string> env_;
  pid_t pid_ = -1;
  int port_ = 0;
  std::vector<std::string> extra_args_;
  std::vector<std::string> launcher_;
};

/// Child pids of `parent` whose executable name is `name` (from /proc).
std::vector<pid_t> ChildrenNamed(pid_t parent, const std::string& name);

}  // namespace ablation::testing
