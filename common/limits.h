// Limits that more than one process honours: the daemon refuses a plan the worker would refuse, so
// the number is defined once.
#pragma once

namespace ablation::common {

/// Multiply-adds (M*N*K) beyond which a verification against the CPU reference is refused even
/// when asked for (2^33): it is an FP64 product on the host's cores and would hold the GPU's
/// thread for minutes beyond that (2^33 takes seconds on a GPU node). The daemon refuses such a
/// plan; the worker refuses such a task from any other caller.
inline constexpr double kCpuReferenceMaxWork = double(1ull << 33);

}  // namespace ablation::common
