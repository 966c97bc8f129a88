// The daemon as a hostile client meets it, end to end over real gRPC: calls without a token,
// with a wrong one or with too low a role; a spoofed requested_by; TLS with a CA made here with
// openssl; a listener other machines could reach. The fake worker stands in for the GPU.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gmock/gmock.h>
#include <google/protobuf/descriptor.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "db/store.h"
#include "tests/e2e/harness.h"
#include "tests/support/test_paths.h"

namespace ablation::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kReadToken = "read-token-0123456789abcdef";
constexpr const char* kRunToken = "run-token-0123456789abcdef";
constexpr const char* kOtherRunToken = "other-run-token-0123456789";
constexpr const char* kAdminToken = "admin-token-0123456789abcdef";

void WriteFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class Security : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    ASSERT_FALSE(dir_.empty());
    // The token file as an operator makes it: one `ablationd --hash-token` line per token.
    std::string tokens;
    for (const auto& [token, who] :
         {std::pair{kReadToken, "reader:read"}, std::pair{kRunToken, "alice:run"},
          std::pair{kOtherRunToken, "bob:run"}, std::pair{kAdminToken, "root:admin"}}) {
      WriteFile(dir_ + "/token.in", std::string(token) + "\n");
      CommandResult line = RunCommand(
          {"/bin/sh", "-c",
           TestBinary(ABLATIOND_PATH) + " --hash-token " + who + " < " + dir_ + "/token.in"});
      ASSERT_EQ(line.exit_code, 0) << line.err;
      tokens += line.out;
    }
    WriteFile(dir_ + "/tokens", tokens);
  }
  void TearDown() override {
    if (daemon_) daemon_->Stop(SIGTERM);
    std::filesystem::remove_all(dir_);
  }

  // A daemon with the token file (and `extra` config), anonymous callers allowed nothing.
  void StartDaemon(const std::string& extra = "", std::map<std::string, std::string> env = {},
                   std::vector<std::string> more_args = {}) {
    WriteFile(dir_ + "/ablationd.toml", "[auth]\ntokens = \"tokens\"\n" + extra);
    daemon_ = std::make_unique<Daemon>(dir_, FAKE_WORKER_PATH, std::move(env));
    more_args.insert(more_args.begin(), {"--config", dir_ + "/ablationd.toml"});
    daemon_->set_extra_args(std::move(more_args));
    ASSERT_EQ(daemon_->Start(), "");
  }

  grpc::Status RunAs(const char* token, const v1::RunRequest& request,
                     std::vector<v1::RunEvent>* events = nullptr) {
    auto stub = daemon_->Stub();
    grpc::ClientContext ctx;
    if (token) ctx.AddMetadata("authorization", std::string("Bearer ") + token);
    auto reader = stub->RunAblation(&ctx, request);
    v1::RunEvent event;
    while (reader->Read(&event))
      if (events) events->push_back(event);
    return reader->Finish();
  }

  static v1::RunRequest SmallRun() {
    v1::RunRequest request;
    request.add_variants("cublas_bf16");
    auto* shape = request.add_shapes();
    shape->set_m(256);
    shape->set_n(256);
    shape->set_k(256);
    request.mutable_timing()->set_min_seconds(0.001);
    return request;
  }

  // Sends SIGHUP and waits for the n-th reload's line (or refusal) in the log.
  void Reload(int n) {
    EXPECT_EQ(::kill(daemon_->pid(), SIGHUP), 0);
    for (int i = 0; i < 50; ++i) {
      const std::string log = ReadAll(dir_ + "/daemon.out");  // spdlog's lines: stdout
      size_t seen = 0;
      for (size_t at = 0; (at = log.find("SIGHUP: ", at)) != std::string::npos; ++at)
        if (log.compare(at, 30, "SIGHUP: configuration reloaded") == 0 ||
            log.compare(at, 22, "SIGHUP: reload refused") == 0)
          ++seen;
      if (int(seen) >= n) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "no reload in the log:\n" << ReadAll(dir_ + "/daemon.out");
  }

  std::string dir_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(Security, WithoutATokenQueriesAndRunsAreUnauthenticatedButHealthAnswers) {
  StartDaemon();
  auto stub = daemon_->Stub();
  grpc::ClientContext ctx;
  v1::ListRunsResponse runs;
  grpc::Status st = stub->ListRuns(&ctx, v1::ListRunsRequest(), &runs);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(st.error_message(), HasSubstr("ListRuns needs the read role"));
  st = RunAs(nullptr, SmallRun());
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(st.error_message(), HasSubstr("--token-file or ABLATION_TOKEN"));

  auto bad = daemon_->Client({"runs"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.err, HasSubstr("UNAUTHENTICATED"));
  // The client's token from the environment.
  auto with_token = RunCommand({TestBinary(CLIENT_PATH), "--server", daemon_->address(), "runs"},
                               {{"ABLATION_TOKEN", kReadToken}});
  EXPECT_EQ(with_token.exit_code, 0) << with_token.err;
  EXPECT_FALSE(db::Store::OpenReadOnly(daemon_->db_path())->LatestRun().has_value());
}

TEST_F(Security, AnUnknownTokenIsRefusedEvenForReads) {
  StartDaemon("anonymous_role = \"read\"\n");
  auto stub = daemon_->Stub();
  grpc::ClientContext ctx;
  ctx.AddMetadata("authorization", "Bearer guessed-0123456789abcdef");
  v1::ListRunsResponse runs;
  grpc::Status st = stub->ListRuns(&ctx, v1::ListRunsRequest(), &runs);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(st.error_message(), HasSubstr("not one of this daemon's tokens"));
  // With anonymous_role = read, a caller without a token reads but does not run.
  grpc::ClientContext anon;
  EXPECT_TRUE(stub->ListRuns(&anon, v1::ListRunsRequest(), &runs).ok());
  EXPECT_EQ(RunAs(nullptr, SmallRun()).error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(Security, EachRoleDoesWhatItMayAndIsToldWhatItMayNot) {
  StartDaemon();
  // read: queries yes, runs no.
  grpc::Status st = RunAs(kReadToken, SmallRun());
  EXPECT_EQ(st.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(st.error_message(), HasSubstr("reader has the read role; RunAblation needs run"));
  // run: runs yes, clock locks no.
  std::vector<v1::RunEvent> events;
  EXPECT_TRUE(RunAs(kRunToken, SmallRun(), &events).ok());
  v1::RunRequest locked = SmallRun();
  locked.mutable_clocks()->set_mode(v1::CLOCK_MODE_LOCK);
  locked.mutable_clocks()->set_sm_mhz("max");
  st = RunAs(kRunToken, locked);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(st.error_message(), HasSubstr("locking clocks (clocks.mode=lock) needs admin"));
  // admin may ask for the lock (this daemon has no NVML, so the core then refuses it).
  st = RunAs(kAdminToken, locked);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << st.error_message();
}

TEST_F(Security, RequestedByIsTheCallersIdentityNeverTheRequests) {
  StartDaemon();
  v1::RunRequest request = SmallRun();
  request.set_requested_by("root@prod (spoofed)");
  std::vector<v1::RunEvent> events;
  ASSERT_TRUE(RunAs(kRunToken, request, &events).ok());
  auto run = db::Store::OpenReadOnly(daemon_->db_path())->LatestRun();
  ASSERT_TRUE(run);
  EXPECT_EQ(run->requested_by(), "alice");
  EXPECT_THAT(run->request_json(), Not(HasSubstr("spoofed")));
}

TEST_F(Security, RunRoleCancelsOnlyItsOwnRunsAdminCancelsAny) {
  StartDaemon("", {{"ABLATION_FAKE_SLEEP_MS", "500"}});
  v1::RunRequest request = SmallRun();
  request.set_rounds(20);  // ~10 s: long enough to be cancelled
  auto stub = daemon_->Stub();
  grpc::ClientContext ctx;
  ctx.AddMetadata("authorization", std::string("Bearer ") + kRunToken);
  auto reader = stub->RunAblation(&ctx, request);
  v1::RunEvent event;
  ASSERT_TRUE(reader->Read(&event));
  ASSERT_TRUE(event.has_queued());
  const int64_t run_id = event.queued().run_id();
  auto cancel = [&](const char* token) {
    grpc::ClientContext c;
    c.AddMetadata("authorization", std::string("Bearer ") + token);
    v1::CancelRunRequest req;
    req.set_run_id(run_id);
    v1::CancelRunResponse resp;
    return stub->CancelRun(&c, req, &resp);
  };
  grpc::Status st = cancel(kOtherRunToken);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(st.error_message(), HasSubstr("is not yours"));
  EXPECT_TRUE(cancel(kAdminToken).ok());
  while (reader->Read(&event)) {
  }
  EXPECT_TRUE(reader->Finish().ok());
  EXPECT_EQ(event.finished().state(), v1::RUN_STATE_CANCELLED);
  EXPECT_TRUE(cancel(kRunToken).ok()) << "its owner may cancel it too (it is over by now)";
}

TEST_F(Security, TlsWithATestCaAndTheClientsHttpsScheme) {
  // A CA and a server certificate for 127.0.0.1, made now.
  const std::string script =
      "set -e; cd " + dir_ +
      "; openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 1 "
      "-subj /CN=test-ca 2>/dev/null"
      "; openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr "
      "-subj /CN=127.0.0.1 2>/dev/null"
      "; printf 'subjectAltName=IP:127.0.0.1,DNS:localhost' > san.ext"
      "; openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
      "-out server.pem -days 1 -extfile san.ext 2>/dev/null";
  CommandResult made = RunCommand({"/bin/sh", "-c", script});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  StartDaemon("[tls]\ncert = \"server.pem\"\nkey = \"server.key\"\n");
  std::ifstream log(dir_ + "/daemon.out");  // spdlog writes to stdout
  EXPECT_THAT(std::string(std::istreambuf_iterator<char>(log), {}), HasSubstr("TLS, 4 token(s)"));

  grpc::SslCredentialsOptions ssl;
  std::ifstream in(dir_ + "/ca.pem");
  ssl.pem_root_certs.assign(std::istreambuf_iterator<char>(in), {});
  auto channel = grpc::CreateChannel(daemon_->address(), grpc::SslCredentials(ssl));
  auto stub = v1::Ablation::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.AddMetadata("authorization", std::string("Bearer ") + kReadToken);
  v1::ListRunsResponse runs;
  EXPECT_TRUE(stub->ListRuns(&ctx, v1::ListRunsRequest(), &runs).ok());

  // Plaintext to a TLS port does not get through.
  auto plain = daemon_->Stub();
  grpc::ClientContext pctx;
  pctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  pctx.AddMetadata("authorization", std::string("Bearer ") + kReadToken);
  EXPECT_FALSE(plain->ListRuns(&pctx, v1::ListRunsRequest(), &runs).ok());

  WriteFile(dir_ + "/client.token", std::string(kRunToken) + "\n");
  CommandResult run =
      RunCommand({TestBinary(CLIENT_PATH), "--server", "https://" + daemon_->address(), "--ca",
                  dir_ + "/ca.pem", "--token-file", dir_ + "/client.token", "run", "--variant",
                  "cublas_bf16", "--shape", "256"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(db::Store::OpenReadOnly(daemon_->db_path())->LatestRun()->requested_by(), "alice");
}

TEST_F(Security, AListenerOtherMachinesReachIsRefusedWithoutTlsUnlessInsecureRemote) {
  const std::vector<std::string> base = {
      TestBinary(ABLATIOND_PATH),  "--listen", "0.0.0.0:0", "--db", dir_ + "/r.db", "--worker",
      TestBinary(FAKE_WORKER_PATH)};
  CommandResult refused = RunCommand(base, {}, 60);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("can be reached from other machines"));
  EXPECT_THAT(refused.err, HasSubstr("--insecure-remote"));
  // Tokens in clear text to another machine are refused even with --insecure-remote.
  WriteFile(dir_ + "/remote.toml", "[auth]\ntokens = \"tokens\"\n");
  std::vector<std::string> with_tokens = base;
  with_tokens.insert(with_tokens.end(), {"--insecure-remote", "--config", dir_ + "/remote.toml"});
  CommandResult clear = RunCommand(with_tokens, {}, 60);
  EXPECT_EQ(clear.exit_code, 2);
  EXPECT_THAT(clear.err, HasSubstr("would travel in clear text"));
}

TEST_F(Security, InsecureRemoteWarnsAtEveryStart) {
  // The harness listens on 127.0.0.1; the warning is about a 0.0.0.0 listener, checked through
  // a short-lived daemon that binds one and is stopped at once.
  const std::string cmd = TestBinary(ABLATIOND_PATH) +
                          " --listen 0.0.0.0:0 --insecure-remote --db " + dir_ + "/w.db --worker " +
                          TestBinary(FAKE_WORKER_PATH) + " --port-file " + dir_ +
                          "/w.port & pid=$!; for i in $(seq 100); do [ -s " + dir_ +
                          "/w.port ] && break; sleep 0.1; done; kill -TERM $pid; wait $pid";
  CommandResult r = RunCommand({"/bin/sh", "-c", cmd}, {}, 60);
  EXPECT_THAT(r.out, HasSubstr("--insecure-remote: 0.0.0.0:0 is served without TLS"));
}

TEST_F(Security, TwoAuthorizationHeadersAreRefused) {
  StartDaemon();
  auto stub = daemon_->Stub();
  grpc::ClientContext ctx;
  ctx.AddMetadata("authorization", std::string("Bearer ") + kReadToken);
  ctx.AddMetadata("authorization", std::string("Bearer ") + kAdminToken);
  v1::ListRunsResponse runs;
  grpc::Status st = stub->ListRuns(&ctx, v1::ListRunsRequest(), &runs);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(st.error_message(), HasSubstr("more than one authorization header"));
}

// Wrong tokens are audited one line each up to the rate limit; past it they are answered
// RESOURCE_EXHAUSTED and summed up in one line; a valid token from the same address gets
// through once the second is over (within it, it is refused unchecked like a guess).
TEST_F(Security, AuthenticationFailuresAreAuditedAndRateLimited) {
  StartDaemon("", {}, {"--audit-log", dir_ + "/audit"});
  auto stub = daemon_->Stub();
  int unauthenticated = 0, exhausted = 0;
  for (int i = 0; i < 200; ++i) {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "Bearer guess-" + std::to_string(i));
    v1::ListRunsResponse runs;
    grpc::Status st = stub->ListRuns(&ctx, v1::ListRunsRequest(), &runs);
    if (st.error_code() == grpc::StatusCode::UNAUTHENTICATED) ++unauthenticated;
    if (st.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      ++exhausted;
      EXPECT_THAT(st.error_message(), HasSubstr("too many failed authentications"));
    }
  }
  EXPECT_GE(unauthenticated, 5);  // the limit of one peer address a second (audit.h)
  EXPECT_GT(exhausted, 0);
  EXPECT_EQ(unauthenticated + exhausted, 200);
  v1::ListRunsResponse runs;
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  grpc::ClientContext ok_ctx;
  ok_ctx.AddMetadata("authorization", std::string("Bearer ") + kReadToken);
  EXPECT_TRUE(stub->ListRuns(&ok_ctx, v1::ListRunsRequest(), &runs).ok());
  {  // a failure in the next window closes the last one with its summary
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "Bearer late-guess");
    (void)stub->ListRuns(&ctx, v1::ListRunsRequest(), &runs);
  }
  const std::string audit = ReadAll(dir_ + "/audit");
  EXPECT_THAT(audit, HasSubstr(R"("audit":"auth_failure")"));
  EXPECT_THAT(audit, HasSubstr(R"("method":"ListRuns")"));
  EXPECT_THAT(audit, HasSubstr(R"("audit":"auth_failures_rate_limited")"));
  EXPECT_THAT(audit, Not(HasSubstr("guess-1")));  // tokens are never written
  struct stat st {};
  ASSERT_EQ(::stat((dir_ + "/audit").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
}

// Who cancelled a run is stored with it, and the audit log has who, from where and what.
TEST_F(Security, ACancelIsAuditedAndStoredWithTheRun) {
  StartDaemon("", {{"ABLATION_FAKE_SLEEP_MS", "500"}}, {"--audit-log", dir_ + "/audit"});
  v1::RunRequest request = SmallRun();
  request.set_rounds(20);
  auto stub = daemon_->Stub();
  grpc::ClientContext ctx;
  ctx.AddMetadata("authorization", std::string("Bearer ") + kRunToken);
  auto reader = stub->RunAblation(&ctx, request);
  v1::RunEvent event;
  ASSERT_TRUE(reader->Read(&event));
  const int64_t run_id = event.queued().run_id();
  grpc::ClientContext c;
  c.AddMetadata("authorization", std::string("Bearer ") + kAdminToken);
  v1::CancelRunRequest cancel;
  cancel.set_run_id(run_id);
  v1::CancelRunResponse response;
  ASSERT_TRUE(stub->CancelRun(&c, cancel, &response).ok());
  while (reader->Read(&event)) {
  }
  EXPECT_TRUE(reader->Finish().ok());
  auto run = db::Store::OpenReadOnly(daemon_->db_path())->GetRun(run_id);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->state(), v1::RUN_STATE_CANCELLED);
  EXPECT_EQ(run->requested_by(), "alice");
  EXPECT_EQ(run->cancelled_by(), "root");
  const std::string audit = ReadAll(dir_ + "/audit");
  EXPECT_THAT(audit, HasSubstr(R"("audit":"cancel_run")"));
  EXPECT_THAT(audit, HasSubstr(R"("who":"root")"));
  EXPECT_THAT(audit, HasSubstr(R"("role":"admin")"));
  EXPECT_THAT(audit, HasSubstr(R"("peer":"ipv4:127.0.0.1:)"));
  EXPECT_THAT(audit, HasSubstr(R"("target":"run )" + std::to_string(run_id) + "\""));
}

// A TCP relay on 127.0.0.1 whose connections reach `port` from `source` (another loopback
// address), so that one test can call the daemon from two peer addresses.
class Relay {
 public:
  Relay(int port, const char* source) : port_(port), source_(source) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listener_, 16) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
      return;
    local_port_ = ntohs(addr.sin_port);
    accepter_ = std::thread([this] { Accept(); });
  }
  ~Relay() {
    ::shutdown(listener_, SHUT_RDWR);
    ::close(listener_);
    if (accepter_.joinable()) accepter_.join();
    for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
    for (auto& t : pipes_) t.join();
    for (int fd : fds_) ::close(fd);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(local_port_); }

 private:
  void Accept() {
    for (;;) {
      const int client = ::accept(listener_, nullptr, nullptr);
      if (client < 0) return;
      const int upstream = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in from{}, to{};
      from.sin_family = to.sin_family = AF_INET;
      ::inet_pton(AF_INET, source_, &from.sin_addr);
      to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      to.sin_port = htons(uint16_t(port_));
      if (::bind(upstream, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0 ||
          ::connect(upstream, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
        ::close(client);
        ::close(upstream);
        continue;
      }
      fds_.push_back(client);
      fds_.push_back(upstream);
      pipes_.emplace_back([=] { Pipe(client, upstream); });
      pipes_.emplace_back([=] { Pipe(upstream, client); });
    }
  }
  static void Pipe(int from, int to) {
    char buffer[65536];
    for (ssize_t n; (n = ::recv(from, buffer, sizeof buffer, 0)) > 0;)
      if (::send(to, buffer, size_t(n), MSG_NOSIGNAL) != n) break;
    ::shutdown(to, SHUT_WR);
  }

  int port_;
  const char* source_;
  int listener_ = -1;
  int local_port_ = 0;
  std::thread accepter_;
  std::vector<int> fds_;  ///< written by the accepter only, read after it is joined
  std::vector<std::thread> pipes_;
};

// The failed-authentication limit is per peer address (then a backstop for all together): a
// caller at 127.0.0.2 guessing tokens is refused RESOURCE_EXHAUSTED past 5 a second, while a
// caller at 127.0.0.1 who mistyped a token is still told why, and a valid token works from both.
// Keyed on the address, not the connection, so that reconnecting does not reset it.
TEST_F(Security, TheFailedAuthenticationLimitIsPerPeerAddress) {
  StartDaemon("", {}, {"--audit-log", dir_ + "/audit"});
  Relay relay(daemon_->port(), "127.0.0.2");
  auto list = [](const std::string& address, const std::string& token) {
    auto stub =
        v1::Ablation::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "Bearer " + token);
    v1::ListRunsResponse runs;
    return stub->ListRuns(&ctx, v1::ListRunsRequest(), &runs);
  };
  int unauthenticated = 0, exhausted = 0;
  std::string limited;
  for (int i = 0; i < 40; ++i) {
    grpc::Status st = list(relay.address(), "guess-" + std::to_string(i));
    if (st.error_code() == grpc::StatusCode::UNAUTHENTICATED) ++unauthenticated;
    if (st.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      ++exhausted;
      limited = st.error_message();
    }
  }
  EXPECT_GE(unauthenticated, 5);
  EXPECT_LT(unauthenticated, 20) << "the guesses were not limited per address";
  EXPECT_GT(exhausted, 0);
  EXPECT_THAT(limited, HasSubstr("too many failed authentications from ipv4:127.0.0.2"));
  // The other address, in the same second: its mistake is answered, not limited.
  grpc::Status typo = list(daemon_->address(), "a-typo");
  EXPECT_EQ(typo.error_code(), grpc::StatusCode::UNAUTHENTICATED) << typo.error_message();
  EXPECT_THAT(typo.error_message(), HasSubstr("not one of this daemon's tokens"));
  EXPECT_TRUE(list(daemon_->address(), kReadToken).ok());
  // From the limited address, while it is limited, a right token is refused unchecked too (a
  // guess that happens to be right is not told so); a second later it is answered. "While": the
  // right token goes at once after a guess that was refused, since on a loaded machine the calls
  // above may outlast the second the limit counts in; and again, up to 5 times, where it was
  // answered, since even the one call between them may cross into the next second (seen once with
  // both cores compiling). A limit that does not hold refuses none of the 5.
  grpc::Status right(grpc::StatusCode::UNKNOWN, "no guess was refused");
  for (int attempt = 0, i = 0; attempt < 5 && i < 100; ++i) {
    if (list(relay.address(), "again-" + std::to_string(i)).error_code() !=
        grpc::StatusCode::RESOURCE_EXHAUSTED)
      continue;
    right = list(relay.address(), kReadToken);
    if (right.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) break;
    ++attempt;
  }
  EXPECT_EQ(right.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << right.error_message();
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  EXPECT_TRUE(list(relay.address(), kReadToken).ok());
  EXPECT_THAT(ReadAll(dir_ + "/audit"), HasSubstr(R"("peer":"ipv4:127.0.0.2")"));
}

// Guesses sent at once (the hostile probe checked 20,818 in 4 s before its limit engaged): a
// check takes its address's slot before the token is looked at, so 64 guesses in flight together
// get at most 5 answers about their tokens, whatever the timing.
TEST_F(Security, GuessesSentAtOnceGetNoMoreAnswersThanTheLimit) {
  StartDaemon();
  Relay relay(daemon_->port(), "127.0.0.2");
  auto channel = grpc::CreateChannel(relay.address(), grpc::InsecureChannelCredentials());
  std::atomic<int> unauthenticated{0}, exhausted{0}, other{0};
  std::vector<std::thread> guessers;
  for (int i = 0; i < 64; ++i)
    guessers.emplace_back([&, i] {
      auto stub = v1::Ablation::NewStub(channel);
      grpc::ClientContext ctx;
      ctx.AddMetadata("authorization", "Bearer guess-" + std::to_string(i));
      v1::ListRunsResponse runs;
      const grpc::StatusCode code = stub->ListRuns(&ctx, v1::ListRunsRequest(), &runs).error_code();
      if (code == grpc::StatusCode::UNAUTHENTICATED)
        ++unauthenticated;
      else if (code == grpc::StatusCode::RESOURCE_EXHAUSTED)
        ++exhausted;
      else
        ++other;
    });
  for (std::thread& t : guessers) t.join();
  EXPECT_LE(unauthenticated.load(), 2 * 5) << "more answers than the limit (two windows at most)";
  EXPECT_GE(unauthenticated.load(), 1);
  EXPECT_EQ(unauthenticated + exhausted, 64);
  EXPECT_EQ(other.load(), 0);
}

// Every method of every service refuses a call without credentials before doing anything: the
// processor leaves the refusal of the method table's calls to their handlers (where the peer is
// known), so each handler must ask first. Streams and unary calls alike, through the generic stub.
TEST_F(Security, EveryMethodRefusesACallWithoutCredentials) {
  StartDaemon();
  auto channel = grpc::CreateChannel(daemon_->address(), grpc::InsecureChannelCredentials());
  grpc::GenericStub generic(channel);
  int methods = 0;
  for (const char* name : {"ablation.v1.Ablation", "ablation.v1.Runs", "ablation.v1.Queries",
                           "ablation.v1.Inspection", "ablation.v1.Kernels"}) {
    const google::protobuf::ServiceDescriptor* service =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(name);
    ASSERT_NE(service, nullptr) << name;
    for (int i = 0; i < service->method_count(); ++i, ++methods) {
      const std::string path = "/" + std::string(name) + "/" + service->method(i)->name();
      SCOPED_TRACE(path);
      grpc::CompletionQueue cq;
      grpc::ClientContext ctx;
      grpc::ByteBuffer request;  // an empty message of any type
      grpc::Slice empty("");
      request = grpc::ByteBuffer(&empty, 1);
      grpc::Status st;
      grpc::ByteBuffer response;
      void* tag = nullptr;
      bool ok = false;
      if (service->method(i)->server_streaming()) {
        auto call = generic.PrepareCall(&ctx, path, &cq);
        call->StartCall(reinterpret_cast<void*>(1));
        cq.Next(&tag, &ok);
        call->Write(request, reinterpret_cast<void*>(2));
        cq.Next(&tag, &ok);
        call->WritesDone(reinterpret_cast<void*>(3));
        cq.Next(&tag, &ok);
        call->Read(&response, reinterpret_cast<void*>(4));
        cq.Next(&tag, &ok);
        EXPECT_FALSE(ok) << "a message was sent";
        call->Finish(&st, reinterpret_cast<void*>(5));
        cq.Next(&tag, &ok);
      } else {
        auto call = generic.PrepareUnaryCall(&ctx, path, request, &cq);
        call->StartCall();
        call->Finish(&response, &st, reinterpret_cast<void*>(1));
        cq.Next(&tag, &ok);
      }
      EXPECT_TRUE(st.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
                  st.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED)
          << st.error_code() << " " << st.error_message();
      if (st.error_code() == grpc::StatusCode::UNAUTHENTICATED)
        EXPECT_THAT(st.error_message(), HasSubstr("carries no credentials"));
      cq.Shutdown();
      while (cq.Next(&tag, &ok)) {
      }
    }
  }
  // Ablation's 19 methods, and each again under the service that serves it.
  EXPECT_EQ(methods, 2 * 19);
  // A body that does not parse runs no handler: still the refusal, not the parse error.
  {
    grpc::CompletionQueue cq;
    grpc::ClientContext ctx;
    grpc::Slice garbage(std::string("\xff\xff\xff\xff\x0f not a message"));
    grpc::ByteBuffer request(&garbage, 1), response;
    grpc::Status st;
    auto call = generic.PrepareUnaryCall(&ctx, "/ablation.v1.Ablation/ListRuns", request, &cq);
    call->StartCall();
    call->Finish(&response, &st, reinterpret_cast<void*>(1));
    void* tag = nullptr;
    bool ok = false;
    cq.Next(&tag, &ok);
    EXPECT_TRUE(st.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
                st.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED)
        << st.error_code() << " " << st.error_message();
    cq.Shutdown();
    while (cq.Next(&tag, &ok)) {
    }
  }
  EXPECT_FALSE(db::Store::OpenReadOnly(daemon_->db_path())->LatestRun().has_value());
}

// SIGHUP reads the token file again instead of ending the daemon: the old token is refused, the
// new one accepted, and the reload is audited.
TEST_F(Security, SighupReloadsTheTokensInsteadOfKillingTheDaemon) {
  StartDaemon("", {}, {"--audit-log", dir_ + "/audit"});
  auto list = [&](const std::string& token) {
    auto stub = daemon_->Stub();
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "Bearer " + token);
    v1::ListRunsResponse runs;
    return stub->ListRuns(&ctx, v1::ListRunsRequest(), &runs);
  };
  ASSERT_TRUE(list(kReadToken).ok());
  const std::string fresh = "fresh-token-0123456789abcdef";
  WriteFile(dir_ + "/token.in", fresh + "\n");
  CommandResult line =
      RunCommand({"/bin/sh", "-c",
                  TestBinary(ABLATIOND_PATH) + " --hash-token carol:read < " + dir_ + "/token.in"});
  ASSERT_EQ(line.exit_code, 0) << line.err;
  WriteFile(dir_ + "/tokens", line.out);  // only carol now
  ASSERT_EQ(::kill(daemon_->pid(), SIGHUP), 0);
  bool reloaded = false;
  for (int i = 0; i < 50 && !reloaded; ++i) {
    reloaded = list(fresh).ok();
    if (!reloaded) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(reloaded);
  EXPECT_EQ(list(kReadToken).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(::kill(daemon_->pid(), 0), 0) << "SIGHUP ended the daemon";
  EXPECT_THAT(ReadAll(dir_ + "/audit"), HasSubstr(R"("audit":"config_reload")"));
  // A broken token file keeps the tokens in force.
  WriteFile(dir_ + "/tokens", "not a token line\n");
  ASSERT_EQ(::kill(daemon_->pid(), SIGHUP), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_TRUE(list(fresh).ok());
  EXPECT_THAT(ReadAll(dir_ + "/audit"), HasSubstr("refused"));
}

// SIGHUP reads the whole configuration again, not only the tokens: the limits of new calls and
// the log level take effect; a setting that needs a restart (here readers) is named in the log and
// stays; the audit log is reopened (logrotate moved it); a configuration that does not load keeps
// everything in force and says why.
TEST_F(Security, SighupReloadsTheLimitsAndNamesWhatNeedsARestart) {
  StartDaemon("[limits]\nmax_measurements_per_run = 100\n", {}, {"--audit-log", dir_ + "/audit"});
  auto profile_all = [&] {
    auto stub = daemon_->Stub();
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", std::string("Bearer ") + kRunToken);
    v1::ProfileRequest request;
    request.add_variants("abl_*");  // 128 profiles
    v1::ProfileResponse response;
    return stub->Profile(&ctx, request, &response);
  };
  grpc::Status st = profile_all();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << st.error_message();
  EXPECT_THAT(st.error_message(), HasSubstr("max_measurements_per_run"));

  std::filesystem::rename(dir_ + "/audit", dir_ + "/audit.1");  // as logrotate does
  WriteFile(dir_ + "/ablationd.toml",
            "log_level = \"debug\"\nreaders = 2\n[auth]\ntokens = \"tokens\"\n"
            "[limits]\nmax_measurements_per_run = 1000\nmax_runs_per_identity = 5\n");
  Reload(1);
  st = profile_all();  // within the limit now: refused later, for want of ncu here
  EXPECT_NE(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << st.error_message();
  const std::string log = ReadAll(dir_ + "/daemon.out");
  EXPECT_THAT(log, HasSubstr("SIGHUP: readers (4 -> 2) changed and needs a restart; the running "
                             "value stays"));
  EXPECT_THAT(log, HasSubstr("log level debug, limits: 1000 measurements"));
  EXPECT_THAT(log, HasSubstr("5 runs per caller"));
  EXPECT_THAT(ReadAll(dir_ + "/audit"), HasSubstr(R"("audit":"config_reload")"));

  // A configuration that does not load: refused as a whole, the limits in force stay.
  WriteFile(dir_ + "/ablationd.toml",
            "[auth]\ntokens = \"tokens\"\n[limits]\nmax_measurements_per_run = 0\n");
  Reload(2);
  EXPECT_THAT(ReadAll(dir_ + "/daemon.out"),
              HasSubstr("SIGHUP: reload refused, the configuration in force stays: "));
  EXPECT_THAT(ReadAll(dir_ + "/daemon.out"), HasSubstr("limits.max_measurements_per_run"));
  st = profile_all();
  EXPECT_NE(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << st.error_message();
  EXPECT_EQ(::kill(daemon_->pid(), 0), 0);

  // A key nested 50,000 deep (SIGSEGV at SIGHUP before: the parse recursed off the stack) is a
  // refusal like any other, and the daemon serves on.
  std::string deep = "[auth]\ntokens = \"tokens\"\n[limits]\nx";
  for (int i = 0; i < 50000; ++i) deep += ".a";
  WriteFile(dir_ + "/ablationd.toml", deep + " = 1\n");
  Reload(3);
  EXPECT_THAT(ReadAll(dir_ + "/daemon.out"), HasSubstr("nested more than"));
  EXPECT_EQ(::kill(daemon_->pid(), 0), 0) << "the nested configuration ended the daemon";
  st = profile_all();
  EXPECT_NE(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << st.error_message();
}

// [timing] reloads too: a run that names no regime is planned, after the reload, with the new
// default regime, and the log names each change as applied, not as needing a restart.
TEST_F(Security, SighupAppliesTheTimingDefaultsToRunsPlannedAfterIt) {
  StartDaemon("[timing]\nregime = \"sustained\"\n");
  auto latest_run = [&] {
    auto store = db::Store::OpenReadOnly(daemon_->db_path());
    std::optional<v1::Run> run = store ? store->LatestRun() : std::nullopt;
    EXPECT_TRUE(run.has_value());
    return run.value_or(v1::Run());
  };
  ASSERT_TRUE(RunAs(kRunToken, SmallRun()).ok());
  EXPECT_EQ(latest_run().regime(), v1::REGIME_SUSTAINED);

  WriteFile(dir_ + "/ablationd.toml",
            "[auth]\ntokens = \"tokens\"\n[timing]\nregime = \"burst\"\nmin_samples = 37\n");
  Reload(1);
  ASSERT_TRUE(RunAs(kRunToken, SmallRun()).ok());
  EXPECT_EQ(latest_run().regime(), v1::REGIME_BURST);
  const std::string log = ReadAll(dir_ + "/daemon.out");
  EXPECT_THAT(log, HasSubstr("SIGHUP: timing.regime (sustained -> burst) applied to runs planned "
                             "from now on"));
  EXPECT_THAT(log, HasSubstr("SIGHUP: timing.min_samples (10 -> 37) applied"));
  EXPECT_THAT(log, HasSubstr("2 [timing] change(s)"));
  EXPECT_THAT(log,
              Not(HasSubstr("timing.regime (sustained -> burst) changed and needs a restart")));
}

}  // namespace
}  // namespace ablation::testing
