#include "server/rpc/auth.h"

#include <utility>

#include "server/rpc/audit.h"

namespace ablation::rpc {
namespace {

using core::Role;

constexpr std::string_view kService = "/ablation.v1.Ablation/";
// The same methods by what they serve (split_services.h): a method's role is its name's, under
// whichever of these it is called.
constexpr std::string_view kServices[] = {kService, "/ablation.v1.Runs/", "/ablation.v1.Queries/",
                                          "/ablation.v1.Inspection/", "/ablation.v1.Kernels/"};

bool OfTheService(std::string_view path) {
  for (std::string_view prefix : kServices)
    if (path.substr(0, prefix.size()) == prefix) return true;
  return false;
}

// THE table: every method of ablation.v1.Ablation (and of the services that split it) and the
// role it needs. A method added to the
// .proto without a line here needs admin until someone decides.
struct MethodRole {
  std::string_view method;
  Role role;
};
constexpr MethodRole kMethodRoles[] = {
    {"ListVariants", Role::kRead},
    {"GetDevice", Role::kRead},
    {"ListRuns", Role::kRead},
    {"GetRun", Role::kRead},
    {"QueryMeasurements", Role::kRead},
    {"GetHistory", Role::kRead},
    {"GetBudget", Role::kRead},
    {"ListPresets", Role::kRead},
    {"Advise", Role::kRead},
    {"InspectSass", Role::kRead},
    {"WatchRun", Role::kRead},
    {"RunAblation", Role::kRun},
    {"Verify", Role::kRun},
    {"CancelRun", Role::kRun},
    {"Profile", Role::kRun},
    {"ListKernels", Role::kRead},
    {"GetKernel", Role::kRead},
    // Adding needs admin unless the configuration lets the run role (the core decides);
    // removing, the kernel's owner or an admin.
    {"AddKernel", Role::kRun},
    {"RemoveKernel", Role::kRun},
};
// Within a method, what needs more than the method's role.
constexpr std::pair<Action, Role> kActionRoles[] = {
    {Action::kLockClocks, Role::kAdmin},
    {Action::kCancelOthersRun, Role::kAdmin},
};
// Services anyone may call: load balancers and grpcurl ask them before they have credentials.
constexpr std::string_view kPublicServices[] = {"/grpc.health.v1.Health/",
                                                "/grpc.reflection.v1alpha.ServerReflection/",
                                                "/grpc.reflection.v1.ServerReflection/"};

std::string_view ActionText(Action action) {
  switch (action) {
    case Action::kLockClocks:
      return "locking clocks (clocks.mode=lock)";
    case Action::kCancelOthersRun:
      return "cancelling a run someone else asked for";
  }
  return "this";
}

std::string_view Find(const Authorizer::Metadata& metadata, std::string_view key) {
  auto it = metadata.find(grpc::string_ref(key.data(), key.size()));
  if (it == metadata.end()) return {};
  return {it->second.data(), it->second.size()};
}

grpc::Status Refuse(const core::Identity& caller, std::string_view what, Role needed) {
  const std::string need(core::RoleName(needed));
  if (!caller.authenticated) {
    return {grpc::StatusCode::UNAUTHENTICATED,
            std::string(what) + " needs the " + need +
                " role and this call carries no credentials: give the client a token "
                "(--token-file or ABLATION_TOKEN) or a client certificate"};
  }
  return {grpc::StatusCode::PERMISSION_DENIED,
          caller.name + " has the " + std::string(core::RoleName(caller.role)) + " role; " +
              std::string(what) + " needs " + need + " (ask the daemon's operator for a token " +
              "with that role)"};
}

// What a caller past an authentication-failure limit is told (audit.h).
grpc::Status TooManyFailures(AuditLog::AuthVerdict verdict, std::string_view address) {
  if (verdict == AuditLog::AuthVerdict::kPeerLimited)
    return {grpc::StatusCode::RESOURCE_EXHAUSTED,
            "too many failed authentications from " + std::string(address) + " (more than " +
                std::to_string(AuditLog::kMaxAuthFailuresPerPeerPerSecond) +
                " a second): this call was not checked; wait and use a valid token"};
  return {grpc::StatusCode::RESOURCE_EXHAUSTED,
          "too many failed authentications (more than " +
              std::to_string(AuditLog::kMaxAuthFailuresPerSecond) +
              " a second from all callers): this call was not checked; wait and use a valid token"};
}

// A method of the method table: its handler refuses an unauthenticated call itself, where the
// peer is known (Authorizer::Refusal); every other path is refused here.
bool InMethodTable(std::string_view method) {
  if (!OfTheService(method)) return false;
  for (const auto& entry : kMethodRoles)
    if (MethodName(method) == entry.method) return true;
  return false;
}

class TokenProcessor final : public grpc::AuthMetadataProcessor {
 public:
  explicit TokenProcessor(const Authorizer* authorizer) : authorizer_(authorizer) {}
  // Hashing a token and a map lookup: no reason to hop to another thread.
  bool IsBlocking() const override { return false; }
  grpc::Status Process(const InputMetadata& metadata, grpc::AuthContext* context,
                       OutputMetadata* consumed, OutputMetadata* response) override {
    (void)consumed;
    (void)response;
    const std::string_view method = Find(metadata, ":path");
    grpc::Status st = authorizer_->Check(method, metadata, context);
    if (st.error_code() != grpc::StatusCode::UNAUTHENTICATED) return st;
    // gRPC 1.51 tells a processor nothing of the peer, so a call of the method table that
    // fails is let through to its handler, which checks it again knowing the peer and refuses
    // it first thing: the rate limit is then per address (Authorizer::Refusal). (Marking the
    // call on its auth context does not work: the processor's context is the connection's,
    // shared by its later calls.) A status guard (unknown_calls.cc) checks it once more on the
    // way out, and a test calls every method without credentials.
    if (InMethodTable(method)) return grpc::Status::OK;
    // Every authentication failure is audited, up to a rate; past it the caller is told to slow
    // down and the failures are counted, not logged one by one (audit.h).
    const AuditLog::AuthVerdict verdict =
        AuditLog::Get().AuthFailure(MethodName(method), st.error_message());
    return verdict == AuditLog::AuthVerdict::kLogged ? st : TooManyFailures(verdict, "");
  }

