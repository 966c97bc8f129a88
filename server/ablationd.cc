// ablationd: the GPU kernel benchmarking daemon. Wires config, store, kernel catalog, run manager
// and the gRPC server together; everything else lives in server/core and server/rpc.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include <CLI/CLI.hpp>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <spdlog/spdlog.h>

#include "ablation/version.h"
#include "kernels/registry.h"
#include "server/core/clock_lock.h"
#include "server/core/config.h"
#include "server/core/nvml.h"
#include "server/core/daemon_core.h"
#include "server/metrics/endpoint.h"
#include "server/rpc/service.h"

namespace {

std::string SelfDirectory() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  buf[n] = '\0';
  return std::filesystem::path(buf).parent_path().string();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ablation;
  CLI::App app{"ablationd: GEMM kernel ablation benchmarking daemon"};
  std::string config_path, listen, db_path, worker_path, log_level, port_file, presets_path;
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
  std::string nvml_library;
  bool reset_clocks = false;
  app.add_option("--nvml-library", nvml_library,
                 "NVML library to load (default libnvidia-ml.so.1; config key nvml_library)");
  app.add_flag("--reset-clocks", reset_clocks,
               "reset every clock lock recorded in the journal (<db>.clocks) and exit; for "
               "systemd ExecStopPost=");
  std::string metrics_listen = "127.0.0.1:9464";
  auto* metrics_flag =
      app.add_option("--metrics-listen", metrics_listen,
                     "serve Prometheus metrics at http://ADDRESS/metrics; '' turns it off "
                     "(default 127.0.0.1:9464)")
          ->check([](const std::string& value) {  // refused before any GPU work starts
            std::string host;
            int port = 0;
            return value.empty() ? std::string() : metrics::CheckListenAddress(value, &host, &port);
          });
  app.set_version_flag("--version", std::string(kDaemonVersion) + " (" + kGitRevision + ")");
  CLI11_PARSE(app, argc, argv);

  core::DaemonConfig config;
  if (!config_path.empty()) {
    core::Status st = core::LoadConfigFile(config_path, &config);
    if (!st.ok()) {
      std::fprintf(stderr, "ablationd: %s\n", st.message().c_str());
      return 2;
    }
  }
  // Flags given on the command line win over the file.
  if (!listen.empty()) config.listen = listen;
  if (!db_path.empty()) config.db_path = db_path;
  if (!worker_path.empty()) config.worker_path = worker_path;
  if (!log_level.empty()) config.log_level = log_level;
  if (!port_file.empty()) config.port_file = port_file;
  if (!nvml_library.empty()) config.nvml_library = nvml_library;
  if (config.clock_journal.empty())
    config.clock_journal = core::ClockLockJournal::DefaultPath(config.db_path);
  // A relative presets path in the config file is relative to that file.
  if (!config.presets_path.empty() && !config_path.empty() &&
      std::filesystem::path(config.presets_path).is_relative()) {
    config.presets_path =
        (std::filesystem::path(config_path).parent_path() / config.presets_path).string();
  }
  if (!presets_path.empty()) config.presets_path = presets_path;

  auto presets = std::make_shared<core::PresetCatalog>();
  if (core::Status st = presets->LoadText(core::BuiltinPresetsToml(), "presets.toml (built-in)");
      !st.ok()) {
    std::fprintf(stderr, "ablationd: %s\n", st.message().c_str());
    return 2;
  }
  if (!config.presets_path.empty()) {
    if (core::Status st = presets->LoadFile(config.presets_path); !st.ok()) {
      std::fprintf(stderr, "ablationd: %s\n", st.message().c_str());
      return 2;
    }
  }
  if (config.worker_path.empty()) config.worker_path = SelfDirectory() + "/ablation-worker";

  spdlog::set_level(spdlog::level::from_str(config.log_level));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  spdlog::info("ablationd {} ({}) starting; db {}", kDaemonVersion, kGitRevision, config.db_path);

