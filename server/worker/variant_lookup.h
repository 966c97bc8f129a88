// Turns a task's variant name, dtype and shape into a variant that can run the problem, or into
// the reason it cannot (unknown, dtype unsupported, shape not positive, can_implement says no, no
// launcher), before anything is allocated on the device.
#pragma once

#include <memory>
#include <string>

#include "ablation/v1/ablation.pb.h"
#include "kernels/common/problem.h"
#include "kernels/registry.h"

namespace ablation::worker {

/// A variant ready to run: looked up, supports the dtype, can run the problem, has a launcher.
struct Ready {
  const kernels::Variant* variant = nullptr;
  kernels::Problem problem;
  /// A cublas_<dtype>_best variant's algorithm at this problem (library_choice.h); null before it
  /// is chosen, and for every other variant. ArgsFor hands it to the launcher.
  std::shared_ptr<const std::string> library_algo;
};

/// "" and *out filled, or why the variant cannot run the problem.
std::string Resolve(const kernels::Registry& registry, const std::string& name,
                    const std::string& dtype, const ::ablation::v1::Shape& shape, Ready* out);

}  // namespace ablation::worker
