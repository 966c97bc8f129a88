// The audit trail: one JSON object a line for each authentication failure and each privileged
// action (cancelling a run, adding or removing a kernel, locking clocks, reloading the config),
// saying who (token name or certificate, role, peer address), what and when, in the daemon's log
// or a file of its own (--audit-log). Authentication failures are rate limited: past
// kMaxAuthFailuresPerSecond in a second, further failures are answered RESOURCE_EXHAUSTED and
// summed up in one line when the second is over (24,450 wrong tokens in 4 s were all answered and
// none logged before).
//
// gRPC's AuthMetadataProcessor, where tokens are checked, is not told the caller's address, so a
// failure's line names the method and why, not the peer; and the limit counts every peer's
// failures together. A caller with a valid token never meets it: only failing calls are counted
// and only failing calls are refused.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "server/core/base/status.h"
#include "server/core/setup/auth.h"

namespace ablation::rpc {

class AuditLog {
 public:
  static constexpr int kMaxAuthFailuresPerSecond = 20;

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

  /// An authentication failure of a call to `method`. False when the call is over the rate
  /// limit and is to be answered RESOURCE_EXHAUSTED instead (not logged one by one).
  bool AuthFailure(std::string_view method, std::string_view reason);

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
};

}  // namespace ablation::rpc
