// `variants [GLOB]`: the kernel variants the daemon has (ListVariants).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "client/cli/options.h"

namespace ablation::client {

struct VariantsOptions {
  std::string glob;
  std::string shape;  ///< MxNxK: name the build each variant runs there
  std::string dtype;
};

CLI::App* SetupVariants(CLI::App& app, VariantsOptions& options);
int ExecuteVariants(const VariantsOptions& options, const CommandContext& context);

}  // namespace ablation::client
