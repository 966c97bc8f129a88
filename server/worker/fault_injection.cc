#include "server/worker/fault_injection.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

namespace ablation::worker {

void MaybeInjectTestFault(std::string_view variant) {
  const char* env = std::getenv(kTestFaultEnv);
  if (env == nullptr || *env == '\0') return;
  const std::string spec = env;
  const auto matches = [&](std::string_view prefix) {
    return spec.rfind(prefix, 0) == 0 && std::string_view(spec).substr(prefix.size()) == variant;
  };
  if (matches("crash-on-variant:")) {
    std::fprintf(stderr, "ablation-worker: TEST FAULT (%s): aborting on %.*s\n", kTestFaultEnv,
                 int(variant.size()), variant.data());
    std::abort();
  }
  if (matches("hang-on-variant:")) {
    std::fprintf(stderr, "ablation-worker: TEST FAULT (%s): hanging on %.*s\n", kTestFaultEnv,
                 int(variant.size()), variant.data());
    for (;;) ::pause();
  }
}

}  // namespace ablation::worker
