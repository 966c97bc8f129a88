// What a window does around its samples: see window_setup.h.
#include "server/worker/window_setup.h"

#include <algorithm>

#include "common/time.h"
#include "server/worker/diagnostics.h"
#include "server/worker/launch.h"
#include "server/worker/occupancy.h"

namespace ablation::worker {

::ablation::v1::L2Mode ToL2Mode(L2Method method) {
  switch (method) {
    case L2Method::kRotate:
      return ::ablation::v1::L2_MODE_COLD_ROTATED;
    case L2Method::kFlush:
      return ::ablation::v1::L2_MODE_COLD;
    case L2Method::kHot:
      return ::ablation::v1::L2_MODE_HOT;
  }
  return ::ablation::v1::L2_MODE_UNSPECIFIED;
}

std::string WarmUp(Device& d, const std::vector<WindowMember>& members,
                   const protocol::SamplingOptions& o, double* cycle_ms) {
  const auto warm0 = std::chrono::steady_clock::now();
  for (int c = 0;; ++c) {
    if (c >= std::max(o.warmup_count, 1) && (common::SecondsSince(warm0) >= o.warmup_seconds ||
                                             common::SecondsSince(warm0) >= o.max_seconds))
      break;
    const auto t0 = std::chrono::steady_clock::now();
    for (const WindowMember& m : members) {
      if (std::string err = LaunchChecked(d, m.r, m.sets.front()); !err.empty())
        return m.r.variant->name + ": warm-up: " + err;
    }
    std::string err = d.Check(cudaStreamSynchronize(d.stream), "warm-up");
    if (!err.empty()) return err;
    *cycle_ms = 1e3 * common::SecondsSince(t0);
  }
  return "";
}

void ResetPersistingL2(Device& d) {
  static bool logged = false;
  cudaError_t e = cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
  if (e == cudaSuccess) e = cudaCtxResetPersistingL2Cache();
  if (e != cudaSuccess) {
    cudaGetLastError();
    if (!logged) Log("the persisting-L2 limit could not be reset: %s", cudaGetErrorString(e));
    logged = true;
  }
  cudaStreamAttrValue none{};
  none.accessPolicyWindow.num_bytes = 0;
  if (cudaStreamSetAttribute(d.stream, cudaStreamAttributeAccessPolicyWindow, &none) != cudaSuccess)
    cudaGetLastError();
}

std::string CachedOccupancy(Device& d, Resident& res, const Ready& r,
                            ::ablation::v1::Occupancy* occ) {
  const void* fn = r.variant->KernelAt(r.problem);
  if (fn == nullptr) return "";
  if (auto it = res.occupancy.find(fn); it != res.occupancy.end()) {
    *occ = it->second;
    return "";
  }
  std::string err = FillOccupancy(d, r, occ);
  if (err.empty()) res.occupancy[fn] = *occ;
  return err;
}

}  // namespace ablation::worker
