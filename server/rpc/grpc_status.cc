#include "server/rpc/grpc_status.h"

namespace ablation::rpc {
namespace {

// The bytes a character takes in grpc-message: printable ASCII but '%' is itself, anything else
// %XX.
size_t EncodedSize(unsigned char c) { return c >= 0x20 && c <= 0x7e && c != '%' ? 1 : 3; }

}  // namespace

std::string BoundedMessage(const std::string& message, size_t max_encoded) {
  size_t encoded = 0;
  for (unsigned char c : message) encoded += EncodedSize(c);
  if (encoded <= max_encoded) return message;
  // Room for the note (at most ~120 encoded bytes), then the longest prefix that fits, ended at
  // the last line break in it when there is one in its second half, never inside a UTF-8
  // character.
  const size_t room = max_encoded > 160 ? max_encoded - 160 : 0;
  size_t cut = 0, used = 0;
  while (cut < message.size() && used + EncodedSize(message[cut]) <= room)
    used += EncodedSize(message[cut++]);
  while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xc0) == 0x80) --cut;
  if (const size_t line = message.rfind('\n', cut); line != std::string::npos && line > cut / 2)
    cut = line + 1;
  std::string out = message.substr(0, cut);
  if (!out.empty() && out.back() != '\n') out += '\n';
  return out + "[" + std::to_string(message.size() - cut) +
         " more bytes of this message withheld: a gRPC client reads at most 8 KiB of an error]";
}

grpc::Status ToGrpc(const core::Status& status) {
  using core::Code;
  const core::Status s(status.code(), BoundedMessage(status.message()));
  switch (s.code()) {
    case Code::kOk:
      return grpc::Status::OK;
    case Code::kInvalidArgument:
      return {grpc::StatusCode::INVALID_ARGUMENT, s.message()};
    case Code::kNotFound:
      return {grpc::StatusCode::NOT_FOUND, s.message()};
    case Code::kFailedPrecondition:
      return {grpc::StatusCode::FAILED_PRECONDITION, s.message()};
    case Code::kUnavailable:
      return {grpc::StatusCode::UNAVAILABLE, s.message()};
    case Code::kResourceExhausted:
      return {grpc::StatusCode::RESOURCE_EXHAUSTED, s.message()};
    case Code::kInternal:
      return {grpc::StatusCode::INTERNAL, s.message()};
  }
  return {grpc::StatusCode::UNKNOWN, s.message()};
}

}  // namespace ablation::rpc
