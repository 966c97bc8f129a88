// Options every subcommand sees, and what a subcommand runs with.
#pragma once

#include <atomic>
#include <optional>
#include <ostream>
#include <string>

#include "ablation/v1/ablation.grpc.pb.h"
#include "client/output/formats.h"

namespace ablation::client {

namespace v1 = ::ablation::v1;

struct GlobalOptions {
  std::string server = "127.0.0.1:50051";
  Format format = Format::kTable;
  // Unset: queries get kDefaultQueryTimeoutS, calls that wait for the GPU get no deadline.
  std::optional<double> timeout_s;
  bool quiet = false;  // no progress lines on stderr
  std::string
      output;  // -o FILE: the command's output goes there (whole, or not at all); "-": stdout
  std::optional<int> width;  // --width: tables fit this many columns (0: no limit); unset: terminal
  // Who the client is and how it reaches the daemon (client/sources/channel.h: MakeChannel).
  std::string token_file;  // a file whose first line is the bearer token
  std::string token;       // ABLATION_TOKEN: the token itself
  bool tls = false;        // also: an https:// or grpcs:// --server
  std::string ca_file;     // PEM roots to verify the daemon's certificate (default: the system's)
  std::string cert_file;   // PEM client certificate, with key_file, for tls.client_ca daemons
  std::string key_file;
  std::string tls_server_name;  // the name to check the daemon's certificate against
  // --fleet-db / ABLATION_FLEET_DB: history, results and compare read a fleet's PostgreSQL
  // (client/fleet.h), read-only, instead of asking the daemon.
  std::string fleet_db;
};

// What a subcommand's Execute function gets. Streams and the stub are injected so that tests
// drive the real commands against an in-process fake server and read what they print.
struct CommandContext {
  const GlobalOptions& global;
  v1::Ablation::StubInterface& stub;
  std::ostream& out;
  std::ostream& err;
  // Set when the user asks to stop (Ctrl-C). Null: `run` installs its own SIGINT handler.
  const std::atomic<bool>* interrupted = nullptr;
};

}  // namespace ablation::client
