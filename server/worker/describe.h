// Which kernel a variant launches and where its code is, so that the daemon disassembles exactly
// the code that runs (ablation-client sass).
#pragma once

#include <string>

#include "ablation/v1/worker.pb.h"
#include "kernels/registry.h"
#include "server/worker/device.h"
#include "server/worker/resident.h"

namespace ablation::worker {

/// "" and *result filled (kernel symbol, binary, arch; for a cublas_<dtype>_best variant at a
/// shape, the algorithm `res` holds there, when it holds one), or why the variant has no kernel of
/// ours to describe (unknown, dtype unsupported). `res` may be null (no resident state yet).
std::string RunDescribe(const Device& d, const Resident* res, const kernels::Registry& registry,
                        const ::ablation::worker::v1::DescribeTask& task,
                        ::ablation::worker::v1::DescribeResult* result);

}  // namespace ablation::worker
