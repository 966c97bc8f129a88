// The per-bucket rungs (S8, S10, S12; sm90_buckets.h): their catalog entries and their binding
// in the worker. Both are host code (the builds they run are launched through their own entries),
// so both live in the catalog library; the worker calls the binding after the Hopper and
// small-shape rungs'.
#include "kernels/sm90/sm90_buckets.h"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "kernels/registry.h"

namespace ablation::kernels::sm90 {
namespace {

// The entries of the default and of every build the table names, the default first; empty where
// one is missing from `registry` (or, with `bound`, has no launch).
std::vector<Variant> BucketEntries(const Registry& registry, const BucketTable& table, bool bound) {
  std::vector<std::string_view> names = {table.fallback};
  for (const BucketPick& pick : table.picks)
    if (std::ranges::find(names, pick.variant) == names.end()) names.push_back(pick.variant);
  std::vector<Variant> entries;
  for (std::string_view name : names) {
    const Variant* v = registry.Find(name);
    if (v == nullptr || (bound && !v->launch)) return {};
    entries.push_back(*v);
  }
  return entries;
}

// The entry `table` names for a problem, of `entries` (BucketEntries, kept by the returned
// function; the table's picks are constants of static storage, or the tests' that outlive it).
// A pick that refuses a problem of its bucket (a swapped build: M not a multiple of 8) leaves it
// to the default, which takes every shape the rung takes.
std::function<const Variant&(const Problem&)> Picker(std::vector<Variant> entries,
                                                     const BucketTable& table) {
  return [entries = std::move(entries), table](const Problem& p) -> const Variant& {
    const Variant& pick = EntryNamed(entries, BucketVariantFor(p, table));
    if (pick.can_implement && !pick.can_implement(p).empty()) return entries.front();
    return pick;
  };
}

}  // namespace

void RegisterSm90BucketRung(Registry& registry, const BucketTable& table) {
  const std::vector<Variant> entries = BucketEntries(registry, table, false);
  if (entries.empty()) return;
  const std::string fallback(table.fallback);
  Variant v = entries.front();
  v.name = std::string(table.rung);
  v.description =
      std::string(table.id) +
      ": per-bucket choice: a shape's bucket (the classes of M and N: 1, 2-16, "
      "17-128, 129-512, 513-4096, more; of K: up to 4096, 16384, more) runs the build the "
      "table names for it, made from measured databases: one that beat " +
      fallback +
      " beyond the noise at every measured shape of the bucket, the fastest of those by "
      "the table's rule (" +
      std::to_string(table.picks.size()) + " buckets); every other bucket runs " + fallback + ": " +
      entries.front().description;
  // The default's parameters, its "base" (H12) now the default itself and its rung the table's.
  for (auto& [key, value] : v.params) {
    if (key == "rung") value = std::string(table.id);
    if (key == "base") value = fallback;
  }
  v.params.insert(v.params.begin() + (v.params.empty() ? 0 : 1),
                  {"bucket_picks", int64_t(table.picks.size())});
  const auto entry = Picker(entries, table);
  v.can_implement = [entry](const Problem& p) { return entry(p).can_implement(p); };
  v.launch_at = [entry](const Problem& p) {
    const Variant& e = entry(p);
    return e.launch_at ? e.launch_at(p) : LaunchSize{e.threads, e.smem_bytes};
  };
  v.build = [entry, fallback](const Problem& p, const Residency& device) {
    const Variant& e = entry(p);
    const std::string build = e.build ? e.build(p, device) : "its one build";
    return e.name == fallback ? build : e.name + " (this bucket's pick): " + build;
  };
  v.scratch_bytes = [entry](const Problem& p) {
    const Variant& e = entry(p);
    return e.scratch_bytes ? e.scratch_bytes(p) : std::vector<int64_t>{0, 0, 0};
  };
  v.dispatched_to = [entry](const Problem& p) { return entry(p).name; };
  registry.Add(std::move(v));
}

void BindSm90BucketRung(Registry& registry, const BucketTable& table) {
  Variant* v = registry.FindMutable(table.rung);
  const std::vector<Variant> entries = BucketEntries(registry, table, true);
  if (v == nullptr || entries.empty()) return;
  const auto entry = Picker(entries, table);
  v->launch = [entry](const GemmArgs& args) { return entry(args.problem).launch(args); };
  v->kernel = entries.front().kernel;
  v->kernel_at = [entry](const Problem& p) { return entry(p).KernelAt(p); };
}

void RegisterSm90BucketRungs(Registry& registry) {
  for (const BucketTable& table : kBucketTables) RegisterSm90BucketRung(registry, table);
}

void BindSm90BucketRungs(Registry& registry) {
  for (const BucketTable& table : kBucketTables) BindSm90BucketRung(registry, table);
}

}  // namespace ablation::kernels::sm90
