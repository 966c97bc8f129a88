#include "server/daemon/run.h"

#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/resource_quota.h>
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>

#include "ablation/v1/ablation.grpc.pb.h"
#include "ablation/version.h"
#include "kernels/registry.h"
#include "server/core/daemon/daemon_core.h"
#include "server/core/gpu/clock_guard.h"
#include "server/core/gpu/clock_lock.h"
#include "server/core/gpu/nvml.h"
#include "server/core/history/series.h"
#include "server/core/setup/auth.h"
#include "server/daemon/memory_trim.h"
#include "server/daemon/settings.h"
#include "server/metrics/endpoint.h"
#include "server/metrics/process.h"
#include "server/metrics/registry.h"
#include "server/rpc/audit.h"
#include "server/rpc/listener.h"
#include "server/rpc/reflection_v1.h"
#include "server/rpc/service.h"
#include "server/rpc/split_services.h"
#include "server/rpc/unknown_calls.h"

namespace ablation::daemon {
namespace {

// Health by what the daemon can do now, for every service it serves: queries and kernels
// always, runs and inspection (the GPU's worker, ncu) only with a usable GPU; Ablation, which
// holds them all, and "" (the daemon as a whole) whenever it answers.
void UpdateHealth(grpc::HealthCheckServiceInterface* health, core::DaemonCore& core) {
  const bool gpu = core.runs().Device(0).available;
  health->SetServingStatus(true);
  health->SetServingStatus(v1::Ablation::service_full_name(), true);
  health->SetServingStatus(v1::Queries::service_full_name(), true);
  health->SetServingStatus(v1::Kernels::service_full_name(), true);
  health->SetServingStatus(v1::Runs::service_full_name(), gpu);
  health->SetServingStatus(v1::Inspection::service_full_name(), gpu);
}

// What of the configuration takes effect under calls, applied the same way at start and at
// SIGHUP: the request limits of the service, the plan limits of runs and profiles, and the
// [timing] defaults of runs planned from then on (those queued or running keep theirs).
void ApplyReloadable(const core::DaemonConfig& config, core::DaemonCore& core,
                     rpc::AblationService& service) {
  const core::RequestLimits& limits = config.limits;
  service.SetLimits(limits);
  core.runs().SetPlanLimits(limits.max_measurements_per_run, limits.max_samples_per_measurement,
                            limits.max_stored_bytes_per_run);
  core.profiler().SetPlanLimits(limits.max_measurements_per_run, limits.max_stored_bytes_per_run);
  core.runs().SetTimingDefaults(config.timing);
}

// SIGHUP: the configuration file (the flags over it) and its token file read again. What can
// change under calls takes effect for new calls: tokens, the log level, the request and plan
// limits, the runs in flight per caller, the [timing] defaults of runs planned from then on; the
// audit log file is reopened (logrotate). What shapes
// what already runs (listen address, database, TLS, gRPC's own limits, ...) is named in a log
// line as needing a restart and stays. A mistake in either file keeps everything in force and
// says why. `running` is the configuration in force, updated here.
void Reload(const DaemonSettings& settings, core::DaemonConfig* running,
            const rpc::Listener& listener, core::DaemonCore& core, rpc::AblationService& service) {
  core::DaemonConfig fresh;
  core::Status st = ReloadConfig(settings, *running, &fresh);
  core::TokenTable tokens;
  if (st.ok() && !fresh.auth.tokens_path.empty())
    st = core::TokenTable::Load(fresh.auth.tokens_path, &tokens);
  if (st.ok() && fresh.auth.tokens_path.empty() && !running->auth.tokens_path.empty())
    st = core::FailedPrecondition(
        "the configuration no longer names a token file; dropping every token needs a restart");
  if (st.ok() && !listener.authorizer)
    st = core::FailedPrecondition("this listener checks no tokens");
  if (!st.ok()) {
    spdlog::error("SIGHUP: reload refused, the configuration in force stays: {}", st.message());
    rpc::AuditLog::Get().Daemon("config_reload", "refused: " + st.message());
    return;
  }
  if (core::Status reopened = rpc::AuditLog::Get().OpenFile(settings.audit_log); !reopened.ok())
    spdlog::error("SIGHUP: {}; audit lines go to this log", reopened.message());
  for (const std::string& change : NeedRestart(*running, fresh))
    spdlog::warn("SIGHUP: {} changed and needs a restart; the running value stays", change);

  const size_t n = tokens.size();
  if (!fresh.auth.tokens_path.empty()) listener.authorizer->ReplaceTokens(std::move(tokens));
  running->auth.tokens_path = fresh.auth.tokens_path;
  running->log_level = fresh.log_level;
  spdlog::set_level(spdlog::level::from_str(running->log_level));
  // The limits that are read per call; gRPC's own were fixed when the server was built.
  const std::vector<std::string> timing_changes = TimingChanges(running->timing, fresh.timing);
  core::RequestLimits limits = fresh.limits;
  limits.max_message_bytes = running->limits.max_message_bytes;
  limits.max_concurrent_streams = running->limits.max_concurrent_streams;
  limits.grpc_memory_bytes = running->limits.grpc_memory_bytes;
  running->limits = limits;
  running->timing = fresh.timing;
  ApplyReloadable(*running, core, service);
  for (const std::string& change : timing_changes)
    spdlog::info("SIGHUP: {} applied to runs planned from now on", change);
  const std::string what =
      std::to_string(n) + " token(s)" +
      (fresh.auth.tokens_path.empty() ? "" : " from " + fresh.auth.tokens_path) + ", log level " +
      running->log_level + ", limits: " + std::to_string(limits.max_measurements_per_run) +
      " measurements, " + std::to_string(limits.max_samples_per_measurement) + " samples, " +
      std::to_string(limits.max_stored_bytes_per_run) + " bytes per run, " +
      std::to_string(limits.max_runs_per_identity) + " runs per caller, " +
      std::to_string(timing_changes.size()) + " [timing] change(s)";
  spdlog::info("SIGHUP: configuration reloaded{}: {}",
               settings.config_path.empty() ? "" : " from " + settings.config_path, what);
  rpc::AuditLog::Get().Daemon("config_reload", what);
}

}  // namespace

int HashToken(const std::string& name_role) {
  std::string token;
  std::getline(std::cin, token);
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
  if (token.empty()) {
    token = core::NewToken();
    std::fprintf(stderr, "new token (give it to the client; it is not stored): %s\n",
                 token.c_str());
  }
  std::string line;
  if (core::Status st = core::TokenLine(token, name_role, &line); !st.ok()) {
    std::fprintf(stderr, "ablationd: %s\n", st.message().c_str());
    return 2;
  }
  std::printf("%s\n", line.c_str());
  return 0;
}

namespace {

// NVML, the clock journal and the guard: what makes a clock lock safe to take. Declared before
// the core in RunDaemon, so destroyed after it: the core's runs release their locks first.
struct ClockSafety {
  std::unique_ptr<core::Nvml> nvml;
  std::string nvml_why;  ///< why there is no NVML
  std::unique_ptr<core::ClockLockJournal> journal;
  std::unique_ptr<core::ClockGuard> guard;
};

// Loads NVML, resets the locks a daemon that died left (recorded before they were taken), and
// starts the guard. -1 to go on, else the exit code (--reset-clocks ends here).
int StartClockSafety(const core::DaemonConfig& config, bool reset_clocks, ClockSafety* out) {
  // NVML: telemetry and clocks. Loaded at run time; its absence is no error, only less to see.
  out->nvml = core::Nvml::Load(config.nvml_library, &out->nvml_why);
  if (out->nvml)
    spdlog::info("NVML {} loaded: driver {}", config.nvml_library, out->nvml->DriverVersion());
  else
    spdlog::warn("NVML unavailable ({}): no telemetry, no clock locking", out->nvml_why);
  // A fatal signal resets the locks held then, best effort, before the process dies
  // (clock_lock.h); the journal below covers what it cannot.
  core::InstallFatalSignalClockReset();
  out->journal = std::make_unique<core::ClockLockJournal>(config.clock_journal);
  std::vector<std::string> reset;
  const core::Status st = out->journal->ResetAll(out->nvml.get(), &reset);
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
  // What no handler here can undo (SIGKILL, the OOM killer, a stack overflow) the guard does, as
  // soon as this process has ended (clock_guard.h). Without NVML nothing can be locked: no guard.
  if (out->nvml) {
    core::ClockGuardOptions guard_options;
    guard_options.journal_path = config.clock_journal;
    guard_options.nvml_library = config.nvml_library;
    if (core::Status started = core::ClockGuard::Start(guard_options, &out->guard); !started.ok())
      spdlog::warn("{}: a lock left by a daemon killed outright is reset at the next start",
                   started.message());
    else
      spdlog::info("clock guard (pid {}) watches journal {}", out->guard->pid(),
                   config.clock_journal);
  }
  // Clock locking may be granted through an ambient capability (systemd AmbientCapabilities=):
  // the daemon keeps it in its own effective set, and so does the guard started above (it resets
  // clocks), but the workers (which run user kernels) must not inherit it, so the ambient set is
  // cleared here, before any worker is spawned.
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  return -1;
}

// What the configuration gives the core when it opens (the parts that can change later are
// applied again by ApplyReloadable, at start and at SIGHUP). "" or why the core cannot start.
std::string CoreOptionsOf(const DaemonSettings& settings, const ClockSafety& clocks,
                          core::DaemonEvents* events, core::CoreOptions* options) {
  const core::DaemonConfig& config = settings.config;
  options->events = events;
  options->db_path = config.db_path;
  options->readers = config.readers;
  options->runs.worker_path = config.worker_path;
  options->runs.timing = config.timing;
  options->runs.max_queued_per_gpu = config.max_queued_per_gpu;
  options->runs.max_measurements_per_run = config.limits.max_measurements_per_run;
  options->runs.max_samples_per_measurement = config.limits.max_samples_per_measurement;
  options->runs.max_stored_bytes_per_run = config.limits.max_stored_bytes_per_run;
  options->profiler.max_items = config.limits.max_measurements_per_run;
  options->profiler.max_stored_bytes = config.limits.max_stored_bytes_per_run;
  options->runs.hang_margin = std::chrono::seconds(config.hang_margin_seconds);
  options->runs.presets = settings.presets;
  options->runs.nvml = clocks.nvml.get();
  options->runs.nvml_unavailable = clocks.nvml ? "" : clocks.nvml_why;
  options->runs.clock_journal = clocks.journal.get();
  options->runs.host_name = config.node_name;
  options->runs.node_labels = core::FormatNodeLabels(config.node_labels);
  options->fleet.conninfo = config.fleet.db;
  options->fleet.host_name = config.node_name;
  options->fleet.node_labels = options->runs.node_labels;
  options->fleet.max_backoff = std::chrono::seconds(config.fleet.retry_max_seconds);
  options->user_kernels = config.user_kernels;
  // The compiler of user kernels is installed beside the daemon's own binary (a daemon given
  // another --worker still finds it) unless the configuration names one
  // ([user_kernels] compiler).
  if (options->user_kernels.compiler_path.empty()) {
    std::error_code error;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
    options->user_kernels.compiler_path =
        ((error ? std::filesystem::path(config.worker_path) : self).parent_path() /
         "ablation-compile")
            .string();
  }
  // A daemon that runs as root compiles user kernels as an unprivileged user (sandbox.h).
  if (::geteuid() == 0) {
    const passwd* user = ::getpwnam(config.user_kernels.compile_user.c_str());
    if (user == nullptr || user->pw_uid == 0)
      return "user_kernels.compile_user '" + config.user_kernels.compile_user +
             "' is not an unprivileged user of this host";
    options->user_kernels.sandbox.uid = user->pw_uid;
    options->user_kernels.sandbox.gid = user->pw_gid;
  }
  return "";
}

// The gRPC server: the service, health, both reflections and the sentences for unknown methods
// and unparsable requests, with gRPC's own bounds. Null when it cannot listen.
struct Server {
  std::unique_ptr<rpc::ReflectionV1> reflection_v1;
  std::unique_ptr<rpc::UnknownMethods> unknown_methods;
  std::unique_ptr<rpc::SplitServices> split;  ///< Runs, Queries, Inspection, Kernels
  std::unique_ptr<grpc::Server> server;
  int port = 0;
};

void StartServer(const core::DaemonConfig& config, const rpc::Listener& listener,
                 rpc::AblationService& service, Server* out) {
  grpc::EnableDefaultHealthCheckService(true);
  // Debian's grpc++_reflection (1.51) serves grpc.reflection.v1alpha only; v1 is ours.
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  std::vector<std::string> served = {"ablation.v1.Ablation", "grpc.health.v1.Health",
                                     "grpc.reflection.v1alpha.ServerReflection",
                                     "grpc.reflection.v1.ServerReflection"};
  for (const std::string& name : rpc::SplitServices::Names()) served.push_back(name);
  out->split = std::make_unique<rpc::SplitServices>(&service);
  out->reflection_v1 = std::make_unique<rpc::ReflectionV1>(served);
  // A method none of these serves, and a request that does not parse, get a sentence rather than
  // gRPC's UNIMPLEMENTED with no message (unknown_calls.h).
  out->unknown_methods = std::make_unique<rpc::UnknownMethods>(served);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(config.listen, listener.credentials, &out->port);
  // Requests are small; a larger one is refused by gRPC before it is parsed. Answers are bounded
  // too (a run's raw samples): GetRun refuses a larger one by name first (service.cc), and this
  // is the backstop for every other reply.
  builder.SetMaxReceiveMessageSize(config.limits.max_message_bytes);
  builder.SetMaxSendMessageSize(config.limits.max_reply_bytes);
  // gRPC's own bounds on what clients can make it hold: a memory quota over every connection
  // and call (past it, new calls and reads wait or are refused instead of the daemon growing:
  // 10,000 unread calls on one connection took 2.95 GB), a thread cap, and the streams one
  // connection may keep open at once.
  grpc::ResourceQuota quota("ablationd");
  quota.Resize(size_t(config.limits.grpc_memory_bytes));
  quota.SetMaxThreads(64);
  builder.SetResourceQuota(quota);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, config.limits.max_concurrent_streams);
  builder.RegisterService(&service);
  out->split->RegisterWith(builder);
  builder.RegisterService(out->reflection_v1.get());
  builder.RegisterCallbackGenericService(out->unknown_methods.get());
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> namers;
  namers.push_back(rpc::UnparsableRequestNamer(listener.authorizer.get()));
  builder.experimental().SetInterceptorCreators(std::move(namers));
  out->server = builder.BuildAndStart();
  if (out->port == 0) out->server.reset();
}

// The metrics endpoint, where the settings ask for one. false when an address given on purpose
// cannot be served (the default port taken costs only the metrics).
bool StartMetrics(const DaemonSettings& settings, const rpc::Listener& listener,
                  const metrics::Collectables& scraped,
                  std::unique_ptr<metrics::MetricsEndpoint>* endpoint) {
  if (settings.metrics_listen.empty()) return true;
  metrics::EndpointOptions endpoint_options;
  endpoint_options.allow_remote = settings.metrics_allow_remote;
  if (const rpc::Authorizer* authorizer = listener.authorizer.get()) {
    // With tokens (now or after a reload), a scrape needs a read token as a gRPC read does.
    endpoint_options.authorize = [authorizer](std::string_view header) {
      return authorizer->MetricsRefusal(header);
    };
  }
  const core::Status st = metrics::MetricsEndpoint::Start(settings.metrics_listen, &scraped,
                                                          endpoint, std::move(endpoint_options));
  if (st.ok()) {
    spdlog::info("metrics on http://{}/metrics (port {})", settings.metrics_listen,
                 (*endpoint)->port());
    return true;
  }
  if (!settings.metrics_listen_given && st.code() == core::Code::kFailedPrecondition) {
    spdlog::warn("{}; going on without metrics", st.message());
    return true;
  }
  spdlog::error("{}", st.message());
  return false;
}

}  // namespace

