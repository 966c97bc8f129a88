// Binds the launchers of the ablation family. One function per (LOAD_MODE, STAGES) slice, each
// defined in its own translation unit (ablation_l{L}_s{S}.cu).
#pragma once

#include "kernels/registry.h"

namespace ablation::kernels {

void BindAblationL0S1(Registry& registry);
void BindAblationL0S2(Registry& registry);
void BindAblationL0S3(Registry& registry);
void BindAblationL0S4(Registry& registry);
void BindAblationL1S1(Registry& registry);
void BindAblationL1S2(Registry& registry);
void BindAblationL1S3(Registry& registry);
void BindAblationL1S4(Registry& registry);

/// All of the above.
void BindAblationLaunchers(Registry& registry);

}  // namespace ablation::kernels
