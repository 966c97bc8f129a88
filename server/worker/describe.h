// Which kernel a variant launches and where its code is, so that the daemon disassembles exactly
// the code that runs (ablation-client sass).
#pragma once

#include <string>

#include "ablation/v1/worker.pb.h"
#include "kernels/registry.h"
#include "server/worker/device.h"

namespace ablation::worker {

/// "" and *result filled (kernel symbol, binary, arch), or why the variant has no kernel of ours
/// to describe (unknown, dtype unsupported, a library entry).
std::string RunDescribe(const Device& d, const kernels::Registry& registry,
                        const ::ablation::worker::v1::DescribeTask& task,
                        ::ablation::worker::v1::DescribeResult* result);

}  // namespace ablation::worker
