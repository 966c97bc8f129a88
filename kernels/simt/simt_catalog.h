// Catalog entries (metadata and can_implement) of the SIMT FP32 ladder. Host-only.
#pragma once

#include <string>

#include "kernels/common/problem.h"
#include "kernels/registry.h"

namespace ablation::kernels {

/// "" if the SIMT kernels can run `p`, else the reason, naming the field.
std::string SimtCanImplement(const Problem& p);

/// Registers the five rungs simt_tiling .. simt_at_swizzle_dbf_rw (fp32).
void RegisterSimt(Registry& registry);

}  // namespace ablation::kernels
