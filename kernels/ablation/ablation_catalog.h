// Catalog entries (metadata and can_implement) of the ablation family. Host-only.
#pragma once

#include <string>

#include "kernels/common/problem.h"
#include "kernels/names.h"
#include "kernels/registry.h"

namespace ablation::kernels {

/// "" if the ablation kernel can run `p`, else the reason, naming the field.
std::string AblationCanImplement(const Problem& p);

/// Registers the 128 ablation variants (each for bf16 and fp16).
void RegisterAblation(Registry& registry);

}  // namespace ablation::kernels
