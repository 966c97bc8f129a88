// The fleet database's connection string (db/fleet/conninfo.h) and the reads' glob
// (db/fleet/fleet_reader.h): no password ever shown, bad strings named. No server needed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "db/fleet/conninfo.h"
#include "db/fleet/fleet_reader.h"

namespace ablation::fleet {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ConnInfo, PasswordsAreNeverShown) {
  EXPECT_EQ(RedactConnInfo("postgresql://ablation:s3cret@db.example:5432/fleet"),
            "postgresql://ablation:***@db.example:5432/fleet");
  EXPECT_EQ(RedactConnInfo("postgres://ablation@db/fleet?password=s3cret&sslmode=require"),
            "postgres://ablation@db/fleet?password=***&sslmode=require");
  EXPECT_EQ(RedactConnInfo("host=db user=ablation password=s3cret dbname=fleet"),
            "host=db user=ablation password=*** dbname=fleet");
  EXPECT_EQ(RedactConnInfo("host=db password = 'two words' dbname=fleet"),
            "host=db password = *** dbname=fleet");
  EXPECT_EQ(RedactConnInfo("host=/tmp/pg port=5439 user=fleet"),
            "host=/tmp/pg port=5439 user=fleet");
  EXPECT_EQ(RedactPasswords("FATAL: password s3cret rejected", "host=db password=s3cret"),
            "FATAL: password *** rejected");
}

// However the key is spelled: libpq decodes %XX in a URI's query keys, so `?%70assword=` is a
// password (it reached the log in clear before), and so is a key half encoded.
TEST(ConnInfo, AnEncodedPasswordKeyIsAPasswordToo) {
  for (const char* uri : {"postgresql://ablation@db/fleet?%70assword=s3cret",
                          "postgresql://ablation@db/fleet?sslmode=require&pass%77ord=s3cret",
                          "postgresql://ablation@db/fleet?%70%61%73%73%77%6f%72%64=s3cret"}) {
    EXPECT_TRUE(HasPassword(uri)) << uri;
    const std::string shown = RedactConnInfo(uri);
    EXPECT_EQ(shown.find("s3cret"), std::string::npos) << shown;
    EXPECT_NE(shown.find("=***"), std::string::npos) << shown;
  }
  EXPECT_FALSE(HasPassword("postgresql://ablation@db/fleet?sslmode=require"));
  EXPECT_TRUE(HasPassword("host=db password=x"));
}

TEST(ConnInfo, ABadStringIsNamedWithoutItsPassword) {
  EXPECT_EQ(CheckConnInfo("postgresql://a:b@db/fleet"), "");
  EXPECT_EQ(CheckConnInfo("host=db dbname=fleet"), "");
  EXPECT_THAT(CheckConnInfo(""), HasSubstr("empty"));
  const std::string bad = CheckConnInfo("host=db password=s3cret nosuchkey=1");
  EXPECT_THAT(bad, HasSubstr("nosuchkey"));
  EXPECT_THAT(bad, Not(HasSubstr("s3cret")));
  EXPECT_THAT(CheckConnInfo("host='unclosed"), HasSubstr("not one libpq reads"));
}

TEST(ConnInfo, AFileGivesItsFirstLineTrimmed) {
  const std::string path = ::testing::TempDir() + "/fleet-db";
  std::ofstream(path) << "  postgresql://a@db/fleet  \nignored\n";
  std::string error;
  EXPECT_EQ(ReadConnInfoFile(path, &error), "postgresql://a@db/fleet");
  EXPECT_EQ(error, "");
  std::ofstream(path) << "\n";
  EXPECT_EQ(ReadConnInfoFile(path, &error), "");
  EXPECT_THAT(error, HasSubstr("holds no connection string"));
  std::remove(path.c_str());
  error.clear();
  ReadConnInfoFile(path, &error);
  EXPECT_THAT(error, HasSubstr("cannot read"));
}

TEST(FleetReader, GlobsBecomeAnchoredRegularExpressions) {
  EXPECT_EQ(GlobToRegex("abl_*"), "^abl_.*$");
  EXPECT_EQ(GlobToRegex("abl_L?_s[34]"), "^abl_L._s[34]$");
  EXPECT_EQ(GlobToRegex("a.b(c)"), "^a\\.b\\(c\\)$");
}

}  // namespace
}  // namespace ablation::fleet
