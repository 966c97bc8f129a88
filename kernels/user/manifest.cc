#include "kernels/user/manifest.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <set>

#include "common/text.h"
#include "common/toml_doc.h"
#include "kernels/user/contract_plan.h"
#include "kernels/user/toml_read.h"

namespace ablation::kernels::user {
namespace {

using common::Lower;
using internal::CheckKeys;
using internal::Err;
using internal::IsIdentifier;
using internal::ReadExpression;
using internal::ReadString;

std::string Names(const Manifest& m, std::vector<std::string>* names) {
  *names = m.general ? m.general->sizes : std::vector<std::string>{"M", "N", "K"};
  for (const Knob& k : m.knobs) names->push_back(k.name);
  return "";
}

std::map<std::string, double> Values(const Manifest& m, const KnobSet& s, const Problem& p) {
  std::map<std::string, double> v = {{"M", double(p.m)}, {"N", double(p.n)}, {"K", double(p.k)}};
  // A kernel's own sizes: the problem's M, N, K in the contract's order (contract_plan.h: one
  // rule, SizesOfProblem, whose refusals its callers have asked for before planning a launch).
  if (m.general) {
    v.clear();
    Sizes sizes;
    (void)SizesOfProblem(*m.general, p, &sizes);
    for (const auto& [name, value] : sizes) v[name] = double(value);
  }
  for (size_t i = 0; i < m.knobs.size() && i < s.values.size(); ++i)
    v[m.knobs[i].name] = double(s.values[i]);
  return v;
}

// A launch's bounds: CUDA's on a block, and 227 KiB, the most dynamic shared memory a block may
// opt into on any supported GPU (sm_90; the worker checks the device's own limit before
// launching). Plan and FixedLaunch both hold expressions to them.
constexpr int64_t kMaxThreads = 1024, kMaxBlockZ = 64, kMaxDynamicSmem = 227 * 1024;

// Whether an expression of the launch uses M, N or K, or a kernel's own sizes (an absent one uses
// nothing).
bool UsesShape(const Manifest& m, const std::unique_ptr<Expression>& e) {
  if (!e) return false;
  if (m.general)
    return std::any_of(m.general->sizes.begin(), m.general->sizes.end(),
                       [&](const std::string& size) { return e->Uses(size); });
  return e->Uses("M") || e->Uses("N") || e->Uses("K");
}

// What of knob set `s`'s launch no problem changes: the threads of a block where none of block,
// block_y and block_z uses M, N or K, and the dynamic shared memory where smem does not (each 0
// where it does). "" or why one of them is outside its bounds; `*key` then names it ("block",
// "smem", ...).
std::string FixedLaunch(const Manifest& m, const KnobSet& s, LaunchSize* out, std::string* key) {
  const std::map<std::string, double> v = Values(m, s, Problem{1, 1, 1, m.dtype});
  const struct {
    const char* key;
    const std::unique_ptr<Expression>& e;
    int64_t lo, hi;
  } sizes[] = {{"block", m.block, 1, kMaxThreads},
               {"block_y", m.block_y, 1, kMaxThreads},
               {"block_z", m.block_z, 1, kMaxBlockZ},
               {"smem", m.smem, 0, kMaxDynamicSmem}};
  int64_t threads = 1;
  bool threads_fixed = true;
  *out = LaunchSize{};
  for (const auto& size : sizes) {
    const bool smem = std::string(size.key) == "smem";
    if (UsesShape(m, size.e)) {
      threads_fixed = threads_fixed && smem;
      continue;
    }
    if (!size.e) continue;
    int64_t value = 0;
    if (std::string why = size.e->EvaluateInteger(v, size.lo, size.hi, &value); !why.empty()) {
      *key = size.key;
      return why;
    }
    if (smem)
      out->dynamic_smem_bytes = value;
    else
      threads *= value;
  }
  if (!threads_fixed) return "";
  if (threads > kMaxThreads) {
    *key = "block";
    return std::to_string(threads) + " threads a block, more than a block may have (" +
           std::to_string(kMaxThreads) + ")";
  }
  out->threads = threads;
  return "";
}

// A block or shared memory size that no problem changes (an expression of the knobs alone,
// "2048 / TM") is checked for every knob set when the manifest is read, not first refused at a
// run. Those that use M, N or K are checked per problem (Plan).
std::string CheckShapeIndependentLaunch(const Manifest& m, const toml::table& launch,
                                        const std::string& origin) {
  for (const KnobSet& s : KnobSets(m)) {
    LaunchSize fixed;
    std::string key;
    const std::string why = FixedLaunch(m, s, &fixed, &key);
    if (why.empty()) continue;
    std::string knobs;
    for (size_t i = 0; i < m.knobs.size(); ++i)
      knobs += (i ? ", " : "") + m.knobs[i].name + " = " + std::to_string(s.values[i]);
    return Err(origin, launch.get(key), "launch." + key,
               why + (knobs.empty() ? "" : " (with " + knobs + ")"));
  }
  return "";
}

// The [[knob]] tables, into m.knobs.
std::string ReadKnobs(const toml::table& root, const std::string& origin,
                      const ManifestLimits& limits, Manifest* out) {
  Manifest& m = *out;
  std::string err;
  const toml::node* n = root.get("knob");
  if (!n) return "";
  const auto* arr = n->as_array();
  if (!arr || !arr->is_array_of_tables()) return Err(origin, n, "knob", "expected [[knob]] tables");
  if (int(arr->size()) > limits.max_knobs)
    return Err(origin, n, "knob", "more than " + std::to_string(limits.max_knobs) + " knobs");
  std::set<std::string> seen_names, seen_shorts;
  for (size_t i = 0; i < arr->size(); ++i) {
    const toml::table& t = *arr->get(i)->as_table();
    const std::string prefix = "knob[" + std::to_string(i) + "].";
    if (!(err = CheckKeys(t, origin, prefix, {"name", "values", "short", "label"})).empty())
      return err;
    Knob k;
    if (!(err = ReadString(t, origin, prefix, "name", true, &k.name)).empty()) return err;
    if (!IsIdentifier(k.name, true) || k.name == "M" || k.name == "N" || k.name == "K")
      return Err(origin, t.get("name"), prefix + "name",
                 "'" + k.name + "': a macro name (upper case, digits, '_'), not M, N or K");
    if (!seen_names.insert(k.name).second)
      return Err(origin, t.get("name"), prefix + "name", "'" + k.name + "' is given twice");
    k.short_name = Lower(k.name);
    if (!(err = ReadString(t, origin, prefix, "short", false, &k.short_name)).empty()) return err;
    if (!IsIdentifier(k.short_name, false) || k.short_name.size() > 8)
      return Err(origin, t.get("short"), prefix + "short",
                 "'" + k.short_name + "': lower-case letters and digits, at most 8");
    if (!seen_shorts.insert(k.short_name).second)
      return Err(origin, t.get("short"), prefix + "short",
                 "'" + k.short_name + "' is another knob's too");
    if (!(err = ReadString(t, origin, prefix, "label", false, &k.label)).empty()) return err;
    const toml::node* vals = t.get("values");
    if (!vals) return Err(origin, &t, prefix + "values", "missing");
    const auto* va = vals->as_array();
    if (!va || va->empty()) return Err(origin, vals, prefix + "values", "expected whole numbers");
    if (int(va->size()) > limits.max_values_per_knob)
      return Err(origin, vals, prefix + "values",
                 "more than " + std::to_string(limits.max_values_per_knob) + " values");
    for (const toml::node& v : *va) {
      const auto* iv = v.as_integer();
      if (!iv) return Err(origin, &v, prefix + "values", "expected whole numbers");
      if (std::find(k.values.begin(), k.values.end(), iv->get()) != k.values.end())
        return Err(origin, &v, prefix + "values", std::to_string(iv->get()) + " is given twice");
      k.values.push_back(iv->get());
    }
    m.knobs.push_back(std::move(k));
  }
  return "";
}

// [contract]: the dtype, B's layout and whether the knob sets are bit-identical; with kind =
// "general", the kernel's own contract (contract.cc) instead of B's layout.
std::string ReadContract(const toml::table& root, const std::string& origin,
                         const ManifestLimits& limits, Manifest* out) {
  Manifest& m = *out;
  std::string err;
  const toml::node* contract = root.get("contract");
  if (!contract || !contract->as_table())
    return Err(origin, &root, "contract", "missing: [contract] dtype and b_layout");
  const toml::table& c = *contract->as_table();
  std::string kind = "gemm";
  if (!(err = ReadString(c, origin, "contract.", "kind", false, &kind)).empty()) return err;
  if (kind != "gemm" && kind != "general")
    return Err(origin, c.get("kind"), "contract.kind",
               "'" + kind +
                   "': gemm (the GEMM contract, the default) or general (the kernel's "
                   "own tensors, sizes, reference and work model)");
  const bool general = kind == "general";
  for (const char* key : {"sizes", "default_sizes", "params", "size_type"})
    if (!general && c.get(key))
      return Err(origin, c.get(key), std::string("contract.") + key,
                 "belongs to a kernel's own contract: [contract] kind = \"general\"");
  if (!(err = CheckKeys(c, origin, "contract.",
                        general
                            ? std::set<std::string>{"kind", "dtype", "bit_identical", "sizes",
                                                    "default_sizes", "params", "size_type"}
                            : std::set<std::string>{"kind", "dtype", "b_layout", "bit_identical"}))
           .empty())
    return err;
  // The parts of a kernel's own contract belong to kind = "general" alone.
  for (const char* key : {"tensor", "scalar", "reference", "work"})
    if (!general && root.get(key))
      return Err(origin, root.get(key), key,
                 "belongs to a kernel's own contract: [contract] kind = \"general\"");
  if (general) {
    std::vector<std::string> knobs;
    for (const Knob& k : m.knobs) knobs.push_back(k.name);
    auto own = std::make_shared<GeneralContract>();
    if (!(err = internal::ReadGeneralContract(root, origin, limits, knobs, own.get())).empty())
      return err;
    m.general = std::move(own);
  }
  if (const toml::node* b = c.get("bit_identical")) {
    if (!b->is_boolean())
      return Err(origin, b, "contract.bit_identical",
                 "expected true or false (do all knob sets compute every output with the same "
                 "operations in the same order?)");
    m.bit_identical = *b->value<bool>();
  }
  std::string dtype, layout = "kn";
  if (!(err = ReadString(c, origin, "contract.", "dtype", true, &dtype)).empty()) return err;
  const auto parsed = ParseDType(dtype);
  if (!parsed)
    return Err(origin, c.get("dtype"), "contract.dtype",
               "'" + dtype + "' is not bf16, fp16, fp32, tf32 or int8");
  // fp8's per-tensor scales are launch arguments a manifest's parameter list cannot name yet.
  if (*parsed == DType::kFP8)
    return Err(origin, c.get("dtype"), "contract.dtype",
               "fp8 is not open to user kernels yet (its per-tensor scales have no place among "
               "a manifest's kernel parameters); use bf16, fp16, fp32, tf32 or int8");
  m.dtype = *parsed;
  if (!(err = ReadString(c, origin, "contract.", "b_layout", false, &layout)).empty()) return err;
  if (layout == "kn") {
    m.b_layout = BLayout::kKN;
  } else if (layout == "nk") {
    m.b_layout = BLayout::kNK;
  } else {
    return Err(origin, c.get("b_layout"), "contract.b_layout",
               "'" + layout + "': kn (B is K x N) or nk (B is N x K)");
  }
  return "";
}

}  // namespace

std::string ParseManifest(const std::string& text, const std::string& origin,
                          const ManifestLimits& limits, Manifest* out) {
  toml::table root;
  if (std::string why = common::ParseToml(
          text, origin, {limits.max_manifest_bytes, limits.max_manifest_depth}, &root);
      !why.empty())
    return why;
  Manifest m;
  std::string err;
  if (!(err = CheckKeys(root, origin, "",
                        {"name", "entry", "description", "language", "contract", "launch",
                         "condition", "knob", "tensor", "scalar", "reference", "work"}))
           .empty())
    return err;
  if (!(err = ReadString(root, origin, "", "name", true, &m.name)).empty()) return err;
  if (!IsIdentifier(m.name, false))
    return Err(origin, root.get("name"), "name",
               "'" + m.name + "': lower-case letters, digits and '_', a letter first, at most 32");
  if (!(err = ReadString(root, origin, "", "entry", true, &m.entry)).empty()) return err;
  if (m.entry.empty() || m.entry.size() > 128 ||
      !std::all_of(m.entry.begin(), m.entry.end(),
                   [](unsigned char c) { return std::isalnum(c) || c == '_'; }) ||
      std::isdigit(static_cast<unsigned char>(m.entry[0])))
    return Err(origin, root.get("entry"), "entry", "'" + m.entry + "' is not a C identifier");
  if (!(err = ReadString(root, origin, "", "description", false, &m.description)).empty())
    return err;
  if (!(err = ReadString(root, origin, "", "language", false, &m.language)).empty()) return err;
  if (m.language != "cuda" && m.language != "ptx" && m.language != "cubin")
    return Err(origin, root.get("language"), "language",
               "'" + m.language +
                   "': cuda (CUDA C++, the default), ptx (PTX from any compiler) or cubin (a "
                   "built kernel for the GPU's architecture)");

  // Knobs first: the expressions name them.
  if (!(err = ReadKnobs(root, origin, limits, &m)).empty()) return err;
  // PTX has no preprocessor and a cubin is built: one file is one build, and a knob is a
  // constant of its launch.
  if (m.language != "cuda")
    for (size_t i = 0; i < m.knobs.size(); ++i)
      if (m.knobs[i].values.size() > 1) {
        const std::string what = m.language == "ptx" ? "PTX" : "cubin";
        return Err(origin, root.get("knob"), "knob[" + std::to_string(i) + "].values",
                   m.knobs[i].name + " has " + std::to_string(m.knobs[i].values.size()) +
                       " values, but a " + what +
                       " source is one build (no -D macros reach it): "
                       "give each knob one value, and emit one " +
                       what + " per knob set as its own kernel");
      }
  int64_t sets = 1;
  for (const Knob& k : m.knobs) sets *= int64_t(k.values.size());
  if (sets > limits.max_knob_sets)
    return Err(origin, root.get("knob"), "knob",
               std::to_string(sets) + " knob combinations, more than " +
                   std::to_string(limits.max_knob_sets));

  if (!(err = ReadContract(root, origin, limits, &m)).empty()) return err;
  std::vector<std::string> names;  // what the launch and the conditions may name
  Names(m, &names);

  const toml::node* launch = root.get("launch");
  if (!launch || !launch->as_table())
    return Err(origin, &root, "launch", "missing: [launch] block, grid and smem");
  const toml::table& l = *launch->as_table();
  if (!(err = CheckKeys(l, origin, "launch.",
                        {"block", "block_y", "block_z", "grid", "grid_y", "grid_z", "smem"}))
           .empty())
    return err;
  const struct {
    const char* key;
    bool required;
    std::unique_ptr<Expression>* out;
  } exprs[] = {{"block", true, &m.block},      {"block_y", false, &m.block_y},
               {"block_z", false, &m.block_z}, {"grid", true, &m.grid_x},
               {"grid_y", false, &m.grid_y},   {"grid_z", false, &m.grid_z},
               {"smem", false, &m.smem}};
  for (const auto& e : exprs) {
    if (!(err = ReadExpression(l, origin, "launch.", e.key, e.required, names, limits, e.out))
             .empty())
      return err;
  }
  if (!(err = CheckShapeIndependentLaunch(m, l, origin)).empty()) return err;

  if (const toml::node* n = root.get("condition")) {
    const auto* arr = n->as_array();
    if (!arr || !arr->is_array_of_tables())
      return Err(origin, n, "condition", "expected [[condition]] tables");
    if (int(arr->size()) > limits.max_conditions)
      return Err(origin, n, "condition",
                 "more than " + std::to_string(limits.max_conditions) + " conditions");
    for (size_t i = 0; i < arr->size(); ++i) {
      const toml::table& t = *arr->get(i)->as_table();
      const std::string prefix = "condition[" + std::to_string(i) + "].";
      if (!(err = CheckKeys(t, origin, prefix, {"when", "says"})).empty()) return err;
      Condition cond;
      if (!(err = ReadExpression(t, origin, prefix, "when", true, names, limits, &cond.when))
               .empty())
        return err;
      if (!(err = ReadString(t, origin, prefix, "says", true, &cond.says)).empty()) return err;
      if (cond.says.empty()) return Err(origin, t.get("says"), prefix + "says", "empty");
      m.conditions.push_back(std::move(cond));
    }
  }
  *out = std::move(m);
  return "";
}

std::string CanRunOwn(const Manifest& m, const KnobSet& s, const Problem& p) {
  const GeneralContract& c = *m.general;
  Sizes sizes;
  if (std::string why = SizesOfProblem(c, p, &sizes); !why.empty())
    return "user kernel " + m.name + ": " + why;
  BufferPlan buffers;
  if (std::string why = PlanBuffers(c, sizes, kMaxOwnTensorBytes, &buffers); !why.empty())
    return "user kernel " + m.name + " at " + FormatSizes(c, sizes) + ": " + why;
  LaunchGeometry g;
  if (std::string why = PlanReference(c, sizes, &g); !why.empty())
    return "user kernel " + m.name + " at " + FormatSizes(c, sizes) + ": reference: " + why;
  double ops = 0, bytes = 0;
  if (std::string why = WorkAt(c, sizes, &ops, &bytes); !why.empty())
    return "user kernel " + m.name + " at " + FormatSizes(c, sizes) + ": " + why;
  return Plan(m, s, p, &g);
}

std::vector<KnobSet> KnobSets(const Manifest& m) {
  std::vector<KnobSet> sets(1);
  for (const Knob& k : m.knobs) {
    std::vector<KnobSet> next;
    for (const KnobSet& s : sets)
      for (int64_t v : k.values) {
        KnobSet n = s;
        n.values.push_back(v);
        next.push_back(std::move(n));
      }
    sets = std::move(next);
  }
  return sets;
}

std::string VariantName(const Manifest& m, const KnobSet& s) {
  std::string name = "user." + m.name;
  for (size_t i = 0; i < m.knobs.size(); ++i)
    name += "." + Lower(m.knobs[i].name) + "=" + std::to_string(s.values[i]);
  return name;
}

std::string ShortName(const Manifest& m, const KnobSet& s) {
  std::string name = m.name;
  for (size_t i = 0; i < m.knobs.size(); ++i)
    name += "_" + m.knobs[i].short_name + std::to_string(s.values[i]);
  return name;
}

std::string VersionedName(const Manifest& m, const KnobSet& s, int64_t version) {
  return "user." + m.name + "@" + std::to_string(version) +
         VariantName(m, s).substr(5 + m.name.size());
}

std::string RunsAs(const Manifest& m, const KnobSet& s, int64_t version, bool named_by_version) {
  return named_by_version && version > 0 ? VersionedName(m, s, version) : VariantName(m, s);
}

std::string VersionedShortName(const Manifest& m, const KnobSet& s, int64_t version) {
  return m.name + "@" + std::to_string(version) + ShortName(m, s).substr(m.name.size());
}

bool ParseVariantName(const Manifest& m, const std::string& versioned, KnobSet* out) {
  const std::string name = common::WithoutVersion(versioned);
  for (const KnobSet& s : KnobSets(m)) {
    if (name == VariantName(m, s) || name == ShortName(m, s)) {
      *out = s;
      return true;
    }
  }
  return false;
}

std::string Plan(const Manifest& m, const KnobSet& s, const Problem& p, LaunchGeometry* g) {
  const std::map<std::string, double> v = Values(m, s, p);
  for (const Condition& c : m.conditions) {
    double holds = 0;
    if (std::string why = c.when->Evaluate(v, &holds); !why.empty()) return why;
    if (holds == 0) return c.says + " (" + c.when->text() + ")";
  }
  constexpr int64_t kMaxGrid = std::numeric_limits<int32_t>::max();
  LaunchGeometry out;
  std::string why;
  if (!(why = m.block->EvaluateInteger(v, 1, kMaxThreads, &out.block)).empty())
    return "block: " + why;
  if (m.block_y && !(why = m.block_y->EvaluateInteger(v, 1, kMaxThreads, &out.block_y)).empty())
    return "block_y: " + why;
  if (m.block_z && !(why = m.block_z->EvaluateInteger(v, 1, kMaxBlockZ, &out.block_z)).empty())
    return "block_z: " + why;
  if (const int64_t threads = out.block * out.block_y * out.block_z; threads > kMaxThreads)
    return "block: " + std::to_string(out.block) + " x " + std::to_string(out.block_y) + " x " +
           std::to_string(out.block_z) + " = " + std::to_string(threads) +
           " threads, more than a block may have (" + std::to_string(kMaxThreads) + ")";
  if (!(why = m.grid_x->EvaluateInteger(v, 1, kMaxGrid, &out.grid_x)).empty())
    return "grid: " + why;
  if (m.grid_y && !(why = m.grid_y->EvaluateInteger(v, 1, 65535, &out.grid_y)).empty())
    return "grid_y: " + why;
  if (m.grid_z && !(why = m.grid_z->EvaluateInteger(v, 1, 65535, &out.grid_z)).empty())
    return "grid_z: " + why;
  if (m.smem && !(why = m.smem->EvaluateInteger(v, 0, kMaxDynamicSmem, &out.smem_bytes)).empty())
    return "smem: " + why;
  *g = out;
  return "";
}

std::vector<Rung> Ladder(const Manifest& m) {
  std::vector<Rung> rungs;
  KnobSet s;
  for (const Knob& k : m.knobs) s.values.push_back(k.values.front());
  rungs.push_back({"U0", "baseline", s});
  for (size_t i = 0; i < m.knobs.size(); ++i) {
    const Knob& k = m.knobs[i];
    if (k.values.size() < 2) continue;  // a knob with one value is a constant, not a rung
    s.values[i] = k.values.back();
    std::string label =
        k.name + " " + std::to_string(k.values.front()) + " -> " + std::to_string(k.values.back());
    if (!k.label.empty()) label += " (" + k.label + ")";
    rungs.push_back({"U" + std::to_string(rungs.size()), label, s});
  }
  return rungs;
}

std::vector<Variant> Variants(std::shared_ptr<const Manifest> m, int64_t version,
                              bool named_by_version) {
  std::vector<Variant> out;
  for (const KnobSet& s : KnobSets(*m)) {
    Variant v;
    v.name = RunsAs(*m, s, version, named_by_version);
    v.short_name =
        named_by_version && version > 0 ? VersionedShortName(*m, s, version) : ShortName(*m, s);
    v.family = "user." + m->name;
    v.description = m->description.empty() ? "user kernel " + m->name : m->description;
    if (version > 0) v.params.emplace_back("version", version);
    v.params.emplace_back("entry", m->entry);
    for (size_t i = 0; i < m->knobs.size(); ++i)
      v.params.emplace_back(Lower(m->knobs[i].name), s.values[i]);
    v.dtypes = {m->dtype};
    v.b_layout = m->b_layout;
    // Knobs that only move data promise bit-identical outputs: verified against each other with
    // no tolerance (verify --against one of them).
    v.bit_exact_family = m->bit_identical;
    // Threads and dynamic shared memory where no problem changes them (checked when the manifest
    // was read), else left 0 for a listing to plan at a shape (launch_at).
    LaunchSize fixed;
    std::string unused;
    if (FixedLaunch(*m, s, &fixed, &unused).empty()) {
      v.threads = int(fixed.threads);
      v.smem_bytes = fixed.dynamic_smem_bytes;
    }
    v.launch_at = [m, s](const Problem& p) {
      LaunchGeometry g;
      LaunchSize out;
      if (Plan(*m, s, p, &g).empty()) {
        out.threads = g.block * g.block_y * g.block_z;
        out.dynamic_smem_bytes = g.smem_bytes;
      }
      return out;
    };
    if (m->general) {
      v.own_contract = true;
      v.work = [m](const Problem& p) {
        WorkModel w;
        Sizes sizes;
        if (SizesOfProblem(*m->general, p, &sizes).empty() &&
            WorkAt(*m->general, sizes, &w.flops, &w.memory_bytes).empty())
          w.fp32_peak = m->general->work.peak == OpsPeak::kFp32;
        return w;
      };
    }
    v.can_implement = [m, s](const Problem& p) {
      if (p.dtype != m->dtype)
        return "user kernel " + m->name + " takes " + std::string(ToString(m->dtype)) + ", not " +
               std::string(ToString(p.dtype));
      if (m->general) return CanRunOwn(*m, s, p);
      LaunchGeometry g;
      return Plan(*m, s, p, &g);
    };
    out.push_back(std::move(v));
  }
  return out;
}

std::string CompileArch(const std::string& cc) {
  const size_t dot = cc.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 >= cc.size()) return "";
  std::string digits = cc.substr(0, dot) + cc.substr(dot + 1);
  for (char c : digits)
    if (c < '0' || c > '9') return "";
  return "sm_" + digits + (digits == "90" ? "a" : "");
}

bool IsCompileArch(const std::string& arch) {
  if (arch.size() < 5 || arch.size() > 7 || arch.compare(0, 3, "sm_") != 0) return false;
  size_t i = 3;
  while (i < arch.size() && arch[i] >= '0' && arch[i] <= '9') ++i;
  const size_t digits = i - 3;
  if (digits < 2 || digits > 3 || arch[3] == '0') return false;
  return i == arch.size() || (i + 1 == arch.size() && (arch[i] == 'a' || arch[i] == 'f'));
}

}  // namespace ablation::kernels::user
