#include "tests/client/support/served_catalog.h"

#include <gtest/gtest.h>

#include "kernels/registry.h"
#include "server/core/queries/listings.h"
#include "server/core/setup/presets.h"

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
  core::Presets catalog;
  const core::Status st = toml.empty() ? catalog.LoadText(core::BuiltinPresetsToml(), "built-in")
                                       : catalog.LoadText(toml, "test.toml");
  EXPECT_TRUE(st.ok()) << st.message();
  std::vector<v1::Preset> out;
  for (const core::Preset* p : catalog.All()) out.push_back(core::ToProto(*p, Catalog()));
  return out;
}

// As server/rpc/service.cc answers ListVariants: the core's own conversion.
std::vector<v1::Variant> ServedVariants() {
  std::vector<v1::Variant> out;
  for (const kernels::Variant& v : Catalog().All()) out.push_back(core::ToProto(v));
  return out;
}

}  // namespace ablation::testing
