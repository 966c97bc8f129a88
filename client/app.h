// The command line of ablation-client: global options, the subcommands wired together, and the
// dispatch to the one the user chose. Lives outside main.cc so tests drive the real parser.
#pragma once

#include <atomic>
#include <ostream>
#include <string>
#include <vector>

namespace ablation::client {

// Parses `args` (args[0] is the program name), runs the subcommand and returns the exit code.
// `interrupted`, when given, replaces the SIGINT handler `run` installs (tests set it).
int RunApp(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
           const std::atomic<bool>* interrupted = nullptr);

}  // namespace ablation::client
