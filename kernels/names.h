// Canonical names of the kernel families built here. The catalog (host-only) and the launchers
// (CUDA) both derive an entry's name from these functions, so the two sides cannot drift apart.
#pragma once

#include <string>
#include <vector>

namespace ablation::kernels {

/// The knobs of one ablation variant (see kernels/ablation/ablation_gemm.cuh for what each does).
struct AblationConfig {
  int load_mode = 0;  ///< 0: ld.global + st.shared, 1: cp.async.cg
  int read_mode = 0;  ///< 0: ld.shared per fragment element, 1: ldmatrix
  int b_layout = 0;   ///< 0: Bs[BK][BN] (B is K x N), 1: Bs[BN][BK] (B is N x K)
  int stages = 1;     ///< 1..4 shared-memory stages
  int swizzle = 0;    ///< 0: plain rows, 1: XOR swizzle
  int rb = 0;         ///< 1: register-fragment double buffer

  friend bool operator==(const AblationConfig&, const AblationConfig&) = default;
};

/// "abl_L{l}_R{r}_bl{b}_s{s}_sw{w}" plus "_rb1" when rb == 1.
std::string AblationVariantName(const AblationConfig& c);

/// All 128 configurations, in registry order: load_mode, read_mode, b_layout, stages, swizzle, rb
/// (the last varies fastest).
std::vector<AblationConfig> AllAblationConfigs();

}  // namespace ablation::kernels
