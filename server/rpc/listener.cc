#include "server/rpc/listener.h"

#include <fstream>
#include <sstream>

#include <grpcpp/security/server_credentials.h>

namespace ablation::rpc {
namespace {

using core::FailedPrecondition;
using core::Role;

core::Status ReadPem(const std::string& path, const char* key, std::string* out) {
  std::ifstream in(path);
  if (!in) return FailedPrecondition(std::string(key) + ": cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  if (out->find("-----BEGIN") == std::string::npos)
    return FailedPrecondition(std::string(key) + ": " + path + " holds no PEM block");
  return core::Status::Ok();
}

core::Status TlsCredentials(const core::AuthConfig& auth,
                            std::shared_ptr<grpc::ServerCredentials>* out) {
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  core::Status st = ReadPem(auth.tls_cert, "tls.cert", &pair.cert_chain);
  if (st.ok()) st = ReadPem(auth.tls_key, "tls.key", &pair.private_key);
  if (!st.ok()) return st;
  grpc::SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back(pair);
  if (!auth.client_ca.empty()) {
    if (!(st = ReadPem(auth.client_ca, "tls.client_ca", &options.pem_root_certs)).ok()) return st;
    options.client_certificate_request =
        auth.require_client_cert ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                                 : GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  *out = grpc::SslServerCredentials(options);
  return core::Status::Ok();
}

}  // namespace

bool IsLoopbackAddress(const std::string& address) {
  if (address.rfind("unix:", 0) == 0) return true;
  std::string host = address;
  if (host.rfind("ipv4:", 0) == 0) host = host.substr(5);
  if (host.rfind("ipv6:", 0) == 0) host = host.substr(5);
  if (!host.empty() && host[0] == '[') {
    const size_t close = host.find(']');
    host = close == std::string::npos ? host : host.substr(1, close - 1);
  } else if (const size_t colon = host.rfind(':'); colon != std::string::npos) {
    host = host.substr(0, colon);
  }
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

core::Status MakeListener(const std::string& address, const core::AuthConfig& auth, Listener* out) {
  core::TokenTable tokens;
  if (!auth.tokens_path.empty()) {
    if (core::Status st = core::TokenTable::Load(auth.tokens_path, &tokens); !st.ok()) return st;
  }
  const bool tls = !auth.tls_cert.empty();
  const bool loopback = IsLoopbackAddress(address);
  const bool credentials = !tokens.empty() || !auth.client_ca.empty();
  // Nobody to tell apart: every caller may do everything, as on a workstation. Otherwise a
  // caller without credentials gets what the operator allowed, by default nothing.
  const Role anonymous = auth.anonymous_role.value_or(credentials ? Role::kNone : Role::kAdmin);

  if (!tls && !loopback) {
    if (!auth.insecure_remote) {
      return FailedPrecondition(
          "--listen " + address +
          " can be reached from other machines, and without TLS anyone there could run, cancel "
          "and lock clocks: configure [tls] cert and key (and [auth] tokens), listen on "
          "127.0.0.1, or pass --insecure-remote to accept that");
    }
    if (credentials) {
      return FailedPrecondition(
          "[auth] tokens over --insecure-remote would travel in clear text to " + address +
          ": configure [tls] cert and key, or drop the tokens");
    }
    out->credentials = grpc::InsecureServerCredentials();
    out->description = "plaintext, no authentication (--insecure-remote)";
    out->warnings.push_back("--insecure-remote: " + address +
                            " is served without TLS or authentication; anyone who can reach it "
                            "may queue and cancel runs and lock the GPU's clocks");
    out->authorizer = std::make_unique<Authorizer>(std::move(tokens), Role::kAdmin, Role::kAdmin);
    return core::Status::Ok();
  }

  if (tls) {
    if (core::Status st = TlsCredentials(auth, &out->credentials); !st.ok()) return st;
    out->description = auth.client_ca.empty() ? "TLS" : "TLS with client certificates";
  } else {
    // Plaintext on loopback through local credentials: the same wire protocol as insecure ones
    // (plain clients connect), but a peer that is not local is refused and the token processor
    // below applies.
    out->credentials = grpc::experimental::LocalServerCredentials(
        address.rfind("unix:", 0) == 0 ? UDS : LOCAL_TCP);
    out->description = "plaintext on loopback";
  }
  out->description += ", " + std::to_string(tokens.size()) +
                      " token(s), anonymous callers: " + std::string(core::RoleName(anonymous));
  out->authorizer =
      std::make_unique<Authorizer>(std::move(tokens), anonymous, auth.client_cert_role);
  out->credentials->SetAuthMetadataProcessor(out->authorizer->Processor());
  return core::Status::Ok();
}

}  // namespace ablation::rpc
