// Debian's real PostgreSQL server for the fleet tests: initdb in a temporary folder, then pg_ctl
// start on a Unix socket in that folder (no TCP port: nothing else on the machine can reach it or
// collide with it). initdb refuses root, so as root the server runs as `nobody` (runuser).
#pragma once

#include <string>
#include <vector>

namespace ablation::testing {

class PostgresServer {
 public:
  /// Where Debian puts the server's programs (/usr/lib/postgresql/<newest>/bin); "" when absent.
  static std::string FindBinDir();

  PostgresServer() = default;
  ~PostgresServer();  ///< stops the server and removes the folder
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  /// initdb and the first start, with a database "fleet". "" or what went wrong (with the log).
  std::string Create(const std::string& bin_dir);
  std::string Start();  ///< "" or what went wrong
  std::string Stop();   ///< fast shutdown: every client disconnected; "" or what went wrong

  /// libpq's connection string for the database "fleet" as its superuser.
  std::string conninfo() const;

 private:
  std::string Run(const std::string& program, std::vector<std::string> args) const;

  std::string bin_;
  std::string dir_;  // holds data/, the socket and the log
  bool as_nobody_ = false;
  bool running_ = false;
};

}  // namespace ablation::testing
