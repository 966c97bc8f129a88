// The code a task must carry for the user variants it names: a user kernel's variant has no code
// in the worker's binary, so every task that names one sends its build (the manifest the worker
// plans launches from and the cubin it loads). Built-in variants carry nothing.
#pragma once

#include <string>

#include "ablation/v1/worker.pb.h"
#include "kernels/registry.h"

namespace ablation::core {

/// Adds `variant`'s build to `out` when it is a user variant and `out` lacks it.
void AddUserCode(const kernels::Variant& variant,
                 google::protobuf::RepeatedPtrField<worker::v1::UserCode>* out);

/// The same for a variant named in `registry` (unknown names and built-in variants add nothing:
/// the worker refuses an unknown name itself).
void AddUserCode(const kernels::Registry* registry, const std::string& name,
                 google::protobuf::RepeatedPtrField<worker::v1::UserCode>* out);

}  // namespace ablation::core
