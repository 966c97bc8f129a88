// The fields of a kernels::Problem as the protos spell them: shared by the measurement step's
// timing (measurement_step.cc) and verification (measurement_verify.cc).
#pragma once

#include <string>

#include "ablation/v1/ablation.pb.h"
#include "kernels/common/problem.h"

namespace ablation::core {

inline void SetShape(const kernels::Problem& p, v1::Shape* shape) {
  shape->set_m(p.m);
  shape->set_n(p.n);
  shape->set_k(p.k);
}

inline std::string DTypeText(const kernels::Problem& p) {
  return std::string(kernels::ToString(p.dtype));
}

}  // namespace ablation::core
