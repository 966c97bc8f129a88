#include "tests/client/support/served_catalog.h"

#include <gtest/gtest.h>

#include "kernels/registry.h"
#include "server/core/presets.h"

namespace ablation::testing {
namespace {

const kernels::Registry& Catalog() {
  static const kernels::Registry* registry = [] {
    auto* r = new kernels::Registry;
    kernels::RegisterCatalog(*r);
    return r;
  }();
  return *registry;
}

}  // namespace

std::vector<v1::Preset> ServedPresets(const std::string& toml) {
  core::PresetCatalog catalog;
  const core::Status st = toml.empty() ? catalog.LoadText(core::BuiltinPresetsToml(), "built-in")
                                       : catalog.LoadText(toml, "test.toml");
  EXPECT_TRUE(st.ok()) << st.message();
  std::vector<v1::Preset> out;
  for (const core::Preset* p : catalog.All()) out.push_back(core::ToProto(*p, Catalog()));
  return out;
}

// As server/rpc/service.cc answers ListVariants.
std::vector<v1::Variant> ServedVariants() {
  std::vector<v1::Variant> out;
  for (const kernels::Variant& v : Catalog().All()) {
    v1::Variant p;
    p.set_name(v.name);
    p.set_family(v.family);
    for (auto d : v.dtypes) p.add_dtypes(std::string(kernels::ToString(d)));
    p.set_tile_m(v.tile.m);
    p.set_tile_n(v.tile.n);
    p.set_tile_k(v.tile.k);
    p.set_threads(v.threads);
    p.set_smem_bytes(v.smem_bytes);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace ablation::testing
