// Catalog entries (metadata and can_implement) of the sm90 family, the Hopper ladder. Host-only.
// Every rung takes every bf16 shape (sm90::ShapeError, sm90_shapes.h).
#pragma once

#include <string>

#include "kernels/common/problem.h"
#include "kernels/registry.h"

namespace ablation::kernels {

/// Registers the Hopper ladder's rungs (bf16; they run on compute capability 9.0 only).
void RegisterSm90(Registry& registry);

}  // namespace ablation::kernels
