// User variants in the worker: the code a task carries for them (UserCode: the manifest and the
// cubin of one build) is loaded into the CUDA context (cudaLibraryLoadData) and the variant entered
// into the worker's registry with a launcher that plans each launch from the manifest (block,
// grid and dynamic shared memory as expressions of M, N, K and the knobs) and launches the entry
// on the worker's own stream with the contract's arguments (A, B, C, M, N, K). A build is loaded
// once and kept while its cubin is the same; a changed cubin for the same name is loaded anew.
#pragma once

#include <map>
#include <memory>
#include <string>

#include <google/protobuf/repeated_ptr_field.h>

#include "ablation/v1/worker.pb.h"
#include "kernels/registry.h"

namespace ablation::worker {

class UserKernels {
 public:
  UserKernels();
  ~UserKernels();
  UserKernels(const UserKernels&) = delete;
  UserKernels& operator=(const UserKernels&) = delete;

  /// Loads what `codes` holds that is not loaded yet and makes each variant runnable in
  /// `registry`. "" or what failed, naming the variant (a manifest that does not parse, a name
  /// the manifest does not give, a cubin the device cannot load, an entry it lacks).
  std::string Load(
      const google::protobuf::RepeatedPtrField<::ablation::worker::v1::UserCode>& codes,
      kernels::Registry& registry);

  struct Loaded;  ///< one build in the context (user_kernels.cc)

 private:
  std::map<std::string, std::shared_ptr<Loaded>> by_variant_;
};

}  // namespace ablation::worker
