// libFuzzer target: the SASS listing parser and the main-loop checks (server/core/inspect/sass.h)
// on any text as cuobjdump output.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "server/core/inspect/sass.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ablation::core;
  const std::string_view listing(reinterpret_cast<const char*>(data), size);
  for (const SassFunction& function : ParseSass(listing)) {
    (void)FindLoops(function);
    (void)DescribeVerdict(InspectFunction(function));
  }
  return 0;
}