 private:
  const Authorizer* authorizer_;
};

}  // namespace

std::string PeerAddress(std::string_view peer) {
  // "ipv4:127.0.0.1:54321" -> "ipv4:127.0.0.1", "ipv6:[::1]:54321" -> "ipv6:[::1]"; a Unix
  // socket's peer ("unix:...") is one local address.
  if (peer.substr(0, 5) == "unix:") return "unix";
  const size_t colon = peer.rfind(':');
  if (colon == std::string_view::npos || colon < 5) return std::string(peer);
  return std::string(peer.substr(0, colon));
}

void GuessGate::RollLocked(std::chrono::steady_clock::time_point now) {
  if (now - window_start_ < std::chrono::seconds(1)) return;
  window_start_ = now;
  failures_ = 0;
  peers_.clear();
}

GuessGate::Verdict GuessGate::Enter(const std::string& address) {
  std::lock_guard lock(mu_);
  RollLocked(std::chrono::steady_clock::now());
  Slots& slots = peers_[address];
  if (slots.taken >= AuditLog::kMaxAuthFailuresPerPeerPerSecond) return Verdict::kPeerLimited;
  if (slots.failed && failures_ >= AuditLog::kMaxAuthFailuresPerSecond) return Verdict::kLimited;
  ++slots.taken;
  return Verdict::kCheck;
}

void GuessGate::Passed(const std::string& address) {
  std::lock_guard lock(mu_);
  auto it = peers_.find(address);
  if (it != peers_.end() && it->second.taken > 0) --it->second.taken;
}

void GuessGate::Failed(const std::string& address) {
  std::lock_guard lock(mu_);
  ++failures_;
  peers_[address].failed = true;
}

grpc::Status Authorizer::Refusal(const grpc::ServerContextBase& context,
                                 std::string_view method) const {
  const std::string address = PeerAddress(context.peer());
  // The gate first: past its limit nothing is checked, and nothing is told of the credentials.
  if (const GuessGate::Verdict gate = gate_.Enter(address); gate != GuessGate::Verdict::kCheck) {
    // Counted in the audit trail's summary of the second (its own limit refuses it unlogged).
    (void)AuditLog::Get().AuthFailure(method, "not checked: too many failures", address);
    return TooManyFailures(gate == GuessGate::Verdict::kPeerLimited
                               ? AuditLog::AuthVerdict::kPeerLimited
                               : AuditLog::AuthVerdict::kLimited,
                           address);
  }
  const std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  grpc::Status st =
      Check(std::string(kService) + std::string(method), context.client_metadata(), auth.get());
  if (st.error_code() != grpc::StatusCode::UNAUTHENTICATED) {
    gate_.Passed(address);
    return grpc::Status::OK;
  }
  gate_.Failed(address);
  const AuditLog::AuthVerdict verdict =
      AuditLog::Get().AuthFailure(method, st.error_message(), address);
  return verdict == AuditLog::AuthVerdict::kLogged ? st : TooManyFailures(verdict, address);
}

std::string_view MethodName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

Authorizer::Authorizer(core::TokenTable tokens, Role anonymous_role, Role client_cert_role)
    : tokens_(std::make_shared<const core::TokenTable>(std::move(tokens))),
      anonymous_role_(anonymous_role),
      client_cert_role_(client_cert_role) {}

Role Authorizer::RequiredRole(std::string_view method) {
  for (std::string_view prefix : kPublicServices)
    if (method.substr(0, prefix.size()) == prefix) return Role::kNone;
  if (OfTheService(method)) {
    for (const auto& [name, role] : kMethodRoles)
      if (MethodName(method) == name) return role;
  }
  return Role::kAdmin;
}

Role Authorizer::RequiredRole(Action action) {
  for (const auto& [a, role] : kActionRoles)
    if (a == action) return role;
  return Role::kAdmin;
}

core::Identity Authorizer::IdentityOf(const Metadata& metadata, const grpc::AuthContext* auth,
                                      std::string* bad_token) const {
  const std::string_view header = Find(metadata, "authorization");
  if (metadata.count(grpc::string_ref("authorization")) > 1) {
    // Which one counts would be up to whoever reads them (the first, here before): a proxy that
    // adds its own header behind the client's must not decide who the caller is.
    *bad_token = "the call carries more than one authorization header: send exactly one";
  } else if (!header.empty()) {
    constexpr std::string_view kBearer = "Bearer ";
    if (header.substr(0, kBearer.size()) != kBearer) {
      *bad_token = "the authorization header must be 'Bearer <token>'";
    } else if (auto identity = Tokens()->Lookup(header.substr(kBearer.size()))) {
      return *identity;
    } else {
      *bad_token = "the bearer token is not one of this daemon's tokens (auth.tokens)";
    }
  }
  // A certificate the TLS handshake verified against tls.client_ca.
  if (auth != nullptr && auth->IsPeerAuthenticated()) {
    auto names = auth->FindPropertyValues("x509_common_name");
    if (!names.empty() && !names.front().empty())
      return {"cert:" + std::string(names.front().data(), names.front().size()), client_cert_role_,
              true};
  }
  return {"anonymous", anonymous_role_, false};
}

core::Identity Authorizer::Caller(const grpc::ServerContextBase& context) const {
  std::string bad_token;
  auto auth = context.auth_context();
  return IdentityOf(context.client_metadata(), auth.get(), &bad_token);
}

grpc::Status Authorizer::Check(std::string_view method, const Metadata& metadata,
                               const grpc::AuthContext* auth) const {
  const Role needed = RequiredRole(method);
  if (needed == Role::kNone) return grpc::Status::OK;
  std::string bad_token;
  const core::Identity caller = IdentityOf(metadata, auth, &bad_token);
  // A wrong token is refused even where anonymous callers are let in: it is a mistake (or a
  // guess) that the caller should hear about.
  if (!bad_token.empty()) return {grpc::StatusCode::UNAUTHENTICATED, bad_token};
  if (caller.role >= needed) return grpc::Status::OK;
  return Refuse(caller, MethodName(method), needed);
}

grpc::Status Authorizer::Allow(Action action, const core::Identity& caller) const {
  const Role needed = RequiredRole(action);
  if (caller.role >= needed) return grpc::Status::OK;
  return Refuse(caller, ActionText(action), needed);
}

std::string Authorizer::MetricsRefusal(std::string_view authorization) const {
  const std::shared_ptr<const core::TokenTable> tokens = Tokens();
  if (tokens->empty()) return "";
  constexpr std::string_view kBearer = "Bearer ";
  std::string why;
  if (authorization.empty()) {
    why =
        "the metrics need a token of the read role (Authorization: Bearer <token>; Prometheus: "
        "`authorization` in the scrape config)";
  } else if (authorization.substr(0, kBearer.size()) != kBearer) {
    why = "the Authorization header must be 'Bearer <token>'";
  } else if (auto identity = tokens->Lookup(authorization.substr(kBearer.size())); !identity) {
    why = "the bearer token is not one of this daemon's tokens (auth.tokens)";
  } else if (identity->role < Role::kRead) {
    why = identity->name + " has no role that may read the metrics";
  }
  if (!why.empty()) (void)AuditLog::Get().AuthFailure("GET /metrics", why);  // refused anyway
  return why;
}

std::shared_ptr<const core::TokenTable> Authorizer::Tokens() const {
  std::lock_guard lock(tokens_mu_);
  return tokens_;
}

void Authorizer::ReplaceTokens(core::TokenTable tokens) {
  auto next = std::make_shared<const core::TokenTable>(std::move(tokens));
  std::lock_guard lock(tokens_mu_);
  tokens_ = std::move(next);
}

std::shared_ptr<grpc::AuthMetadataProcessor> Authorizer::Processor() const {
  return std::make_shared<TokenProcessor>(this);
}

}  // namespace ablation::rpc
