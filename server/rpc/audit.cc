#include "server/rpc/audit.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

namespace ablation::rpc {
namespace {

// UTC with milliseconds, as the daemon's log lines carry it.
std::string Now() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const int ms = int(
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
  return buf;
}

nlohmann::json Line(std::string_view event) {
  // Caller-given text (token names, reasons quoting input) is escaped by the JSON writer; a
  // name with a control character or invalid UTF-8 cannot break the line (replaced, not thrown).
  return {{"ts", Now()}, {"audit", std::string(event)}};
}

std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

AuditLog& AuditLog::Get() {
  static AuditLog* log = new AuditLog();  // never destroyed: threads may log during exit
  return *log;
}

core::Status AuditLog::OpenFile(const std::string& path) {
  int fd = -1;
  if (!path.empty()) {
    fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
      return core::FailedPrecondition("--audit-log " + path + ": " + std::strerror(errno));
  }
  std::lock_guard lock(mu_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
  return core::Status::Ok();
}

void AuditLog::Write(const std::string& line) {
  // Under mu_: one line at a time, each with one write() so that lines never interleave.
  if (fd_ < 0) {
    spdlog::info("audit {}", line);
    return;
  }
  const std::string out = line + "\n";
  if (::write(fd_, out.data(), out.size()) != ssize_t(out.size()))
    spdlog::error("audit log: write failed ({}): {}", std::strerror(errno), line);
}

void AuditLog::Action(std::string_view action, const core::Identity& who, std::string_view peer,
                      std::string_view target, std::string_view outcome) {
  nlohmann::json j = Line(action);
  j["who"] = who.name;
  j["role"] = std::string(core::RoleName(who.role));
  j["peer"] = std::string(peer);
  j["target"] = std::string(target);
  j["outcome"] = std::string(outcome);
  std::lock_guard lock(mu_);
  Write(Dump(j));
}

void AuditLog::Daemon(std::string_view event, std::string_view detail) {
  nlohmann::json j = Line(event);
  j["detail"] = std::string(detail);
  std::lock_guard lock(mu_);
  Write(Dump(j));
}

void AuditLog::CloseWindowLocked(std::chrono::steady_clock::time_point now) {
  if (window_refused_ > 0) {
    nlohmann::json j = Line("auth_failures_rate_limited");
    j["failures"] = window_failures_ + window_refused_;
    j["refused_unlogged"] = window_refused_;
    j["window_seconds"] = 1;
    j["limit_per_second"] = kMaxAuthFailuresPerSecond;
    j["limit_per_peer_per_second"] = kMaxAuthFailuresPerPeerPerSecond;
    Write(Dump(j));
  }
  window_start_ = now;
  window_failures_ = 0;
  window_refused_ = 0;
  window_peers_.clear();
}

AuditLog::AuthVerdict AuditLog::AuthFailure(std::string_view method, std::string_view reason,
                                            std::string_view peer_address) {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(mu_);
  if (now - window_start_ >= std::chrono::seconds(1)) CloseWindowLocked(now);
  if (!peer_address.empty()) {
    // One entry per address that failed this second; the map is emptied every second.
    auto it = window_peers_.find(peer_address);
    if (it == window_peers_.end()) it = window_peers_.emplace(std::string(peer_address), 0).first;
    if (it->second >= kMaxAuthFailuresPerPeerPerSecond) {
      ++window_refused_;
      return AuthVerdict::kPeerLimited;
    }
    ++it->second;
  }
  if (window_failures_ >= kMaxAuthFailuresPerSecond) {
    ++window_refused_;
    return AuthVerdict::kLimited;
  }
  ++window_failures_;
  nlohmann::json j = Line("auth_failure");
  j["method"] = std::string(method);
  j["reason"] = std::string(reason);
  if (!peer_address.empty()) j["peer"] = std::string(peer_address);
  Write(Dump(j));
  return AuthVerdict::kLogged;
}

void AuditLog::ResetWindow() {
  std::lock_guard lock(mu_);
  window_start_ = {};
  window_failures_ = 0;
  window_refused_ = 0;
  window_peers_.clear();
}

}  // namespace ablation::rpc
