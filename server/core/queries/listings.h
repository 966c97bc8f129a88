// The answers that need neither the GPU nor the database: the registry's variants, their shared
// memory budgets, the presets, and the devices as the run manager knows them. Cheap and
// in-memory, so the rpc layer calls them inline.
#pragma once

#include "ablation/v1/ablation.pb.h"
#include "kernels/registry.h"
#include "server/core/base/status.h"
#include "server/core/runs/run_manager.h"
#include "server/core/setup/presets.h"

namespace ablation::core {

v1::Variant ToProto(const kernels::Variant& variant);

/// The built-in variants and then `user` (the user kernels' variants, may be empty), all of them
/// or those the glob selects; NotFound (the built-ins' words) when the glob selects none of either.
/// With request.shape, each variant names the build that runs that problem on a device holding
/// `device` (Variant.build) or why it cannot run it (build_refused).
Status ListVariants(const kernels::Registry& registry, const std::vector<kernels::Variant>& user,
                    const v1::ListVariantsRequest& request, v1::ListVariantsResponse* response,
                    const kernels::Residency& device = {});
Status GetBudget(const kernels::Registry& registry, const v1::BudgetRequest& request,
                 v1::BudgetResponse* response);
/// `presets` may be null: no presets.
Status ListPresets(const Presets* presets, const kernels::Registry& registry,
                   const v1::ListPresetsRequest& request, v1::ListPresetsResponse* response);
Status GetDevice(RunManager& runs, const v1::GetDeviceRequest& request,
                 v1::GetDeviceResponse* response);

}  // namespace ablation::core
