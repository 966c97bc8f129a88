// Catalog entries (metadata and can_implement) of the TF32 Tensor Core pair. Host-only.
#pragma once

#include <string>

#include "kernels/common/problem.h"
#include "kernels/registry.h"

namespace ablation::kernels {

/// "" if the tf32 kernels can run `p`, else the reason, naming the field.
std::string Tf32CanImplement(const Problem& p);

/// Registers tf32_sync_swizzle_dbf and tf32_cpasync_swizzle_dbf (tf32).
void RegisterTf32(Registry& registry);

}  // namespace ablation::kernels
