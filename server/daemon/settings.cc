#include "server/daemon/settings.h"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>

#include <CLI/CLI.hpp>

#include "ablation/version.h"
#include "db/fleet/conninfo.h"
#include "server/core/gpu/clock_lock.h"
#include "server/core/history/series.h"
#include "server/metrics/endpoint.h"

namespace ablation::daemon {
namespace {

std::string SelfDirectory() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  buf[n] = '\0';
  return std::filesystem::path(buf).parent_path().string();
}

// A fleet database's password given as --fleet-db is on the command line, which every local user
// reads (ps, /proc/PID/cmdline): said at once, and the argument overwritten in place with its
// redacted form so that it shows only until this line runs.
void HideFleetPassword(int argc, char** argv, const std::string& fleet_db) {
  if (fleet_db.empty() || !fleet::HasPassword(fleet_db)) return;
  std::fprintf(stderr,
               "ablationd: warning: --fleet-db holds a password, which other users of this host "
               "can read on the command line (ps); keep it in --fleet-db-file, "
               "ABLATION_FLEET_DB or ~/.pgpass instead\n");
  for (int i = 1; i < argc; ++i) {
    char* value = argv[i];
    const size_t length = std::strlen(value);
    if (fleet_db.size() > length ||
        std::strcmp(value + length - fleet_db.size(), fleet_db.c_str()) != 0)
      continue;  // neither the value nor --fleet-db=VALUE
    value += length - fleet_db.size();
    const std::string shown = fleet::RedactConnInfo(fleet_db).substr(0, fleet_db.size());
    std::memset(value, 0, fleet_db.size());
    std::memcpy(value, shown.data(), shown.size());
  }
}

bool Refuse(const core::Status& st, int* exit_code) {
  std::fprintf(stderr, "ablationd: %s\n", st.message().c_str());
  *exit_code = 2;
  return false;
}

}  // namespace

core::Status ApplyNodeEnvironment(core::DaemonConfig* config) {
  if (const char* labels = std::getenv("ABLATION_NODE_LABELS")) {
    core::Status st = core::ParseNodeLabels(labels, &config->node_labels);
    if (!st.ok()) return core::InvalidArgument("ABLATION_NODE_LABELS: " + st.message());
  }
  if (const char* name = std::getenv("ABLATION_NODE_NAME"); name && *name) config->node_name = name;
  if (config->node_name.empty()) {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) == 0) config->node_name = host;
  }
  return core::Status::Ok();
}

core::Status ResolveFleetDb(core::FleetConfig* fleet) {
  if (fleet->db.empty() && !fleet->db_file.empty()) {
    std::string error;
    fleet->db = fleet::ReadConnInfoFile(fleet->db_file, &error);
    if (!error.empty()) return core::InvalidArgument("fleet.db_file: " + error);
  }
  if (const char* env = std::getenv("ABLATION_FLEET_DB"); fleet->db.empty() && env && *env)
    fleet->db = env;
  if (fleet->db.empty()) return core::Status::Ok();
  if (std::string error = fleet::CheckConnInfo(fleet->db); !error.empty())
    return core::InvalidArgument(error);
  return core::Status::Ok();
}

void ResolvePaths(const std::string& config_path, core::DaemonConfig* config) {
  const std::filesystem::path dir = std::filesystem::path(config_path).parent_path();
  for (std::string* path : {&config->auth.tokens_path, &config->auth.tls_cert,
                            &config->auth.tls_key, &config->auth.client_ca, &config->presets_path,
                            &config->user_kernels.compiler_path, &config->fleet.db_file}) {
    if (!path->empty() && !config_path.empty() && std::filesystem::path(*path).is_relative())
      *path = (dir / *path).string();
  }
  if (config->clock_journal.empty())
    config->clock_journal = core::ClockLockJournal::DefaultPath(config->db_path);
}

