// libFuzzer target: a RunRequest from any bytes through the checks a request meets before it is
// queued: the rpc layer's bounds, then the plan (shapes, timing, clocks, variants, rounds).
#include <cstddef>
#include <cstdint>

#include <google/protobuf/stubs/logging.h>

#include "ablation/v1/ablation.pb.h"
#include "kernels/registry.h"
#include "server/core/plan/limits.h"
#include "server/core/plan/run_plan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ablation;
  static const kernels::Registry* registry = [] {
    // Invalid UTF-8 in a string field is refused by the parser (as gRPC refuses it); quietly.
    google::protobuf::SetLogHandler(nullptr);
    auto* r = new kernels::Registry;
    kernels::RegisterCatalog(*r);
    return r;
  }();
  v1::RunRequest request;
  if (!request.ParseFromArray(data, int(size))) return 0;
  if (!core::CheckRequestBounds(request, core::RequestLimits()).ok()) return 0;
  core::DeviceLimits device{true, int64_t(80) << 30, 50 << 20};
  core::RunPlan plan;
  if (core::PlanRun(request, *registry, device, core::TimingDefaults(), &plan).ok())
    (void)core::ApplyRounds(request.rounds(), 1, request.order_seed(), &plan);
  v1::VerifyRequest verify;
  if (verify.ParseFromArray(data, int(size)) &&
      core::CheckRequestBounds(verify, core::RequestLimits()).ok()) {
    core::RunPlan vplan;
    (void)core::PlanVerify(verify, *registry, device, &vplan);
  }
  return 0;
}
