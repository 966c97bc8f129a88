#include "db/samples.h"

#include <bit>

namespace ablation::db {

std::vector<uint8_t> EncodeSamples(std::span<const double> samples) {
  std::vector<uint8_t> bytes(samples.size() * sizeof(double));
  for (size_t i = 0; i < samples.size(); ++i) {
    const uint64_t bits = std::bit_cast<uint64_t>(samples[i]);
    for (size_t b = 0; b < sizeof(double); ++b) bytes[i * 8 + b] = (bits >> (8 * b)) & 0xFF;
  }
  return bytes;
}

void DecodeSamples(std::span<const uint8_t> bytes, google::protobuf::RepeatedField<double>& out) {
  const size_t count = bytes.size() / sizeof(double);
  out.Reserve(out.size() + static_cast<int>(count));
  for (size_t i = 0; i < count; ++i) {
    uint64_t bits = 0;
    for (size_t b = 0; b < sizeof(double); ++b) bits |= uint64_t{bytes[i * 8 + b]} << (8 * b);
    out.Add(std::bit_cast<double>(bits));
  }
}

}  // namespace ablation::db
