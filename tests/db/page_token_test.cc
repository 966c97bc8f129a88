#include "db/page_token.h"

#include <gtest/gtest.h>

#include <string>

#include "db/error.h"

namespace ablation::db {
namespace {

TEST(PageTokenTest, RoundTripsTheLastId) {
  const uint64_t print = FilterFingerprint({"bf16", "nightly"});
  for (int64_t id : {int64_t{0}, int64_t{1}, int64_t{4096}, int64_t{9'007'199'254'740'993}}) {
    const std::string token = EncodePageToken('m', id, print);
    EXPECT_EQ(
        token.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
        std::string::npos)
        << "not URL-safe: " << token;
    EXPECT_EQ(DecodePageToken(token, 'm', print), id);
  }
}

TEST(PageTokenTest, FingerprintSeparatesParts) {
  EXPECT_NE(FilterFingerprint({"ab", ""}), FilterFingerprint({"a", "b"}));
  EXPECT_NE(FilterFingerprint({"", "x"}), FilterFingerprint({"x", ""}));
  EXPECT_EQ(FilterFingerprint({"a", "b"}), FilterFingerprint({"a", "b"}));
}

TEST(PageTokenTest, RefusesForeignMalformedAndMismatchedTokens) {
  const uint64_t print = FilterFingerprint({"x"});
  const std::string token = EncodePageToken('r', 42, print);
  auto refused = [](const std::string& t, char listing, uint64_t p) {
    try {
      DecodePageToken(t, listing, p);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Error::Code::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("'" + t + "'"), std::string::npos) << e.what();
      return true;
    }
    return false;
  };
  EXPECT_TRUE(refused(token, 'm', print));                     // another listing
  EXPECT_TRUE(refused(token, 'r', FilterFingerprint({"y"})));  // another filter
  EXPECT_TRUE(refused("", 'r', print));
  EXPECT_TRUE(refused("%%%", 'r', print));
  EXPECT_TRUE(refused(token.substr(0, token.size() - 3), 'r', print));
  EXPECT_TRUE(refused(token + "AA", 'r', print));
  EXPECT_TRUE(refused(std::string(500, 'A'), 'r', print));
  EXPECT_FALSE(refused(token, 'r', print));
}

}  // namespace
}  // namespace ablation::db