  // Clock locking may be granted through an ambient capability (systemd AmbientCapabilities=):
  // the daemon keeps it in its own effective set, but its workers (which run user kernels) must
  // not inherit it, so the ambient set is cleared before any worker is spawned.
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);

  // Signals are taken synchronously by the main thread; block them before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  // NVML: telemetry and clocks. Loaded at run time; its absence is no error, only less to see.
  std::string nvml_why;
  std::unique_ptr<core::Nvml> nvml = core::Nvml::Load(config.nvml_library, &nvml_why);
  if (nvml)
    spdlog::info("NVML {} loaded: driver {}", config.nvml_library, nvml->DriverVersion());
  else
    spdlog::warn("NVML unavailable ({}): no telemetry, no clock locking", nvml_why);
  // Locks left by a daemon that died (recorded before they were taken) are reset first.
  core::ClockLockJournal journal(config.clock_journal);
  {
    std::vector<std::string> reset;
    core::Status st = journal.ResetAll(nvml.get(), &reset);
    for (const auto& uuid : reset) spdlog::warn("reset clocks of {} left locked earlier", uuid);
    if (reset_clocks) {
      if (!st.ok()) {
        std::fprintf(stderr, "ablationd --reset-clocks: %s\n", st.message().c_str());
        return 1;
      }
      std::printf("ablationd --reset-clocks: %zu GPU(s) reset (journal %s)\n", reset.size(),
                  config.clock_journal.c_str());
      return 0;
    }
    if (!st.ok()) spdlog::error("clock journal {}: {}", config.clock_journal, st.message());
  }

  kernels::Registry registry;
  kernels::RegisterCatalog(registry);
  spdlog::info("{} variants registered", registry.All().size());

  core::CoreOptions options;
  options.db_path = config.db_path;
  options.runs.worker_path = config.worker_path;
  options.runs.timing = config.timing;
  options.runs.max_queued_per_gpu = config.max_queued_per_gpu;
  options.runs.presets = presets;
  options.runs.nvml = nvml.get();
  options.runs.nvml_unavailable = nvml ? "" : nvml_why;
  options.runs.clock_journal = &journal;
  std::unique_ptr<core::DaemonCore> core;
  if (core::Status st = core::DaemonCore::Open(options, &registry, &core); !st.ok()) {
    spdlog::error("{}", st.message());
    return 1;
  }

  rpc::AblationService service(core.get());
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(config.listen, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    spdlog::error("cannot listen on {} (address in use or malformed?)", config.listen);
    core->Shutdown();
    return 1;
  }
  server->GetHealthCheckService()->SetServingStatus(true);
  // The default port taken (a second daemon on the host) costs only the metrics; an address
  // given on purpose that cannot be served is an error.
  std::unique_ptr<metrics::MetricsEndpoint> metrics_endpoint;
  if (!metrics_listen.empty()) {
    core::Status st = metrics::MetricsEndpoint::Start(
        metrics_listen, &core::metrics::Daemon().registry(), &metrics_endpoint);
    if (st.ok()) {
      spdlog::info("metrics on http://{}/metrics (port {})", metrics_listen,
                   metrics_endpoint->port());
    } else if (metrics_flag->count() == 0 && st.code() == core::Code::kFailedPrecondition) {
      spdlog::warn("{}; going on without metrics", st.message());
    } else {
      spdlog::error("{}", st.message());
      core->Shutdown();
      server->Shutdown();
      return 1;
    }
  }

  if (!config.port_file.empty()) {
    std::string tmp = config.port_file + ".tmp";
    std::ofstream(tmp) << port << "\n";
    std::filesystem::rename(tmp, config.port_file);
  }
  spdlog::info("listening on {} (port {})", config.listen, port);

  int sig = 0;
  sigwait(&signals, &sig);
  spdlog::info("signal {}: shutting down", sig);
  server->GetHealthCheckService()->SetServingStatus(false);
  core->Shutdown();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  spdlog::info("stopped");
  return 0;
}
