#include "server/protocol/framing.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include <unistd.h>

namespace ablation::protocol {
namespace {

std::string WriteAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return std::string("write: ") + std::strerror(errno);
    }
    data += w;
    n -= size_t(w);
  }
  return "";
}

// Returns bytes read before EOF (== n when complete), or -1 on error.
ssize_t ReadAll(int fd, char* data, size_t n, std::string* error) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::read(fd, data + got, n - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      *error = std::string("read: ") + std::strerror(errno);
      return -1;
    }
    if (r == 0) break;
    got += size_t(r);
  }
  return ssize_t(got);
}

}  // namespace

std::string WriteMessage(int fd, const google::protobuf::MessageLite& msg) {
  std::string body;
  if (!msg.SerializeToString(&body)) return "serialize failed";
  if (body.size() > kMaxMessageBytes) return "message too large: " + std::to_string(body.size());
  uint32_t len = uint32_t(body.size());
  char header[4] = {char(len & 0xff), char((len >> 8) & 0xff), char((len >> 16) & 0xff),
                    char((len >> 24) & 0xff)};
  // One buffer, one write in the common case: a torn frame is then unlikely even on a crash.
  std::string frame(header, 4);
  frame += body;
  return WriteAll(fd, frame.data(), frame.size());
}

ReadStatus ReadMessage(int fd, google::protobuf::MessageLite* msg, std::string* error) {
  unsigned char header[4];
  ssize_t got = ReadAll(fd, reinterpret_cast<char*>(header), 4, error);
  if (got < 0) return ReadStatus::kError;
  if (got == 0) return ReadStatus::kEof;
  if (got < 4) {
    *error = "truncated frame header";
    return ReadStatus::kError;
  }
  uint32_t len = uint32_t(header[0]) | uint32_t(header[1]) << 8 | uint32_t(header[2]) << 16 |
                 uint32_t(header[3]) << 24;
  if (len > kMaxMessageBytes) {
    *error = "frame too large: " + std::to_string(len);
    return ReadStatus::kError;
  }
  std::string body(len, '\0');
  got = ReadAll(fd, body.data(), len, error);
  if (got < 0) return ReadStatus::kError;
  if (size_t(got) < len) {
    *error = "truncated frame body";
    return ReadStatus::kError;
  }
  if (!msg->ParseFromString(body)) {
    *error = "malformed message";
    return ReadStatus::kError;
  }
  return ReadStatus::kOk;
}

}  // namespace ablation::protocol
