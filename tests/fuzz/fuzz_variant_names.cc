// libFuzzer target: the name/glob resolver (server/core/plan/variant_names.h) and the request
// bounds the rpc layer checks before it (server/core/plan/limits.h), on any bytes as a selector.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kernels/registry.h"
#include "server/core/plan/limits.h"
#include "server/core/plan/variant_names.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ablation;
  static const kernels::Registry* registry = [] {
    auto* r = new kernels::Registry;
    kernels::RegisterCatalog(*r);
    return r;
  }();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)core::ParseAblationName(text);
  (void)core::IsGlob(text);
  (void)core::QuoteInput(text);
  std::vector<const kernels::Variant*> found;
  (void)core::Resolve(*registry, text, "variants[0]", &found);
  if (size < 64) (void)core::GlobMatch(text, "abl_L1_R1_bl0_s3_sw1");
  return 0;
}
