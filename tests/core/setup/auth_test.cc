#include "server/core/setup/auth.h"

#include <gtest/gtest.h>

namespace ablation::core {
namespace {

TEST(Auth, TheTokenFileHoldsHashesNamesAndRoles) {
  std::string line;
  ASSERT_TRUE(TokenLine("secret-token-0123456789", "alice:run", &line).ok());
  EXPECT_EQ(line, Sha256Hex("secret-token-0123456789") + " alice run");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  TokenTable table;
  ASSERT_TRUE(TokenTable::Parse("# tokens\n\n" + line + "\n", "tokens", &table).ok());
  auto alice = table.Lookup("secret-token-0123456789");
  ASSERT_TRUE(alice);
  EXPECT_EQ(alice->name, "alice");
  EXPECT_EQ(alice->role, Role::kRun);
  EXPECT_TRUE(alice->authenticated);
  EXPECT_FALSE(table.Lookup("secret-token-012345678"));
  EXPECT_FALSE(table.Lookup(""));
}

TEST(Auth, BadLinesNameTheLineAndNeverQuoteAHash) {
  TokenTable table;
  const std::string hash = Sha256Hex("x");
  Status st = TokenTable::Parse(hash + " alice root\n", "tokens", &table);
  EXPECT_EQ(st.message(), "tokens:1: role 'root': read, run or admin");
  st = TokenTable::Parse("\n" + hash.substr(1) + " alice run\n", "tokens", &table);
  EXPECT_NE(st.message().find("tokens:2: expected the SHA-256"), std::string::npos);
  EXPECT_EQ(st.message().find(hash.substr(1)), std::string::npos);
  st = TokenTable::Parse(hash + " anonymous read\n", "tokens", &table);
  EXPECT_NE(st.message().find("not 'anonymous'"), std::string::npos);
  st = TokenTable::Parse(hash + " a read\n" + hash + " b run\n", "tokens", &table);
  EXPECT_EQ(st.message(), "tokens:2: the same token is listed twice");
  std::string line;
  EXPECT_FALSE(TokenLine("short", "alice:run", &line).ok());
  EXPECT_FALSE(TokenLine("long-enough-token-1234", "alice", &line).ok());
}

TEST(Auth, RolesAreOrdered) {
  EXPECT_LT(Role::kRead, Role::kRun);
  EXPECT_LT(Role::kRun, Role::kAdmin);
  EXPECT_EQ(ParseRole("none"), std::nullopt);
  EXPECT_EQ(ParseRole("none", true), Role::kNone);
  EXPECT_EQ(RoleName(Role::kAdmin), "admin");
  EXPECT_EQ(NewToken().size(), 64u);
  EXPECT_NE(NewToken(), NewToken());
}

}  // namespace
}  // namespace ablation::core
