#include "server/core/config.h"

#include <fstream>
#include <set>
#include <sstream>

#include <toml++/toml.h>

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
  } else if constexpr (std::is_same_v<T, int>) {
    if (node->is_integer()) {
      *out = int(*node->value<int64_t>());
      return Status::Ok();
    }
    return KeyError(origin, prefix + key, "expected an integer");
  } else {
    if (node->is_number()) {
      *out = *node->value<double>();
      return Status::Ok();
    }
    return KeyError(origin, prefix + key, "expected a number");
  }
}

Status CheckKeys(const toml::table& t, const std::string& origin, const std::string& prefix,
                 const std::set<std::string>& known) {
  for (const auto& [k, v] : t) {
    std::string key(k.str());
    if (!known.count(key)) {
      std::string list;
      for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
      return KeyError(origin, prefix + key, "unknown setting (known: " + list + ")");
    }
  }
  return Status::Ok();
}

}  // namespace

Status LoadConfigText(const std::string& text, const std::string& origin, DaemonConfig* c) {
  toml::table root;
  try {
    root = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    std::ostringstream os;
    os << origin << ":" << e.source().begin.line << ":" << e.source().begin.column << ": "
       << e.description();
    return InvalidArgument(os.str());
  }
  Status st = CheckKeys(root, origin, "",
                        {"listen", "db", "worker", "log_level", "presets", "nvml_library",
                         "clock_journal", "timing", "queue"});
  if (!st.ok()) return st;
  if (!(st = Read(root, origin, "", "listen", &c->listen)).ok()) return st;
  if (!(st = Read(root, origin, "", "db", &c->db_path)).ok()) return st;
  if (!(st = Read(root, origin, "", "worker", &c->worker_path)).ok()) return st;
  if (!(st = Read(root, origin, "", "log_level", &c->log_level)).ok()) return st;
  if (!(st = Read(root, origin, "", "nvml_library", &c->nvml_library)).ok()) return st;
  if (!(st = Read(root, origin, "", "clock_journal", &c->clock_journal)).ok()) return st;
  if (!(st = Read(root, origin, "", "presets", &c->presets_path)).ok()) return st;
  if (const toml::node* n = root.get("timing")) {
    const toml::table* t = n->as_table();
    if (!t) return KeyError(origin, "timing", "expected a table");
    st = CheckKeys(*t, origin, "timing.",
                   {"min_samples", "min_seconds", "max_seconds", "target_noise", "warmup_count",
                    "warmup_seconds", "max_samples"});
    if (!st.ok()) return st;
    auto& d = c->timing;
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
  }
  if (const toml::node* n = root.get("queue")) {
    const toml::table* t = n->as_table();
    if (!t) return KeyError(origin, "queue", "expected a table");
    if (!(st = CheckKeys(*t, origin, "queue.", {"max_queued_per_gpu"})).ok()) return st;
    if (!(st = Read(*t, origin, "queue.", "max_queued_per_gpu", &c->max_queued_per_gpu)).ok())
      return st;
    if (c->max_queued_per_gpu < 1)
      return KeyError(origin, "queue.max_queued_per_gpu", "must be at least 1");
  }
  return Status::Ok();
}

Status LoadConfigFile(const std::string& path, DaemonConfig* config) {
  std::ifstream in(path);
  if (!in) return InvalidArgument("--config: cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return LoadConfigText(ss.str(), path, config);
}

}  // namespace ablation::core
