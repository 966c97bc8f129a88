// Authentication and authorisation of calls, in one place: the role each method needs (and each
// action within a method that needs more), checked by an AuthMetadataProcessor before any
// handler runs, and the caller's identity for the handlers (requested_by, ownership). A call's
// identity comes from its bearer token (`authorization: Bearer ...`), else from a verified TLS
// client certificate, else it is anonymous with the configured anonymous role.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <grpcpp/grpcpp.h>
#include <grpcpp/security/auth_metadata_processor.h>

#include "server/core/setup/auth.h"

namespace ablation::rpc {

/// What a method may do beyond what its role in the method table allows.
enum class Action {
  kLockClocks,      ///< RunAblation with clocks.mode=lock
  kCancelOthersRun  ///< CancelRun of a run someone else asked for
};

/// Guessing slowed before a token is checked. A call of the service takes a check slot of its
/// peer address before its credentials are looked at, and gives it back when they turn out
/// valid; a failed check keeps it until the second ends. So an address gets at most
/// kMaxAuthFailuresPerPeerPerSecond answers to wrong credentials a second, however many calls
/// it sends at once, and past that every call from it is refused unchecked, a right token too
/// (a guess that happens to be right is not told so). Past kMaxAuthFailuresPerSecond failures
/// from all addresses together, an address that failed this second gets no further check.
class GuessGate {
 public:
  enum class Verdict { kCheck, kPeerLimited, kLimited };
  Verdict Enter(const std::string& address);
  /// The credentials were valid: the slot goes back.
  void Passed(const std::string& address);
  /// They were not: the slot stays taken, and the failure counts against all addresses.
  void Failed(const std::string& address);

 private:
  void RollLocked(std::chrono::steady_clock::time_point now);
  std::mutex mu_;
  std::chrono::steady_clock::time_point window_start_{};
  int failures_ = 0;  ///< this second, all addresses
  struct Slots {
    int taken = 0;  ///< checks in flight or failed this second
    bool failed = false;
  };
  std::map<std::string, Slots, std::less<>> peers_;  ///< emptied every second
};

class Authorizer {
 public:
  using Metadata = std::multimap<grpc::string_ref, grpc::string_ref>;

  /// `anonymous_role`: what a caller without credentials may do.
  Authorizer(core::TokenTable tokens, core::Role anonymous_role, core::Role client_cert_role);

  /// The role a full method name ("/ablation.v1.Ablation/RunAblation") needs. Health and
  /// reflection need none; a method missing from the table needs admin (closed by default).
  static core::Role RequiredRole(std::string_view method);
  static core::Role RequiredRole(Action action);

  /// Who the caller is. A token that is not in the table makes `bad_token` say so (and the
  /// identity anonymous); such a call is refused by Check for every method that needs a role.
  core::Identity IdentityOf(const Metadata& metadata, const grpc::AuthContext* auth,
                            std::string* bad_token) const;
  /// The identity for a handler: the same as the processor found.
  core::Identity Caller(const grpc::ServerContextBase& context) const;

  /// OK, UNAUTHENTICATED (no or unknown credentials) or PERMISSION_DENIED (a role too low), each
  /// with a sentence naming the method, the role it needs and what to do.
  grpc::Status Check(std::string_view method, const Metadata& metadata,
                     const grpc::AuthContext* auth) const;
  grpc::Status Allow(Action action, const core::Identity& caller) const;

  /// OK for a call of ablation.v1.Ablation's `method` ("ListRuns") that authenticates (a role
  /// too low is Check's, refused by the processor already); else UNAUTHENTICATED saying why, or
  /// RESOURCE_EXHAUSTED past the failures its peer address (then all peers) may have a second
  /// (audit.h). The processor lets such calls through for this, since it is not told the peer:
  /// every handler of the service asks it first, before anything else.
  grpc::Status Refusal(const grpc::ServerContextBase& context, std::string_view method) const;

  /// The processor to set on the listener's credentials; it calls Check for every call.
  std::shared_ptr<grpc::AuthMetadataProcessor> Processor() const;

  /// For the metrics endpoint: "" when a request with this Authorization header may read the
  /// metrics (no tokens configured, or a token of the read role or above), else why not.
  std::string MetricsRefusal(std::string_view authorization) const;

  /// The token file read again (SIGHUP): calls from now on are checked against `tokens`. The
  /// anonymous role stays what it was decided at start.
  void ReplaceTokens(core::TokenTable tokens);

 private:
  std::shared_ptr<const core::TokenTable> Tokens() const;

  mutable GuessGate gate_;
  mutable std::mutex tokens_mu_;
  std::shared_ptr<const core::TokenTable> tokens_;  ///< guarded by tokens_mu_; never null
  core::Role anonymous_role_;
  core::Role client_cert_role_;
};

/// A peer's address without its port, the key of the per-peer limits: "ipv4:127.0.0.1:54321" ->
/// "ipv4:127.0.0.1"; every Unix-socket peer is "unix".
std::string PeerAddress(std::string_view peer);

/// The method name of a call's full path: "/ablation.v1.Ablation/CancelRun" -> "CancelRun".
std::string_view MethodName(std::string_view path);

}  // namespace ablation::rpc
