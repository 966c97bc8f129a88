// What a series is: one (hardware fingerprint, variant, dtype, shape, regime). The fingerprint
// says which runs' timings may stand in one series: the same GPU model with the same VBIOS,
// driver, CUDA runtime, cuBLAS, power limit, ECC mode and clock policy. The GPU's UUID is left
// out on purpose: two boards of one model and setup are one series (a fleet's nodes compare),
// while a driver update or another power cap starts a new one.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "ablation/v1/ablation.pb.h"
#include "server/core/base/status.h"

namespace ablation::core {

/// 16 hex digits of the SHA-256 of the fields above, each named, so that an empty field (not
/// known) and another field's value never collide. '' when the device has no name (no GPU).
std::string HardwareFingerprint(const v1::DeviceIdentity& device, std::string_view clock_policy);

/// Node labels "key=value,key=value" (the ABLATION_NODE_LABELS form) into `labels`, a later
/// entry replacing an earlier one of the same key. Keys as Kubernetes allows them (letters,
/// digits, '-', '_', '.', '/'); values without ',' or '='. An error names the bad entry.
Status ParseNodeLabels(std::string_view text, std::map<std::string, std::string>* labels);

/// The stored form: sorted by key, "key=value" joined with ','.
std::string FormatNodeLabels(const std::map<std::string, std::string>& labels);

}  // namespace ablation::core
