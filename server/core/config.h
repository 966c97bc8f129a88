// The daemon's settings: defaults, then a TOML file (--config), then command-line flags.
#pragma once

#include <string>

#include "server/core/run_plan.h"
#include "server/core/status.h"

namespace ablation::core {

struct DaemonConfig {
  std::string listen = "127.0.0.1:50051";
  std::string db_path = "ablationd.db";
  std::string worker_path;  ///< empty: ablation-worker beside the daemon's executable
  std::string log_level = "info";
  std::string port_file;  ///< if set, the bound port is written there once listening
  std::string nvml_library = "libnvidia-ml.so.1";  ///< NVML, loaded with dlopen
  std::string clock_journal;  ///< where clock locks are recorded; empty: "<db>.clocks"
  /// TOML presets added to (and replacing same-named) built-in ones; empty: built-ins only.
  std::string presets_path;
  TimingDefaults timing;
  int max_queued_per_gpu = 256;
};

/// Reads a TOML file over `config`. Unknown keys and wrong types are errors naming the key.
Status LoadConfigFile(const std::string& path, DaemonConfig* config);

/// Parses TOML text (for tests); `origin` names the source in error messages.
Status LoadConfigText(const std::string& text, const std::string& origin, DaemonConfig* config);

}  // namespace ablation::core
