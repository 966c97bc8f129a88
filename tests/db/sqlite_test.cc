#include "db/sqlite.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "db/error.h"
#include "tests/db/db_test_support.h"

namespace ablation::db {
namespace {

class SqliteTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    connection_ = std::make_unique<Connection>(PathOf("t.db"), Connection::Mode::kReadWrite);
    connection_->Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, value REAL, b BLOB)");
  }
  std::unique_ptr<Connection> connection_;
};

TEST_F(SqliteTest, BindsAndReadsEveryTypeAndResetsForReuse) {
  Statement insert(*connection_, "INSERT INTO t (name, value, b) VALUES (?, ?, ?)");
  const uint8_t bytes[] = {0, 1, 2, 255};
  for (int i = 0; i < 3; ++i) {
    StatementScope s(insert);
    // A quote and a NUL: values are bound, never spliced into SQL text.
    Binder(*s).Text(std::string("it's\0x", 6)).Real(0.5 * i).Blob(bytes);
    EXPECT_FALSE(s->Step());
  }
  EXPECT_EQ(connection_->QueryInt("SELECT count(*) FROM t"), 3);
  Statement select(*connection_, "SELECT name, value, b, NULL FROM t WHERE id = ?");
  StatementScope s(select);
  s->BindInt64(1, 3);
  ASSERT_TRUE(s->Step());
  EXPECT_EQ(s->ColumnText(0), std::string("it's\0x", 6));
  EXPECT_EQ(s->ColumnDouble(1), 1.0);
  EXPECT_EQ(s->ColumnBlob(2), (std::vector<uint8_t>{0, 1, 2, 255}));
  EXPECT_TRUE(s->IsNull(3));
  EXPECT_EQ(s->ColumnText(3), "");
  EXPECT_FALSE(s->Step());
}

TEST_F(SqliteTest, TransactionRollsBackUnlessCommitted) {
  try {
    Transaction transaction(*connection_);
    connection_->Exec("INSERT INTO t (name) VALUES ('lost')");
    throw std::runtime_error("measurement failed half way");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(connection_->QueryInt("SELECT count(*) FROM t"), 0);
  {
    Transaction transaction(*connection_);
    connection_->Exec("INSERT INTO t (name) VALUES ('kept')");
    transaction.Commit();
  }
  EXPECT_EQ(connection_->QueryInt("SELECT count(*) FROM t"), 1);
}

TEST_F(SqliteTest, ErrorsNameThePathAndSqlitesMessage) {
  try {
    Statement bad(*connection_, "SELECT nope FROM t");
    FAIL();
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(PathOf("t.db")), std::string::npos) << message;
    EXPECT_NE(message.find("no such column: nope"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace ablation::db
