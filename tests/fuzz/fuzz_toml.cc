// libFuzzer target: the daemon's TOML inputs: its config (server/core/setup/config.h), presets
// (server/core/setup/presets_parse.cc) and the token file (server/core/setup/auth.h).
#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/registry.h"
#include "server/core/setup/auth.h"
#include "server/core/setup/config.h"
#include "server/core/setup/presets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ablation;
  const std::string text(reinterpret_cast<const char*>(data), size);
  core::DaemonConfig config;
  (void)core::LoadConfigText(text, "fuzz.toml", &config);
  core::Presets presets;
  (void)presets.LoadText(text, "fuzz-presets.toml");
  core::TokenTable tokens;
  (void)core::TokenTable::Parse(text, "fuzz-tokens", &tokens);
  return 0;
}
