// `kernel add FILE.cu --manifest FILE.toml | check FILE.cu --manifest FILE.toml [--arch sm_90a] |
// list | show NAME [--source] | remove NAME`: the user kernels a daemon holds
// (kernels/user/README.md has the manifest's format).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "client/cli/options.h"

namespace ablation::client {

struct KernelOptions {
  std::string source_path;    // add, check
  std::string manifest_path;  // add, check
  std::string arch;           // check: compile for this architecture rather than GPU 0's
  std::string name;           // show, remove
  bool with_source = false;   // show
};

struct KernelCommands {
  CLI::App* add = nullptr;
  CLI::App* check = nullptr;
  CLI::App* list = nullptr;
  CLI::App* show = nullptr;
  CLI::App* remove = nullptr;
};

CLI::App* SetupKernel(CLI::App& app, KernelOptions& options, KernelCommands* commands);
int ExecuteKernel(const KernelOptions& options, const KernelCommands& commands,
                  const CommandContext& context);

}  // namespace ablation::client
