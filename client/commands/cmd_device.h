// `device [--device N]`: the GPU's identity, live telemetry and queue (GetDevice).
#pragma once

#include <CLI/CLI.hpp>

#include "client/cli/options.h"

namespace ablation::client {

struct DeviceOptions {
  int device = 0;
};

CLI::App* SetupDevice(CLI::App& app, DeviceOptions& options);
int ExecuteDevice(const DeviceOptions& options, const CommandContext& context);

}  // namespace ablation::client
