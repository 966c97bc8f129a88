// The raw samples of a measurement as stored in measurement_samples.sample_ms: a BLOB of
// little-endian IEEE-754 doubles in measured order, whatever the host's byte order, so that a
// database copied between machines (or read by a dashboard in Python) means the same.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <google/protobuf/repeated_field.h>

namespace ablation::db {

std::vector<uint8_t> EncodeSamples(std::span<const double> samples);
// Appends to out; trailing bytes short of a whole double are ignored.
void DecodeSamples(std::span<const uint8_t> bytes, google::protobuf::RepeatedField<double>& out);

}  // namespace ablation::db
