// Catalog entries (metadata and can_implement) of the sm90 family, the Hopper ladder. Host-only.
#pragma once

#include <string>

#include "kernels/common/problem.h"
#include "kernels/registry.h"

namespace ablation::kernels {

/// "" if the sm90 rung with clusters of `cluster_m` CTAs can run `p`, else the reason.
std::string Sm90CanImplement(int cluster_m, int cluster_n, const Problem& p);

/// Registers the Hopper ladder's rungs (bf16; they run on compute capability 9.0 only).
void RegisterSm90(Registry& registry);

}  // namespace ablation::kernels
