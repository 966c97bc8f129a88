// Conversions between the store's records and the public API's messages.
#pragma once

#include "ablation/v1/ablation.pb.h"
#include "db/records.h"

namespace ablation::core {

v1::Measurement ToProto(const db::MeasurementRecord& r);
v1::Telemetry ToProto(const db::Telemetry& t);
v1::Run ToProto(const db::RunRecord& r);
v1::VerifyResult ToProto(const db::VerificationRecord& r);
v1::DeviceIdentity ToProto(const db::DeviceIdentity& d);
db::DeviceIdentity ToRecord(const v1::DeviceIdentity& d);
db::VerificationRecord ToRecord(const v1::VerifyResult& r);

}  // namespace ablation::core
