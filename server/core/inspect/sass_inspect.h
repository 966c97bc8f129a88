// InspectSass: the daemon disassembles its own kernel. The GPU's worker names the kernel
// (RunManager::Describe: mangled symbol, its executable, the device's arch); cuobjdump prints that
// function's SASS on the daemon's own thread here (never in a gRPC reaction, never on the GPU's
// thread); sass.h judges it, beside the variants of its family.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ablation/v1/ablation.pb.h"
#include "kernels/registry.h"
#include "server/core/base/status.h"
#include "server/core/inspect/sass.h"
#include "server/core/runs/run_manager.h"

namespace ablation::core {

struct SassInspectorOptions {
  /// cuobjdump to use; empty: $ABLATION_CUOBJDUMP, else PATH, $CUDA_HOME/bin, /usr/local/cuda/bin.
  std::string tool;
  std::chrono::seconds timeout{120};
};

/// The cuobjdump to run, or "" with `looked` saying where it looked.
std::string FindCuobjdump(const std::string& configured, std::string* looked);

/// The variants a kernel's compute count is compared with (itself excluded, registered only):
/// pipe_{baseline,ldg,cpasync}_T_TILE for a pipe_ variant, the other stage counts (s1..s4) of an
/// abl_ variant; none for other families.
std::vector<std::string> SassFamily(const kernels::Variant& variant,
                                    const kernels::Registry& registry);

/// One kernel to judge: what the worker said about it.
struct SassTarget {
  std::string variant;
  std::string dtype;
  std::string symbol;
  std::string build;          ///< the build named for the request's shape, in words ("": none)
  std::string error;          ///< the worker could not name it
  std::string expect_tensor;  ///< "HGMMA" / "HMMA" where the variant names its mainloop
  bool expect_tma = false;    ///< the variant says its loads are TMA (UTMALDG)
};

/// Builds the response from a cuobjdump listing of the targets' symbols (pure). targets[0] is the
/// kernel asked about and gets the excerpt; the others are its family.
v1::SassResponse BuildSassResponse(const std::string& listing,
                                   const std::vector<SassTarget>& targets);

/// Runs argv (no shell), returns "" and the output, or what went wrong (with stderr's tail).
std::string RunTool(const std::vector<std::string>& argv, std::chrono::seconds timeout,
                    std::string* out);

class SassInspector {
 public:
  using Done = std::function<void(const Status&, const v1::SassResponse&)>;

  SassInspector(SassInspectorOptions options, RunManager* runs, const kernels::Registry* registry);
  ~SassInspector();
  SassInspector(const SassInspector&) = delete;
  SassInspector& operator=(const SassInspector&) = delete;

  /// Validates (InvalidArgument naming the field; FailedPrecondition without cuobjdump, a GPU or
  /// its worker) and queues; `done` is called later from the daemon's threads unless an error
  /// is returned here.
  Status Inspect(const v1::SassRequest& request, Done done);

 private:
  struct State;  ///< shared with the callbacks, so one in flight at shutdown finds it alive
  SassInspectorOptions options_;
  RunManager* runs_;
  const kernels::Registry* registry_;
  std::shared_ptr<State> state_;
  std::thread thread_;
};

}  // namespace ablation::core
