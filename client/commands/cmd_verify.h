// `verify --variant GLOB ...`: checks variants' outputs against a reference (Verify).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "client/cli/options.h"
#include "client/cli/selection.h"

namespace ablation::client {

struct VerifyOptions : Selection {  // variants, shapes and dtype as run's (selection.h)
  std::string against;
  int device = 0;
  std::vector<std::string> tags;
};

CLI::App* SetupVerify(CLI::App& app, VerifyOptions& options);
ablation::v1::VerifyRequest BuildVerifyRequest(const VerifyOptions& options);
int ExecuteVerify(const VerifyOptions& options, const CommandContext& context);

}  // namespace ablation::client
