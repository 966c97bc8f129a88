// The audit trail: one JSON object a line for each authentication failure and each privileged
// action (cancelling a run, adding or removing a kernel, locking clocks, reloading the config),
// saying who (token name or certificate, role, peer address), what and when, in the daemon's log
// or a file of its own (--audit-log). Authentication failures are rate limited: past
// kMaxAuthFailuresPerSecond in a second, further failures are answered RESOURCE_EXHAUSTED and
// summed up in one line when the second is over (24,450 wrong tokens in 4 s were all answered and
// none logged before).
//
// The limit is per peer address first (kMaxAuthFailuresPerPeerPerSecond: one caller guessing
// tokens is slowed without slowing another who mistyped one), then for all peers together
// (kMaxAuthFailuresPerSecond, a backstop against guesses from many addresses). A call refused by
// its peer's limit does not count against the backstop. A caller with a valid token never meets
// either: only failing calls are counted and only failing calls are refused.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "server/core/base/status.h"
#include "server/core/setup/auth.h"

namespace ablation::rpc {

class AuditLog {
 public:
  static constexpr int kMaxAuthFailuresPerSecond = 20;
  static constexpr int kMaxAuthFailuresPerPeerPerSecond = 5;

  enum class AuthVerdict {
    kLogged,       ///< audited; answer the failure as it is
    kPeerLimited,  ///< over its address's limit: answer RESOURCE_EXHAUSTED
    kLimited       ///< over the limit of all peers together: answer RESOURCE_EXHAUSTED
  };

  /// The daemon's one audit log.
  static AuditLog& Get();

  /// Lines go to `path` (appended, created 0600) from now on; "" back to the daemon's log.
  core::Status OpenFile(const std::string& path);

  /// A privileged action by `who` from `peer`: `action` ("cancel_run"), `target` ("run 42"),
  /// `outcome` ("ok" or the refusal).
  void Action(std::string_view action, const core::Identity& who, std::string_view peer,
              std::string_view target, std::string_view outcome);
  /// An event of the daemon itself (a reload, a worker that died).
  void Daemon(std::string_view event, std::string_view detail);

  /// An authentication failure of a call to `method` from `peer_address` ("ipv4:127.0.0.1", no
  /// port; "" where it is not known, counted only together). Past a limit the call is to be
  /// answered RESOURCE_EXHAUSTED instead and is not logged one by one.
  AuthVerdict AuthFailure(std::string_view method, std::string_view reason,
                          std::string_view peer_address = "");

  /// For tests: forget the current window.
  void ResetWindow();

 private:
  AuditLog() = default;
  void Write(const std::string& line);
  void CloseWindowLocked(std::chrono::steady_clock::time_point now);

  std::mutex mu_;
  int fd_ = -1;                                           ///< guarded by mu_; -1: the daemon's log
  std::chrono::steady_clock::time_point window_start_{};  ///< guarded by mu_
  int window_failures_ = 0;                               ///< guarded by mu_
  int64_t window_refused_ = 0;                            ///< guarded by mu_
  std::map<std::string, int, std::less<>> window_peers_;  ///< failures per address; mu_
};

}  // namespace ablation::rpc
