#include "client/sources/channel.h"

#include <chrono>

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/client_interceptor.h>

#include "client/cli/exit_codes.h"
#include "client/output/output.h"

namespace ablation::client {
namespace {

// Adds the token to every call's metadata. An interceptor, not call credentials: those are
// dropped on a plaintext channel, and a loopback daemon with tokens takes plaintext.
class BearerToken final : public grpc::experimental::Interceptor {
 public:
  explicit BearerToken(const std::string& header) : header_(header) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA))
      methods->GetSendInitialMetadata()->insert({"authorization", header_});
    methods->Proceed();
  }

 private:
  const std::string& header_;
};

class BearerTokenFactory final : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit BearerTokenFactory(std::string token) : header_("Bearer " + std::move(token)) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo* info) override {
    (void)info;
    return new BearerToken(header_);
  }

 private:
  std::string header_;
};

std::string StripScheme(const std::string& server, bool* tls) {
  for (const char* scheme : {"https://", "grpcs://"})
    if (server.rfind(scheme, 0) == 0) {
      *tls = true;
      return server.substr(std::string(scheme).size());
    }
  for (const char* scheme : {"http://", "grpc://"})
    if (server.rfind(scheme, 0) == 0) return server.substr(std::string(scheme).size());
  return server;
}

}  // namespace

std::shared_ptr<grpc::Channel> MakeChannel(const GlobalOptions& global, std::string* error) {
  bool tls = global.tls;
  const std::string target = StripScheme(global.server, &tls);
  std::string token = global.token;
  if (!global.token_file.empty()) {
    if (!ReadFile(global.token_file, &token)) {
      *error = "--token-file: cannot read " + global.token_file;
      return nullptr;
    }
    token = token.substr(0, token.find_first_of("\r\n"));
  }
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (tls) {
    grpc::SslCredentialsOptions ssl;
    const std::pair<const std::string*, std::string*> files[] = {
        {&global.ca_file, &ssl.pem_root_certs},
        {&global.cert_file, &ssl.pem_cert_chain},
        {&global.key_file, &ssl.pem_private_key}};
    for (const auto& [path, pem] : files) {
      if (!path->empty() && !ReadFile(*path, pem)) {
        *error = "cannot read " + *path;
        return nullptr;
      }
    }
    credentials = grpc::SslCredentials(ssl);
  } else if (!global.ca_file.empty() || !global.cert_file.empty()) {
    *error = "--ca/--cert need TLS: use an https:// --server or --tls";
    return nullptr;
  }
  // A run's raw samples (report, show --samples) easily exceed gRPC's 4 MB default: a run of a
  // hundred small shapes holds tens of thousands of samples per measurement.
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  if (!global.tls_server_name.empty()) {
    if (!tls) {
      *error = "--tls-server-name needs TLS: use an https:// --server or --tls";
      return nullptr;
    }
    // An address the certificate does not name (one pod of many, by its IP), checked against the
    // name it does.
    args.SetSslTargetNameOverride(global.tls_server_name);
  }
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> interceptors;
  if (!token.empty()) interceptors.push_back(std::make_unique<BearerTokenFactory>(token));
  return grpc::experimental::CreateCustomChannelWithInterceptors(target, credentials, args,
                                                                 std::move(interceptors));
}

}  // namespace ablation::client
