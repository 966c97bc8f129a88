// `verify --variant GLOB ...`: checks variants' outputs against a reference (Verify).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "client/options.h"

namespace ablation::client {

struct VerifyOptions {
  std::vector<std::string> variants;
  std::vector<std::string> shapes;  // empty: 4096x4096x4096
  std::string dtype;
  std::string against;
  int device = 0;
  std::vector<std::string> tags;
};

CLI::App* SetupVerify(CLI::App& app, VerifyOptions& options);
ablation::v1::VerifyRequest BuildVerifyRequest(const VerifyOptions& options);
int ExecuteVerify(const VerifyOptions& options, const CommandContext& context);

}  // namespace ablation::client