bool ReadSettings(int argc, char** argv, DaemonSettings* settings, int* exit_code) {
  CLI::App app{"ablationd: GEMM kernel ablation benchmarking daemon"};
  std::string config_path, listen, db_path, worker_path, log_level, port_file, presets_path;
  std::string nvml_library, fleet_db, fleet_db_file;
  bool insecure_remote = false;
  int64_t max_stored_bytes_per_run = 0;
  app.add_option("--config", config_path, "TOML configuration file")->check(CLI::ExistingFile);
  app.add_option("--listen", listen, "address to serve gRPC on (default 127.0.0.1:50051)");
  app.add_option("--db", db_path, "SQLite result database (default ./ablationd.db)");
  app.add_option("--worker", worker_path,
                 "worker executable (default: ablation-worker beside ablationd)");
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
  app.add_option("--port-file", port_file, "write the bound port to this file once listening");
  app.add_option("--presets", presets_path,
                 "TOML presets added to the built-in ones (config key: presets)")
      ->check(CLI::ExistingFile);
  app.add_option("--nvml-library", nvml_library,
                 "NVML library to load (default libnvidia-ml.so.1; config key nvml_library)");
  app.add_flag("--reset-clocks", settings->reset_clocks,
               "reset every clock lock recorded in the journal (<db>.clocks) and exit; for "
               "systemd ExecStopPost=");
  auto* metrics_flag =
      app.add_option("--metrics-listen", settings->metrics_listen,
                     "serve Prometheus metrics at http://ADDRESS/metrics (and /healthz), ADDRESS "
                     "an IP literal and port: 127.0.0.1:9464, or [::1]:9464 for IPv6; '' turns it "
                     "off (default 127.0.0.1:9464)")
          ->check([](const std::string& value) {  // refused before any GPU work starts
            std::string host;
            int port = 0;
            return value.empty() ? std::string() : metrics::CheckListenAddress(value, &host, &port);
          });
  app.add_flag("--metrics-allow-remote", settings->metrics_allow_remote,
               "serve --metrics-listen on an address other machines reach (plain HTTP; with "
               "[auth] tokens a scrape needs a read token)");
  app.add_option("--hash-token", settings->hash_token,
                 "print the token-file line (sha256 name role) for the token on stdin (a new "
                 "one when stdin is empty) and exit; NAME:ROLE, role read, run or admin");
  app.add_flag("--insecure-remote", insecure_remote,
               "serve a non-loopback --listen address without TLS or authentication (warned "
               "at every start)");
  app.add_option("--audit-log", settings->audit_log,
                 "append the audit trail (JSON lines: authentication failures, cancels, kernel "
                 "changes, clock locks, reloads) to FILE, created 0600; default: the daemon's log");
  app.add_option("--fleet-db", fleet_db,
                 "export finished runs to this PostgreSQL (postgresql://USER@HOST/DB); a password "
                 "is better kept in --fleet-db-file, ABLATION_FLEET_DB or ~/.pgpass (config key "
                 "fleet.db)");
  app.add_option("--fleet-db-file", fleet_db_file,
                 "read the fleet database's connection string from the first line of FILE (a "
                 "mounted secret; config key fleet.db_file)");
  app.add_option("--max-stored-bytes-per-run", max_stored_bytes_per_run,
                 "most bytes one run may plan to store: measurements x (max_samples x 32 + 1024); "
                 "refused up front past it (config key limits.max_stored_bytes_per_run, default "
                 "4 GiB)")
      ->check(CLI::Range(int64_t(1) << 20, std::numeric_limits<int64_t>::max()));
  app.set_version_flag("--version", std::string(kDaemonVersion) + " (" + kGitRevision + ")");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    *exit_code = app.exit(e);
    return false;
  }
  settings->metrics_listen_given = metrics_flag->count() > 0;
  if (std::string host; !settings->metrics_listen.empty()) {
    int port = 0;
    if (metrics::CheckListenAddress(settings->metrics_listen, &host, &port).empty() &&
        !metrics::IsLoopbackHost(host) && !settings->metrics_allow_remote)
      return Refuse(
          core::InvalidArgument("--metrics-listen " + settings->metrics_listen +
                                " can be reached from other machines over plain HTTP: listen on "
                                "127.0.0.1 or [::1], or pass --metrics-allow-remote to accept "
                                "that"),
          exit_code);
  }
  if (!settings->hash_token.empty()) return true;

  core::DaemonConfig& config = settings->config;
  settings->config_path = config_path;
  if (!config_path.empty()) {
    if (core::Status st = core::LoadConfigFile(config_path, &config); !st.ok())
      return Refuse(st, exit_code);
  }
  // Flags given on the command line win over the file, now and at every reload.
  settings->apply_flags = [=](core::DaemonConfig* c) {
    if (!listen.empty()) c->listen = listen;
    if (!db_path.empty()) c->db_path = db_path;
    if (!worker_path.empty()) c->worker_path = worker_path;
    if (!log_level.empty()) c->log_level = log_level;
    if (!port_file.empty()) c->port_file = port_file;
    if (!nvml_library.empty()) c->nvml_library = nvml_library;
    if (insecure_remote) c->auth.insecure_remote = true;
    if (max_stored_bytes_per_run > 0) c->limits.max_stored_bytes_per_run = max_stored_bytes_per_run;
    if (!fleet_db.empty()) c->fleet.db = fleet_db;
    if (!fleet_db_file.empty()) c->fleet.db_file = fleet_db_file;
  };
  settings->apply_flags(&config);
  HideFleetPassword(argc, argv, fleet_db);
  ResolvePaths(config_path, &config);
  if (core::Status st = ResolveFleetDb(&config.fleet); !st.ok()) return Refuse(st, exit_code);
  if (!presets_path.empty()) config.presets_path = presets_path;
  if (config.worker_path.empty()) config.worker_path = SelfDirectory() + "/ablation-worker";
  if (core::Status st = ApplyNodeEnvironment(&config); !st.ok()) return Refuse(st, exit_code);

  settings->presets = std::make_shared<core::Presets>();
  if (core::Status st =
          settings->presets->LoadText(core::BuiltinPresetsToml(), "presets.toml (built-in)");
      !st.ok())
    return Refuse(st, exit_code);
  if (!config.presets_path.empty()) {
    if (core::Status st = settings->presets->LoadFile(config.presets_path); !st.ok())
      return Refuse(st, exit_code);
  }
  return true;
}

