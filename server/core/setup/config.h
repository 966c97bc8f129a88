// The daemon's settings: defaults, then a TOML file (--config), then command-line flags.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "server/core/base/status.h"
#include "server/core/plan/limits.h"
#include "server/core/plan/run_plan.h"
#include "server/core/setup/auth.h"
#include "server/core/userkernels/user_kernels.h"

namespace ablation::core {

/// Who may call, over what: [auth] and [tls] of the config (deploy/ablationd.toml explains).
struct AuthConfig {
  std::string tokens_path;  ///< the token file (hashes, names, roles); empty: no tokens
  /// The role of a caller that presents no token. Unset: admin when no token file and no client
  /// CA are configured (a loopback daemon needs no setup), else none.
  std::optional<Role> anonymous_role;
  Role client_cert_role = Role::kRun;  ///< a caller with a verified client certificate
  std::string tls_cert;                ///< PEM certificate chain of the listener; empty: no TLS
  std::string tls_key;                 ///< its PEM private key
  std::string client_ca;               ///< PEM CA that client certificates must chain to
  bool require_client_cert = false;    ///< with client_ca: refuse connections without one
  /// Serve a non-loopback address without TLS: nobody is authenticated and anyone may do
  /// anything. Logged as a warning at every start.
  bool insecure_remote = false;
};

/// [fleet]: the fleet database the daemon exports finished runs to (db/fleet/, through the outbox
/// of its SQLite). The connection string is a secret (it may hold a password): from `db`, or the
/// first line of `db_file` (a mounted Kubernetes Secret), or ABLATION_FLEET_DB; never logged
/// with its password. Empty: no export (runs still wait in the outbox for a later one).
struct FleetConfig {
  std::string db;
  std::string db_file;
  /// The longest wait between attempts while the database is away (the backoff doubles to it).
  int retry_max_seconds = 60;
};

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
  RequestLimits limits;
  int readers = 4;  ///< read-only connections (and threads) answering queries
  /// Beyond twice a measurement's own time budget, this long before its worker counts as hung.
  int hang_margin_seconds = 5;
  AuthConfig auth;
  /// [user_kernels]: who may add one besides admin, and the bounds of one (the compiler's path
  /// is set by ablationd: ablation-compile beside the worker).
  UserKernelOptions user_kernels;
  /// [node]: the name a run records as its host (default: the host name; ABLATION_NODE_NAME
  /// wins, e.g. Kubernetes' spec.nodeName, since a pod's host name is the pod's) and labels
  /// (ABLATION_NODE_LABELS=key=value,... adds to and replaces them).
  std::string node_name;
  std::map<std::string, std::string> node_labels;
  FleetConfig fleet;
};

/// The largest TOML file the daemon reads as its configuration or presets, and how deep its tables
/// may nest (checked before parsing: common/toml_shape.h).
inline constexpr size_t kMaxConfigBytes = size_t(4) << 20;
inline constexpr int kMaxConfigDepth = 16;

/// Reads a TOML file over `config`. Unknown keys and wrong types are errors naming the key.
Status LoadConfigFile(const std::string& path, DaemonConfig* config);

/// Parses TOML text (for tests); `origin` names the source in error messages.
Status LoadConfigText(const std::string& text, const std::string& origin, DaemonConfig* config);

/// The text of a configuration or presets file, at most kMaxConfigBytes + 1 bytes of it (the
/// shape check refuses a longer one); `what` names the setting in the error ("--config").
Status ReadTomlFile(const std::string& path, const std::string& what, std::string* out);

}  // namespace ablation::core
