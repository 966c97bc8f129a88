// What ablationd is asked to do, read once at start: its flags, then its TOML configuration
// (--config; flags win over the file), resolved into one DaemonSettings. Nothing here starts a
// thread, opens the database or touches a GPU, so every mistake is reported before anything runs.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "server/core/setup/config.h"
#include "server/core/setup/presets.h"

namespace ablation::daemon {

struct DaemonSettings {
  core::DaemonConfig config;                      ///< the file's settings with the flags applied
  std::shared_ptr<core::Presets> presets;         ///< built in, then the configured file's
  std::string metrics_listen = "127.0.0.1:9464";  ///< "" turns the endpoint off
  bool metrics_listen_given = false;  ///< --metrics-listen named on purpose: failing to serve it
                                      ///< is an error rather than a warning
  bool reset_clocks = false;          ///< --reset-clocks: reset the journal's locks and exit
  std::string hash_token;             ///< --hash-token NAME:ROLE: print a token line and exit
  bool metrics_allow_remote = false;  ///< --metrics-allow-remote: serve a non-loopback address
  std::string config_path;            ///< --config, read again on SIGHUP; "" when none
  std::string audit_log;              ///< --audit-log FILE; "": audit lines go to the log
  /// The command line's settings put over a configuration read again (SIGHUP): flags win over
  /// the file then as at start. Set by ReadSettings; never null after it.
  std::function<void(core::DaemonConfig*)> apply_flags = [](core::DaemonConfig*) {};
};

/// The configuration as SIGHUP reads it again: the file (when there is one; else `current`),
/// the flags over it, paths resolved, the node environment applied. An error names the key.
core::Status ReloadConfig(const DaemonSettings& settings, const core::DaemonConfig& current,
                          core::DaemonConfig* out);

/// The settings that differ between `running` and `fresh` and take effect only at a restart
/// (listen address, database, TLS, gRPC's own limits, ...), each as "key (running -> fresh)".
std::vector<std::string> NeedRestart(const core::DaemonConfig& running,
                                     const core::DaemonConfig& fresh);

/// The [timing] settings that differ, each as "timing.key (running -> fresh)": SIGHUP applies them
/// to runs planned from then on.
std::vector<std::string> TimingChanges(const core::TimingDefaults& running,
                                       const core::TimingDefaults& fresh);

/// Parses the command line and reads the configuration. Returns true with `settings` filled when
/// the daemon should go on; false with `exit_code` set when it should stop now (--help or
/// --version printed: 0; a bad flag, configuration or presets file, said on stderr: 2).
bool ReadSettings(int argc, char** argv, DaemonSettings* settings, int* exit_code);

/// Relative token, TLS and presets paths in a configuration file are relative to that file; the
/// clock journal defaults to one beside the database. Applied by ReadSettings.
void ResolvePaths(const std::string& config_path, core::DaemonConfig* config);

/// The fleet database's connection string: fleet.db (or --fleet-db), else the first line of
/// fleet.db_file, else ABLATION_FLEET_DB; checked by libpq's parser (an error names what is wrong,
/// never the password). Applied by ReadSettings.
core::Status ResolveFleetDb(core::FleetConfig* fleet);

/// ABLATION_NODE_LABELS (key=value,...) over the configured node labels, ABLATION_NODE_NAME over
/// the node's name, and the host name where neither names it. Applied by ReadSettings; an error
/// names the bad label.
core::Status ApplyNodeEnvironment(core::DaemonConfig* config);

}  // namespace ablation::daemon
