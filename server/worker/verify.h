// Checking one variant's output on one problem against the reference the task names: the FP64
// CPU product, the plain GPU GEMM (kernels/reference/gpu_reference.h), cuBLAS of the same dtype,
// or another variant on the same logical inputs.
#pragma once

#include <string>

#include "ablation/v1/worker.pb.h"
#include "kernels/registry.h"
#include "server/worker/device.h"
#include "server/worker/resident.h"

namespace ablation::worker {

/// "" and the comparison in *result (errors, counts, tolerance, passed), or why it could not be
/// made; where the reference could not run the shape or failed, that text starts "reference: ". The
/// task's reference has passed CheckReference (verify_reference.h). The inputs are the problem's
/// resident ones (`res`), written again from the seed first; a wrong output clears `res`.
std::string RunVerify(Device& d, Resident& res, const kernels::Registry& registry,
                      const ::ablation::worker::v1::VerifyTask& task,
                      ::ablation::v1::VerifyResult* result);

}  // namespace ablation::worker
