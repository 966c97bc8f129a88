// The core's error type: a code from a small fixed set and a message naming what is wrong.
// server/rpc maps it to grpc::Status in one place; the core itself knows nothing of gRPC.
#pragma once

#include <exception>
#include <string>
#include <utility>

namespace ablation::core {

enum class Code {
  kOk,
  kInvalidArgument,     ///< the request is wrong; the message names the field
  kNotFound,            ///< a run or variant that does not exist
  kFailedPrecondition,  ///< the request is fine but the daemon cannot do it now (no GPU, ...)
  kUnavailable,         ///< shutting down
  kResourceExhausted,   ///< a bound of the daemon's own is full now (waiting compiles, ...)
  kInternal,
};

class Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  /// With a reason: one word a client can branch on where the code alone does not tell (a user
  /// kernel that does not compile is InvalidArgument, as a manifest that does not parse is).
  Status(Code code, std::string message, std::string reason)
      : code_(code), message_(std::move(message)), reason_(std::move(reason)) {}
  static Status Ok() { return {}; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  const std::string& reason() const { return reason_; }

 private:
  Code code_ = Code::kOk;
  std::string message_;
  std::string reason_;
};

/// The reason of a user kernel's source that did not compile (Status::reason).
inline constexpr const char* kCompileError = "compile_error";

inline Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
inline Status NotFound(std::string m) { return {Code::kNotFound, std::move(m)}; }
inline Status FailedPrecondition(std::string m) {
  return {Code::kFailedPrecondition, std::move(m)};
}
inline Status ResourceExhausted(std::string m) { return {Code::kResourceExhausted, std::move(m)}; }

/// A store or other exception as the core's status: the db's own codes kept, anything else
/// internal (with the text logged, not sent: it may name paths or SQL).
Status StatusFromException(const std::exception& error);

}  // namespace ablation::core