core::Status ReloadConfig(const DaemonSettings& settings, const core::DaemonConfig& current,
                          core::DaemonConfig* out) {
  if (settings.config_path.empty()) {
    *out = current;  // no file: only the token file can be read again
    return core::Status::Ok();
  }
  core::DaemonConfig fresh;
  if (core::Status st = core::LoadConfigFile(settings.config_path, &fresh); !st.ok()) return st;
  settings.apply_flags(&fresh);
  ResolvePaths(settings.config_path, &fresh);
  if (core::Status st = ResolveFleetDb(&fresh.fleet); !st.ok()) return st;
  if (fresh.worker_path.empty()) fresh.worker_path = current.worker_path;
  if (core::Status st = ApplyNodeEnvironment(&fresh); !st.ok()) return st;
  static const char* const kLevels[] = {"trace", "debug", "info", "warn", "error"};
  if (std::find(std::begin(kLevels), std::end(kLevels), fresh.log_level) == std::end(kLevels))
    return core::InvalidArgument(settings.config_path + ": log_level: '" + fresh.log_level +
                                 "' is not one of trace, debug, info, warn, error");
  *out = std::move(fresh);
  return core::Status::Ok();
}

std::vector<std::string> TimingChanges(const core::TimingDefaults& t0,
                                       const core::TimingDefaults& t1) {
  std::vector<std::string> out;
  auto number = [&](const char* key, double a, double b) {
    if (a != b)
      out.push_back(std::string(key) + " (" + fmt::format("{}", a) + " -> " + fmt::format("{}", b) +
                    ")");
  };
  number("timing.min_samples", t0.min_samples, t1.min_samples);
  number("timing.max_samples", t0.max_samples, t1.max_samples);
  number("timing.min_seconds", t0.min_seconds, t1.min_seconds);
  number("timing.max_seconds", t0.max_seconds, t1.max_seconds);
  number("timing.target_noise", t0.target_noise, t1.target_noise);
  number("timing.warmup_count", t0.warmup_count, t1.warmup_count);
  number("timing.warmup_seconds", t0.warmup_seconds, t1.warmup_seconds);
  if (t0.regime != t1.regime)
    out.push_back(std::string("timing.regime (") + core::RegimeName(t0.regime) + " -> " +
                  core::RegimeName(t1.regime) + ")");
  const core::RegimeParams &r0 = t0.regime_params, &r1 = t1.regime_params;
  number("timing.window_seconds", r0.window_seconds, r1.window_seconds);
  number("timing.settle_max_seconds", r0.settle_max_seconds, r1.settle_max_seconds);
  number("timing.burst_seconds", r0.burst_seconds, r1.burst_seconds);
  number("timing.cool_min_seconds", r0.cool_min_seconds, r1.cool_min_seconds);
  number("timing.cool_max_seconds", r0.cool_max_seconds, r1.cool_max_seconds);
  number("timing.settle_min_seconds", r0.settle_min_seconds, r1.settle_min_seconds);
  number("timing.settle_span_seconds", r0.span_seconds, r1.span_seconds);
  number("timing.settle_spans", r0.settle_spans, r1.settle_spans);
  number("timing.settle_clock_tolerance", r0.clock_tolerance, r1.clock_tolerance);
  number("timing.settle_power_tolerance", r0.power_tolerance, r1.power_tolerance);
  return out;
}

