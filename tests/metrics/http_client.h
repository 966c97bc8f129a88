// A client of the /metrics endpoint for its tests: plain sockets to the IPv4 or IPv6 loopback, one
// HTTP/1.0 exchange each, and the parts of a response the tests look at.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace ablation::metrics::http_test {

// A TCP connection to the loopback of `family` (127.0.0.1 or ::1) at `port`; -1 when refused.
inline int Connect(int port, int family = AF_INET) {
  int fd = ::socket(family, SOCK_STREAM, 0);
  sockaddr_storage address{};
  socklen_t size = 0;
  if (family == AF_INET6) {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(uint16_t(port));
    v6->sin6_addr = in6addr_loopback;
    size = sizeof *v6;
  } else {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
    v4->sin_family = AF_INET;
    v4->sin_port = htons(uint16_t(port));
    v4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    size = sizeof *v4;
  }
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&address), size) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// One HTTP/1.0 exchange: the whole response, headers and body.
inline std::string Http(int port, const std::string& request_line, const std::string& headers = "",
                        int family = AF_INET) {
  const int fd = Connect(port, family);
  if (fd < 0) return "connect failed";
  const std::string request = request_line + " HTTP/1.0\r\nHost: localhost\r\n" + headers + "\r\n";
  (void)!::write(fd, request.data(), request.size());
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, size_t(n));
  ::close(fd);
  return out;
}

// The status code of a response ("HTTP/1.x 200 OK" -> 200), 0 when it is none. The version is
// libmicrohttpd's (HTTP/1.1 to an HTTP/1.0 request, as RFC 9110 allows), not the request's.
inline int StatusOf(const std::string& response) {
  if (response.rfind("HTTP/1.", 0) != 0 || response.size() < 12) return 0;
  return std::atoi(response.substr(9, 3).c_str());
}

// The body of a response (after its headers), and one header's value ("" when absent).
inline std::string BodyOf(const std::string& response) {
  const size_t end = response.find("\r\n\r\n");
  return end == std::string::npos ? "" : response.substr(end + 4);
}
inline std::string HeaderOf(const std::string& response, const std::string& name) {
  const size_t at = response.find("\r\n" + name + ": ");
  if (at == std::string::npos) return "";
  const size_t from = at + 4 + name.size();
  return response.substr(from, response.find("\r\n", from) - from);
}

// Whether this machine has an IPv6 loopback to test on (containers may have none).
inline bool HasIpv6Loopback() {
  const int fd = ::socket(AF_INET6, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in6 address{};
  address.sin6_family = AF_INET6;
  address.sin6_addr = in6addr_loopback;
  const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return bound;
}

}  // namespace ablation::metrics::http_test
