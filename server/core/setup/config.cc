#include "server/core/setup/config.h"

#include "server/core/history/series.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "common/toml_doc.h"
#include "server/core/setup/toml_keys.h"

namespace ablation::core {
namespace {

Status KeyError(const std::string& origin, const std::string& key, const std::string& what) {
  return InvalidArgument(origin + ": " + key + ": " + what);
}

template <typename T>
Status Read(const toml::table& t, const std::string& origin, const std::string& prefix,
            const char* key, T* out) {
  const toml::node* node = t.get(key);
  if (!node) return Status::Ok();
  if constexpr (std::is_same_v<T, std::string>) {
    if (auto v = node->value<std::string>()) {
      *out = *v;
      return Status::Ok();
    }
    return KeyError(origin, prefix + key, "expected a string");
  } else if constexpr (std::is_same_v<T, bool>) {
    if (auto v = node->value<bool>(); v && node->is_boolean()) {
      *out = *v;
      return Status::Ok();
    }
    return KeyError(origin, prefix + key, "expected true or false");
  } else if constexpr (std::is_integral_v<T>) {
    // In range of the setting's type: 2^32 must not wrap to 0 and pass the range checks.
    if (node->is_integer()) {
      const int64_t v = *node->value<int64_t>();
      if (v < 0 || v > int64_t(std::numeric_limits<int>::max()))
        return KeyError(origin, prefix + key, "must be between 0 and 2^31-1");
      *out = T(v);
      return Status::Ok();
    }
    return KeyError(origin, prefix + key, "expected an integer");
  } else {
    if (node->is_number()) {
      *out = *node->value<double>();
      if (!std::isfinite(*out)) return KeyError(origin, prefix + key, "must be a finite number");
      return Status::Ok();
    }
    return KeyError(origin, prefix + key, "expected a number");
  }
}

// A sub-table of the root, or null when absent; an error when the key is not a table.
Status SubTable(const toml::table& root, const std::string& origin, const char* key,
                const std::set<std::string>& known, const toml::table** out) {
  *out = nullptr;
  const toml::node* n = root.get(key);
  if (!n) return Status::Ok();
  *out = n->as_table();
  if (!*out) return KeyError(origin, key, "expected a table");
  return CheckTomlKeys(**out, origin, std::string(key) + ".", known);
}

Status ReadLimits(const toml::table& root, const std::string& origin, RequestLimits* l) {
  const toml::table* t = nullptr;
  Status st = SubTable(root, origin, "limits",
                       {"max_measurements_per_run", "max_runs_per_identity", "max_runs_total",
                        "max_message_bytes", "max_name_length", "max_text_length", "max_repeated",
                        "max_reply_bytes", "max_samples_per_measurement", "max_concurrent_streams",
                        "max_watchers", "grpc_memory_bytes", "max_stored_bytes_per_run"},
                       &t);
  if (!st.ok() || !t) return st;
  const std::string p = "limits.";
  const std::pair<const char*, int*> ints[] = {
      {"max_measurements_per_run", &l->max_measurements_per_run},
      {"max_runs_per_identity", &l->max_runs_per_identity},
      {"max_runs_total", &l->max_runs_total},
      {"max_message_bytes", &l->max_message_bytes},
      {"max_repeated", &l->max_repeated},
      {"max_reply_bytes", &l->max_reply_bytes},
      {"max_samples_per_measurement", &l->max_samples_per_measurement},
      {"max_concurrent_streams", &l->max_concurrent_streams},
      {"max_watchers", &l->max_watchers}};
  for (const auto& [key, value] : ints) {
    if (!(st = Read(*t, origin, p, key, value)).ok()) return st;
    if (*value < 1) return KeyError(origin, p + key, "must be at least 1");
  }
  for (const auto& [key, value] : {std::pair{"max_name_length", &l->max_name_length},
                                   std::pair{"max_text_length", &l->max_text_length}}) {
    if (!(st = Read(*t, origin, p, key, value)).ok()) return st;
    if (*value < 16) return KeyError(origin, p + key, "must be at least 16");
  }
  if (!(st = Read(*t, origin, p, "grpc_memory_bytes", &l->grpc_memory_bytes)).ok()) return st;
  if (!(st = Read(*t, origin, p, "max_stored_bytes_per_run", &l->max_stored_bytes_per_run)).ok())
    return st;
  if (l->max_stored_bytes_per_run < (1 << 20))
    return KeyError(origin, "limits.max_stored_bytes_per_run", "must be at least 1048576 (1 MiB)");
  if (l->max_message_bytes < 4096)
    return KeyError(origin, "limits.max_message_bytes", "must be at least 4096");
  if (l->max_reply_bytes < 4096)
    return KeyError(origin, "limits.max_reply_bytes", "must be at least 4096");
  if (l->grpc_memory_bytes < (8 << 20))
    return KeyError(origin, "limits.grpc_memory_bytes", "must be at least 8388608 (8 MiB)");
  return Status::Ok();
}

// [user_kernels]: who may add and read kernels, how compiles are confined and bounded.
Status ReadUserKernels(const toml::table& t, const std::string& origin, UserKernelOptions* u) {
  const std::string p = "user_kernels.";
  Status st = CheckTomlKeys(
      t, origin, p,
      {"add_role", "compiler", "max_kernels_per_owner", "max_versions_per_kernel",
       "max_source_bytes", "max_knob_sets", "compile_timeout_seconds", "compile_memory_mb",
       "allow_unsandboxed_compiles", "compile_user", "max_cubin_bytes", "max_bytes_per_kernel",
       "max_bytes_per_owner", "compile_threads", "max_waiting_adds", "source_readers"});
  if (!st.ok()) return st;
  if (!(st = Read(t, origin, p, "add_role", &u->add_role)).ok()) return st;
  if (!(st = Read(t, origin, p, "compiler", &u->compiler_path)).ok()) return st;
  if (!(st = Read(t, origin, p, "compile_user", &u->compile_user)).ok()) return st;
  if (!(st = Read(t, origin, p, "source_readers", &u->source_readers)).ok()) return st;
  if (!(st = Read(t, origin, p, "allow_unsandboxed_compiles", &u->allow_unsandboxed_compiles)).ok())
    return st;
  if (u->add_role != "" && u->add_role != "run" && u->add_role != "admin")
    return KeyError(origin, p + "add_role",
                    "'" + u->add_role +
                        "': run (callers with the run role may add kernels) or "
                        "admin (only admins, the default)");
  if (u->add_role == "admin") u->add_role = "";
  if (u->source_readers != "owner" && u->source_readers != "run" && u->source_readers != "read")
    return KeyError(origin, p + "source_readers",
                    "'" + u->source_readers +
                        "': owner (its owner and admins, the default), run (and the run role) or "
                        "read (every caller who may list kernels)");
  int timeout = int(u->compile.timeout.count()), sets = u->manifest.max_knob_sets;
  int cubin = int(u->compile.max_cubin_bytes), per_kernel = int(u->max_bytes_per_kernel),
      per_owner = int(u->max_bytes_per_owner);
  size_t source = u->manifest.max_source_bytes;
  const struct {
    const char* key;
    int* value;
    int lo, hi;
  } ints[] = {{"max_kernels_per_owner", &u->max_kernels_per_owner, 1, 10000},
              {"max_versions_per_kernel", &u->max_versions_per_kernel, 1, 1000},
              {"max_knob_sets", &sets, 1, 4096},
              {"compile_timeout_seconds", &timeout, 1, 3600},
              {"compile_memory_mb", &u->compile.memory_mb, 256, 1 << 16},
              {"max_cubin_bytes", &cubin, 1 << 16, 1 << 30},
              {"max_bytes_per_kernel", &per_kernel, 1 << 16, std::numeric_limits<int>::max()},
              {"max_bytes_per_owner", &per_owner, 1 << 16, std::numeric_limits<int>::max()},
              {"compile_threads", &u->compile_threads, 1, 16},
              {"max_waiting_adds", &u->max_waiting_adds, 0, 256}};
  for (const auto& k : ints) {
    if (!(st = Read(t, origin, p, k.key, k.value)).ok()) return st;
    if (*k.value < k.lo || *k.value > k.hi)
      return KeyError(origin, p + k.key,
                      "must be " + std::to_string(k.lo) + " to " + std::to_string(k.hi));
  }
  if (!(st = Read(t, origin, p, "max_source_bytes", &source)).ok()) return st;
  if (source < 1024 || source > (64u << 20))
    return KeyError(origin, p + "max_source_bytes", "must be 1024 to 67108864");
  u->compile.timeout = std::chrono::seconds(timeout);
  u->compile.cpu_seconds = timeout;
  u->compile.max_cubin_bytes = size_t(cubin);
  u->max_bytes_per_kernel = per_kernel;
  u->max_bytes_per_owner = per_owner;
  u->manifest.max_knob_sets = sets;
  u->manifest.max_source_bytes = source;
  return Status::Ok();
}

Status ReadRole(const toml::table& t, const std::string& origin, const char* key, bool allow_none,
                std::optional<Role>* out) {
  std::string text;
  if (Status st = Read(t, origin, "auth.", key, &text); !st.ok() || text.empty()) return st;
  *out = ParseRole(text, allow_none);
  if (!*out)
    return KeyError(
        origin, std::string("auth.") + key,
        allow_none ? "expected none, read, run or admin" : "expected read, run or admin");
  return Status::Ok();
}

Status ReadAuth(const toml::table& root, const std::string& origin, AuthConfig* a) {
  const toml::table* t = nullptr;
  Status st = SubTable(root, origin, "auth",
                       {"tokens", "anonymous_role", "client_cert_role", "insecure_remote"}, &t);
  if (!st.ok()) return st;
  if (t) {
    if (!(st = Read(*t, origin, "auth.", "tokens", &a->tokens_path)).ok()) return st;
    if (!(st = Read(*t, origin, "auth.", "insecure_remote", &a->insecure_remote)).ok()) return st;
    if (!(st = ReadRole(*t, origin, "anonymous_role", true, &a->anonymous_role)).ok()) return st;
    std::optional<Role> cert_role;
    if (!(st = ReadRole(*t, origin, "client_cert_role", false, &cert_role)).ok()) return st;
    if (cert_role) a->client_cert_role = *cert_role;
  }
  if (!(st = SubTable(root, origin, "tls", {"cert", "key", "client_ca", "require_client_cert"}, &t))
           .ok() ||
      !t)
    return st;
  if (!(st = Read(*t, origin, "tls.", "cert", &a->tls_cert)).ok()) return st;
  if (!(st = Read(*t, origin, "tls.", "key", &a->tls_key)).ok()) return st;
  if (!(st = Read(*t, origin, "tls.", "client_ca", &a->client_ca)).ok()) return st;
  if (!(st = Read(*t, origin, "tls.", "require_client_cert", &a->require_client_cert)).ok())
    return st;
  if (a->tls_cert.empty() != a->tls_key.empty())
    return KeyError(origin, "tls.cert", "tls.cert and tls.key go together");
  if (a->require_client_cert && a->client_ca.empty())
    return KeyError(origin, "tls.require_client_cert", "needs tls.client_ca");
  return Status::Ok();
}

// [timing]: the defaults of runs that name none, each checked against its range.
Status ReadTiming(const toml::table& root, const std::string& origin, TimingDefaults* out) {
  const toml::node* n = root.get("timing");
  if (!n) return Status::Ok();
  Status st;
  const toml::table* t = n->as_table();
  if (!t) return KeyError(origin, "timing", "expected a table");
  st = CheckTomlKeys(*t, origin, "timing.",
                     {"min_samples", "min_seconds", "max_seconds", "target_noise", "warmup_count",
                      "warmup_seconds", "max_samples", "regime", "window_seconds",
                      "settle_max_seconds", "burst_seconds", "cool_min_seconds", "cool_max_seconds",
                      "settle_min_seconds", "settle_span_seconds", "settle_spans",
                      "settle_clock_tolerance", "settle_power_tolerance", "solo_seconds"});
  if (!st.ok()) return st;
  auto& d = *out;
  if (!(st = Read(*t, origin, "timing.", "min_samples", &d.min_samples)).ok()) return st;
  if (!(st = Read(*t, origin, "timing.", "max_samples", &d.max_samples)).ok()) return st;
  if (!(st = Read(*t, origin, "timing.", "min_seconds", &d.min_seconds)).ok()) return st;
  if (!(st = Read(*t, origin, "timing.", "max_seconds", &d.max_seconds)).ok()) return st;
  if (!(st = Read(*t, origin, "timing.", "target_noise", &d.target_noise)).ok()) return st;
  if (!(st = Read(*t, origin, "timing.", "warmup_count", &d.warmup_count)).ok()) return st;
  if (!(st = Read(*t, origin, "timing.", "warmup_seconds", &d.warmup_seconds)).ok()) return st;
  if (d.min_samples < 1) return KeyError(origin, "timing.min_samples", "must be at least 1");
  if (d.max_samples < d.min_samples)
    return KeyError(origin, "timing.max_samples", "must be at least timing.min_samples");
  if (d.min_seconds < 0 || d.max_seconds <= 0 || d.max_seconds < d.min_seconds)
    return KeyError(origin, "timing.max_seconds", "must be positive and >= timing.min_seconds");
  if (d.target_noise <= 0 || d.target_noise >= 1)
    return KeyError(origin, "timing.target_noise", "must be between 0 and 1");
  if (d.warmup_count < 0 || d.warmup_seconds < 0)
    return KeyError(origin, "timing.warmup_count", "warm-up cannot be negative");
  std::string regime;
  if (!(st = Read(*t, origin, "timing.", "regime", &regime)).ok()) return st;
  if (regime == "sustained") {
    d.regime = Regime::kSustained;
  } else if (regime == "burst") {
    d.regime = Regime::kBurst;
  } else if (!regime.empty()) {
    // locked needs a clock lock, which a run asks for (and may be refused): never a default.
    return KeyError(origin, "timing.regime",
                    "'" + regime + "' is not a default regime: sustained or burst");
  }
  RegimeParams& r = d.regime_params;
  const struct {
    const char* key;
    double* value;
    double lo, hi;
  } knobs[] = {{"window_seconds", &r.window_seconds, 0.01, 600},
               {"solo_seconds", &r.solo_seconds, 0.05, 600},
               {"settle_max_seconds", &r.settle_max_seconds, 0, 3600},
               {"burst_seconds", &r.burst_seconds, 1e-4, 10},
               {"cool_min_seconds", &r.cool_min_seconds, 0, 600},
               {"cool_max_seconds", &r.cool_max_seconds, 0, 3600},
               {"settle_min_seconds", &r.settle_min_seconds, 0, 3600},
               {"settle_span_seconds", &r.span_seconds, 0.05, 60},
               {"settle_clock_tolerance", &r.clock_tolerance, 1e-5, 0.5},
               {"settle_power_tolerance", &r.power_tolerance, 1e-5, 0.5}};
  for (const auto& k : knobs) {
    if (!(st = Read(*t, origin, "timing.", k.key, k.value)).ok()) return st;
    if (!(*k.value >= k.lo && *k.value <= k.hi))
      return KeyError(origin, std::string("timing.") + k.key,
                      "must be " + std::to_string(k.lo) + " to " + std::to_string(k.hi));
  }
  if (!(st = Read(*t, origin, "timing.", "settle_spans", &r.settle_spans)).ok()) return st;
  if (r.settle_spans < 2 || r.settle_spans > 20)
    return KeyError(origin, "timing.settle_spans", "must be 2 to 20 (spans that must agree)");
  return Status::Ok();
}

// [node]: the name and labels runs and the fleet carry.
Status ReadNode(const toml::table& root, const std::string& origin, DaemonConfig* c) {
  const toml::node* n = root.get("node");
  if (!n) return Status::Ok();
  Status st;
  const toml::table* t = n->as_table();
  if (!t) return KeyError(origin, "node", "expected a table");
  if (!(st = CheckTomlKeys(*t, origin, "node.", {"name", "labels"})).ok()) return st;
  if (!(st = Read(*t, origin, "node.", "name", &c->node_name)).ok()) return st;
  if (const toml::node* l = t->get("labels")) {
    const toml::table* labels = l->as_table();
    if (!labels) return KeyError(origin, "node.labels", "expected a table of key = \"value\"");
    for (const auto& [key, value] : *labels) {
      const auto* text = value.as_string();
      const std::string name = "node.labels." + std::string(key.str());
      if (!text) return KeyError(origin, name, "expected a string");
      st = ParseNodeLabels(std::string(key.str()) + "=" + text->get(), &c->node_labels);
      if (!st.ok()) return KeyError(origin, name, st.message());
    }
  }
  return Status::Ok();
}

// [fleet]: where finished runs are exported.
Status ReadFleet(const toml::table& root, const std::string& origin, FleetConfig* fleet) {
  const toml::node* n = root.get("fleet");
  if (!n) return Status::Ok();
  Status st;
  const toml::table* t = n->as_table();
  if (!t) return KeyError(origin, "fleet", "expected a table");
  if (!(st = CheckTomlKeys(*t, origin, "fleet.", {"db", "db_file", "retry_max_seconds"})).ok())
    return st;
  if (!(st = Read(*t, origin, "fleet.", "db", &fleet->db)).ok()) return st;
  if (!(st = Read(*t, origin, "fleet.", "db_file", &fleet->db_file)).ok()) return st;
  if (!(st = Read(*t, origin, "fleet.", "retry_max_seconds", &fleet->retry_max_seconds)).ok())
    return st;
  if (fleet->retry_max_seconds < 1 || fleet->retry_max_seconds > 3600)
    return KeyError(origin, "fleet.retry_max_seconds", "must be 1 to 3600");
  return Status::Ok();
}

}  // namespace

Status LoadConfigText(const std::string& text, const std::string& origin, DaemonConfig* c) {
  // Measured before it is parsed, at start and at SIGHUP alike: a key nested 50,000 deep took the
  // daemon down at a reload (common/toml_shape.h).
  toml::table root;
  if (std::string why = common::ParseToml(text, origin, {kMaxConfigBytes, kMaxConfigDepth}, &root);
      !why.empty())
    return InvalidArgument(why);
  Status st = CheckTomlKeys(root, origin, "",
                            {"listen", "db", "worker", "log_level", "presets", "nvml_library",
                             "clock_journal", "timing", "queue", "readers", "hang_margin_seconds",
                             "limits", "auth", "tls", "user_kernels", "node", "fleet"});
  if (!st.ok()) return st;
  if (!(st = Read(root, origin, "", "listen", &c->listen)).ok()) return st;
  if (!(st = Read(root, origin, "", "db", &c->db_path)).ok()) return st;
  if (!(st = Read(root, origin, "", "worker", &c->worker_path)).ok()) return st;
  if (!(st = Read(root, origin, "", "log_level", &c->log_level)).ok()) return st;
  if (!(st = Read(root, origin, "", "nvml_library", &c->nvml_library)).ok()) return st;
  if (!(st = Read(root, origin, "", "clock_journal", &c->clock_journal)).ok()) return st;
  if (!(st = Read(root, origin, "", "presets", &c->presets_path)).ok()) return st;
  if (!(st = Read(root, origin, "", "readers", &c->readers)).ok()) return st;
  if (c->readers < 1 || c->readers > 64) return KeyError(origin, "readers", "must be 1 to 64");
  if (!(st = Read(root, origin, "", "hang_margin_seconds", &c->hang_margin_seconds)).ok())
    return st;
  if (c->hang_margin_seconds < 1 || c->hang_margin_seconds > 3600)
    return KeyError(origin, "hang_margin_seconds", "must be 1 to 3600");
  if (!(st = ReadLimits(root, origin, &c->limits)).ok()) return st;
  if (!(st = ReadAuth(root, origin, &c->auth)).ok()) return st;
  if (!(st = ReadTiming(root, origin, &c->timing)).ok()) return st;
  if (const toml::node* n = root.get("user_kernels")) {
    const toml::table* t = n->as_table();
    if (!t) return KeyError(origin, "user_kernels", "expected a table");
    if (!(st = ReadUserKernels(*t, origin, &c->user_kernels)).ok()) return st;
  }
  if (!(st = ReadNode(root, origin, c)).ok()) return st;
  if (!(st = ReadFleet(root, origin, &c->fleet)).ok()) return st;
  if (const toml::node* n = root.get("queue")) {
    const toml::table* t = n->as_table();
    if (!t) return KeyError(origin, "queue", "expected a table");
    if (!(st = CheckTomlKeys(*t, origin, "queue.", {"max_queued_per_gpu"})).ok()) return st;
    if (!(st = Read(*t, origin, "queue.", "max_queued_per_gpu", &c->max_queued_per_gpu)).ok())
      return st;
    if (c->max_queued_per_gpu < 1)
      return KeyError(origin, "queue.max_queued_per_gpu", "must be at least 1");
  }
  return Status::Ok();
}

Status LoadConfigFile(const std::string& path, DaemonConfig* config) {
  std::string text;
  if (Status st = ReadTomlFile(path, "--config", &text); !st.ok()) return st;
  return LoadConfigText(text, path, config);
}

Status ReadTomlFile(const std::string& path, const std::string& what, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgument(what + ": cannot read " + path);
  // At most one byte more than any TOML file the daemon accepts: a huge file (or a device) named
  // by mistake is refused by its size, not read into memory.
  out->assign(kMaxConfigBytes + 1, '\0');
  in.read(out->data(), std::streamsize(out->size()));
  out->resize(size_t(in.gcount()));
  return Status::Ok();
}

}  // namespace ablation::core
