// libFuzzer target: the daemon's TOML inputs: its config (server/core/config.h), presets
// (server/core/presets_parse.cc) and the token file (server/core/auth.h).
#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/registry.h"
#include "server/core/auth.h"
#include "server/core/config.h"
#include "server/core/presets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ablation;
  const std::string text(reinterpret_cast<const char*>(data), size);
  core::DaemonConfig config;
  (void)core::LoadConfigText(text, "fuzz.toml", &config);
  core::PresetCatalog presets;
  (void)presets.LoadText(text, "fuzz-presets.toml");
  core::TokenTable tokens;
  (void)core::TokenTable::Parse(text, "fuzz-tokens", &tokens);
  return 0;
}