std::vector<std::string> NeedRestart(const core::DaemonConfig& running,
                                     const core::DaemonConfig& fresh) {
  std::vector<std::string> out;
  auto text = [&](const char* key, const std::string& a, const std::string& b) {
    if (a != b) out.push_back(std::string(key) + " ('" + a + "' -> '" + b + "')");
  };
  auto number = [&](const char* key, int64_t a, int64_t b) {
    if (a != b)
      out.push_back(std::string(key) + " (" + std::to_string(a) + " -> " + std::to_string(b) + ")");
  };
  auto role = [](const std::optional<core::Role>& r) {
    return r ? std::string(core::RoleName(*r)) : std::string("default");
  };
  text("listen", running.listen, fresh.listen);
  text("db", running.db_path, fresh.db_path);
  // The fleet database's connection string may hold a password: named, never printed.
  if (running.fleet.db != fresh.fleet.db) out.push_back("fleet.db (the connection string)");
  text("worker", running.worker_path, fresh.worker_path);
  text("port_file", running.port_file, fresh.port_file);
  text("nvml_library", running.nvml_library, fresh.nvml_library);
  text("clock_journal", running.clock_journal, fresh.clock_journal);
  text("presets", running.presets_path, fresh.presets_path);
  text("tls.cert", running.auth.tls_cert, fresh.auth.tls_cert);
  text("tls.key", running.auth.tls_key, fresh.auth.tls_key);
  text("tls.client_ca", running.auth.client_ca, fresh.auth.client_ca);
  number("tls.require_client_cert", running.auth.require_client_cert,
         fresh.auth.require_client_cert);
  text("auth.anonymous_role", role(running.auth.anonymous_role), role(fresh.auth.anonymous_role));
  text("auth.client_cert_role", role(running.auth.client_cert_role),
       role(fresh.auth.client_cert_role));
  number("insecure_remote", running.auth.insecure_remote, fresh.auth.insecure_remote);
  number("queue.max_queued_per_gpu", running.max_queued_per_gpu, fresh.max_queued_per_gpu);
  number("readers", running.readers, fresh.readers);
  number("hang_margin_seconds", running.hang_margin_seconds, fresh.hang_margin_seconds);
  number("limits.max_message_bytes", running.limits.max_message_bytes,
         fresh.limits.max_message_bytes);
  number("limits.max_concurrent_streams", running.limits.max_concurrent_streams,
         fresh.limits.max_concurrent_streams);
  number("limits.grpc_memory_bytes", running.limits.grpc_memory_bytes,
         fresh.limits.grpc_memory_bytes);
  // [user_kernels] is read once, into the kernel store; [timing] is applied (TimingChanges).
  text("user_kernels.compiler", running.user_kernels.compiler_path,
       fresh.user_kernels.compiler_path);
  text("user_kernels.add_role", running.user_kernels.add_role, fresh.user_kernels.add_role);
  number("user_kernels.max_kernels_per_owner", running.user_kernels.max_kernels_per_owner,
         fresh.user_kernels.max_kernels_per_owner);
  number("user_kernels.max_versions_per_kernel", running.user_kernels.max_versions_per_kernel,
         fresh.user_kernels.max_versions_per_kernel);
  number("user_kernels.allow_unsandboxed_compiles", running.user_kernels.allow_unsandboxed_compiles,
         fresh.user_kernels.allow_unsandboxed_compiles);
  text("user_kernels.compile_user", running.user_kernels.compile_user,
       fresh.user_kernels.compile_user);
  text("user_kernels.source_readers", running.user_kernels.source_readers,
       fresh.user_kernels.source_readers);
  number("user_kernels.compile_memory_mb", running.user_kernels.compile.memory_mb,
         fresh.user_kernels.compile.memory_mb);
  number("user_kernels.max_cubin_bytes", int64_t(running.user_kernels.compile.max_cubin_bytes),
         int64_t(fresh.user_kernels.compile.max_cubin_bytes));
  number("user_kernels.max_bytes_per_kernel", running.user_kernels.max_bytes_per_kernel,
         fresh.user_kernels.max_bytes_per_kernel);
  number("user_kernels.max_bytes_per_owner", running.user_kernels.max_bytes_per_owner,
         fresh.user_kernels.max_bytes_per_owner);
  number("user_kernels.compile_threads", running.user_kernels.compile_threads,
         fresh.user_kernels.compile_threads);
  number("user_kernels.max_waiting_adds", running.user_kernels.max_waiting_adds,
         fresh.user_kernels.max_waiting_adds);
  text("node.name", running.node_name, fresh.node_name);
  text("node.labels", core::FormatNodeLabels(running.node_labels),
       core::FormatNodeLabels(fresh.node_labels));
  return out;
}

}  // namespace ablation::daemon
