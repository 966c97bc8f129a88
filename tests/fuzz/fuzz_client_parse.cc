// libFuzzer target: what users type into the client (client/parse.h): shapes, times, run ids.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "client/cli/parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ablation::v1::Shape shape;
  if (ablation::client::ParseShape(text, &shape).empty() &&
      (shape.m() <= 0 || shape.n() <= 0 || shape.k() <= 0))
    __builtin_trap();  // accepted means every dimension is positive
  std::int64_t value = 0;
  (void)ablation::client::ParseTimeMs(text, &value);
  (void)ablation::client::ParseRunId(text, &value, true);
  return 0;
}
