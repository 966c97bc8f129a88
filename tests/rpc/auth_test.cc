#include "server/rpc/auth.h"

#include <gtest/gtest.h>

#include "server/rpc/listener.h"

namespace ablation::rpc {
namespace {

using core::Role;

TEST(Authorizer, TheMethodTableIsClosedByDefault) {
  EXPECT_EQ(Authorizer::RequiredRole("/ablation.v1.Ablation/ListRuns"), Role::kRead);
  EXPECT_EQ(Authorizer::RequiredRole("/ablation.v1.Ablation/WatchRun"), Role::kRead);
  EXPECT_EQ(Authorizer::RequiredRole("/ablation.v1.Ablation/RunAblation"), Role::kRun);
  EXPECT_EQ(Authorizer::RequiredRole("/ablation.v1.Ablation/CancelRun"), Role::kRun);
  EXPECT_EQ(Authorizer::RequiredRole("/grpc.health.v1.Health/Check"), Role::kNone);
  EXPECT_EQ(
      Authorizer::RequiredRole("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"),
      Role::kNone);
  // Not in the table: admin until someone decides.
  EXPECT_EQ(Authorizer::RequiredRole("/ablation.v1.Ablation/DropEverything"), Role::kAdmin);
  EXPECT_EQ(Authorizer::RequiredRole("/other.Service/ListRuns"), Role::kAdmin);
  EXPECT_EQ(Authorizer::RequiredRole(Action::kLockClocks), Role::kAdmin);
}

TEST(Authorizer, ChecksTokensAndRolesWithSentences) {
  std::string line;
  ASSERT_TRUE(core::TokenLine("reader-token-0123456789", "reader:read", &line).ok());
  core::TokenTable tokens;
  ASSERT_TRUE(core::TokenTable::Parse(line, "t", &tokens).ok());
  Authorizer auth(std::move(tokens), Role::kNone, Role::kRun);
  const std::string header = "Bearer reader-token-0123456789";
  Authorizer::Metadata with;
  with.insert({"authorization", header});
  Authorizer::Metadata none;
  EXPECT_TRUE(auth.Check("/ablation.v1.Ablation/ListRuns", with, nullptr).ok());
  grpc::Status st = auth.Check("/ablation.v1.Ablation/RunAblation", with, nullptr);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(st.error_message().rfind("reader has the read role; RunAblation needs run", 0), 0u);
  st = auth.Check("/ablation.v1.Ablation/ListRuns", none, nullptr);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(auth.Check("/grpc.health.v1.Health/Check", none, nullptr).ok());
  Authorizer::Metadata wrong;
  const std::string basic = "Basic abc";
  wrong.insert({"authorization", basic});
  EXPECT_EQ(auth.Check("/ablation.v1.Ablation/ListRuns", wrong, nullptr).error_message(),
            "the authorization header must be 'Bearer <token>'");
}

// The metrics endpoint asks for what a read asks for, once tokens are configured; a reload
// (SIGHUP) changes which tokens those are.
TEST(Authorizer, MetricsNeedAReadTokenOnceTokensAreConfiguredAndFollowAReload) {
  Authorizer open_daemon(core::TokenTable(), Role::kAdmin, Role::kAdmin);
  EXPECT_EQ(open_daemon.MetricsRefusal(""), "");
  std::string line;
  ASSERT_TRUE(core::TokenLine("reader-token-0123456789", "reader:read", &line).ok());
  core::TokenTable tokens;
  ASSERT_TRUE(core::TokenTable::Parse(line, "t", &tokens).ok());
  Authorizer auth(std::move(tokens), Role::kNone, Role::kRun);
  EXPECT_NE(auth.MetricsRefusal("").find("need a token of the read role"), std::string::npos);
  EXPECT_NE(auth.MetricsRefusal("Bearer wrong").find("not one of this daemon's tokens"),
            std::string::npos);
  EXPECT_EQ(auth.MetricsRefusal("Bearer reader-token-0123456789"), "");
  ASSERT_TRUE(core::TokenLine("other-token-0123456789", "other:read", &line).ok());
  core::TokenTable next;
  ASSERT_TRUE(core::TokenTable::Parse(line, "t", &next).ok());
  auth.ReplaceTokens(std::move(next));
  EXPECT_NE(auth.MetricsRefusal("Bearer reader-token-0123456789"), "");
  EXPECT_EQ(auth.MetricsRefusal("Bearer other-token-0123456789"), "");
}

TEST(Authorizer, TwoAuthorizationHeadersAreRefused) {
  std::string line;
  ASSERT_TRUE(core::TokenLine("reader-token-0123456789", "reader:read", &line).ok());
  core::TokenTable tokens;
  ASSERT_TRUE(core::TokenTable::Parse(line, "t", &tokens).ok());
  Authorizer auth(std::move(tokens), Role::kNone, Role::kRun);
  const std::string header = "Bearer reader-token-0123456789";
  Authorizer::Metadata twice;
  twice.insert({"authorization", header});
  twice.insert({"authorization", header});
  grpc::Status st = auth.Check("/ablation.v1.Ablation/ListRuns", twice, nullptr);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(st.error_message().find("more than one authorization header"), std::string::npos);
}

TEST(Listener, LoopbackIsTellingApartWhatOthersReach) {
  EXPECT_TRUE(IsLoopbackAddress("127.0.0.1:50051"));
  EXPECT_TRUE(IsLoopbackAddress("localhost:1"));
  EXPECT_TRUE(IsLoopbackAddress("[::1]:50051"));
  EXPECT_TRUE(IsLoopbackAddress("unix:/run/ablationd.sock"));
  EXPECT_FALSE(IsLoopbackAddress("0.0.0.0:50051"));
  EXPECT_FALSE(IsLoopbackAddress("[::]:50051"));
  EXPECT_FALSE(IsLoopbackAddress("gpu7.example:50051"));
  Listener listener;
  core::AuthConfig auth;
  core::Status st = MakeListener("0.0.0.0:50051", auth, &listener);
  EXPECT_EQ(st.code(), core::Code::kFailedPrecondition);
  auth.insecure_remote = true;
  ASSERT_TRUE(MakeListener("0.0.0.0:50051", auth, &listener).ok());
  ASSERT_EQ(listener.warnings.size(), 1u);
  Listener local;
  ASSERT_TRUE(MakeListener("127.0.0.1:0", core::AuthConfig(), &local).ok());
  EXPECT_EQ(local.description, "plaintext on loopback, 0 token(s), anonymous callers: admin");
}

}  // namespace
}  // namespace ablation::rpc