int RunDaemon(const DaemonSettings& settings) {
  const core::DaemonConfig& config = settings.config;
  spdlog::set_level(spdlog::level::from_str(config.log_level));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  spdlog::info("ablationd {} ({}) starting; db {}", kDaemonVersion, kGitRevision, config.db_path);

  // Decided before anything starts: an exposed listener without TLS is refused here.
  rpc::Listener listener;
  if (core::Status st = rpc::MakeListener(config.listen, config.auth, &listener); !st.ok()) {
    spdlog::error("{}", st.message());
    std::fprintf(stderr, "ablationd: %s\n", st.message().c_str());
    return 2;
  }
  for (const auto& warning : listener.warnings) spdlog::warn("{}", warning);
  if (core::Status st = rpc::AuditLog::Get().OpenFile(settings.audit_log); !st.ok()) {
    std::fprintf(stderr, "ablationd: %s\n", st.message().c_str());
    return 2;
  }

  // Signals are taken synchronously by the main thread; block them before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);  // reload, not the default end (which left clocks locked)
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  ClockSafety clocks;
  if (const int code = StartClockSafety(config, settings.reset_clocks, &clocks); code >= 0)
    return code;
  kernels::Registry registry;
  kernels::RegisterCatalog(registry);
  spdlog::info("{} variants registered", registry.All().size());

  // The metrics hear the core's events (server/core/base/events.h); declared before the core,
  // which reports to them until it is gone.
  metrics::DaemonMetrics daemon_metrics;
  core::CoreOptions options;
  if (std::string why = CoreOptionsOf(settings, clocks, &daemon_metrics, &options); !why.empty()) {
    spdlog::error("{}", why);
    return 2;
  }
  std::unique_ptr<core::DaemonCore> core;
  if (core::Status st = core::DaemonCore::Open(options, &registry, &core); !st.ok()) {
    spdlog::error("{}", st.message());
    return 1;
  }
  rpc::ServiceOptions service_options;
  service_options.authorizer = listener.authorizer.get();
  service_options.limits = config.limits;
  rpc::AblationService service(core.get(), service_options);
  ApplyReloadable(config, *core, service);
  Server server;
  StartServer(config, listener, service, &server);
  if (!server.server) {
    spdlog::error("cannot listen on {} (address in use or malformed?)", config.listen);
    core->Shutdown();
    return 1;
  }
  // What a burst of calls freed goes back to the system (memory_trim.h).
  const HeapTrimmer trimmer;
  grpc::HealthCheckServiceInterface* health = server.server->GetHealthCheckService();
  UpdateHealth(health, *core);
  // The daemon's metrics and the process's own (process_resident_memory_bytes, ...), declared
  // before the endpoint that reads them so that they outlive it.
  const metrics::ProcessCollector process_metrics;
  const metrics::Collectables scraped({&daemon_metrics.registry(), &process_metrics});
  std::unique_ptr<metrics::MetricsEndpoint> metrics_endpoint;
  if (!StartMetrics(settings, listener, scraped, &metrics_endpoint)) {
    core->Shutdown();
    server.server->Shutdown();
    return 1;
  }
  if (!config.port_file.empty()) {
    std::string tmp = config.port_file + ".tmp";
    std::ofstream(tmp) << server.port << "\n";
    std::filesystem::rename(tmp, config.port_file);
  }
  spdlog::info("listening on {} (port {}): {}", config.listen, server.port, listener.description);

  // The GPU's worker may die and come back: health follows it every few seconds. SIGHUP reads
  // the configuration again (Reload); SIGTERM and SIGINT end the daemon.
  core::DaemonConfig running = config;
  int sig = -1;
  const timespec every{2, 0};
  while ((sig = sigtimedwait(&signals, nullptr, &every)) < 0 || sig == SIGHUP) {
    if (sig == SIGHUP) Reload(settings, &running, listener, *core, service);
    UpdateHealth(health, *core);
  }
  spdlog::info("signal {}: shutting down", sig);
  health->Shutdown();
  core->Shutdown();
  server.server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  spdlog::info("stopped");
  return 0;
}

}  // namespace ablation::daemon
