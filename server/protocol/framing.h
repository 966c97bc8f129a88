// Framing of the daemon <-> worker messages over pipes: a 4-byte little-endian length, then the
// serialized message. Used on both sides (server/core's supervisor and the worker process).
#pragma once

#include <string>

#include <google/protobuf/message_lite.h>

namespace ablation::protocol {

/// Largest message accepted (raw samples of a long measurement fit easily).
inline constexpr uint32_t kMaxMessageBytes = 64u << 20;

/// Writes one framed message. Returns "" or what failed (errno text).
std::string WriteMessage(int fd, const google::protobuf::MessageLite& msg);

enum class ReadStatus { kOk, kEof, kError };

/// Reads one framed message, blocking. kEof: the peer closed the pipe before a new frame began.
ReadStatus ReadMessage(int fd, google::protobuf::MessageLite* msg, std::string* error);

}  // namespace ablation::protocol
