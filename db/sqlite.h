// A small RAII layer over SQLite's C API: a connection, prepared statements, transactions.
// Values only ever reach SQL through Bind*; SQL text is always a compile-time or whitelisted
// string. Not thread-safe: the owner (Store) serialises access.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace ablation::db {

class Connection {
 public:
  enum class Mode { kReadWrite, kReadOnly };

  // Opens (kReadWrite: creating if missing) with extended result codes on; throws Error.
  Connection(const std::string& path, Mode mode);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }

  // Rows changed by the last INSERT/UPDATE/DELETE, and the rowid the last INSERT assigned.
  int64_t Changes() const;
  int64_t LastInsertRowid() const;

  // Runs SQL that binds nothing (DDL, PRAGMAs, BEGIN/COMMIT); several statements allowed.
  void Exec(const char* sql);
  // Runs a statement returning one integer (PRAGMA user_version, ...).
  int64_t QueryInt(const char* sql);
  std::string QueryText(const char* sql);

  // Throws Error naming the path, what was being done, and SQLite's message for rc.
  [[noreturn]] void Fail(int rc, std::string_view what) const;

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

class Statement {
 public:
  Statement(Connection& connection, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are 1-based as in SQLite.
  void BindNull(int index);
  void BindInt64(int index, int64_t value);
  void BindDouble(int index, double value);
  void BindText(int index, std::string_view value);
  void BindBlob(int index, std::span<const uint8_t> value);

  // True while a row is available; false when done. Throws on error.
  bool Step();
  // Ready for the next bind/step round; clears bindings so no stale value leaks into it.
  void Reset();

  // Columns are 0-based as in SQLite.
  bool IsNull(int column) const;
  int64_t ColumnInt64(int column) const;
  double ColumnDouble(int column) const;
  std::string ColumnText(int column) const;
  std::vector<uint8_t> ColumnBlob(int column) const;

  const std::string& sql() const { return sql_; }
  // For messages that name the database.
  const Connection& connection() const { return connection_; }

 private:
  Connection& connection_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

// Resets a statement when leaving scope, also on an exception: a statement left mid-step would
// hold its read snapshot open and block WAL checkpoints.
class StatementScope {
 public:
  explicit StatementScope(Statement& statement) : statement_(statement) {}
  ~StatementScope() { statement_.Reset(); }
  StatementScope(const StatementScope&) = delete;
  StatementScope& operator=(const StatementScope&) = delete;
  Statement& operator*() { return statement_; }
  Statement* operator->() { return &statement_; }

 private:
  Statement& statement_;
};

// BEGIN on construction, ROLLBACK in the destructor unless Commit() was called.
class Transaction {
 public:
  enum class Kind {
    kDeferred,   // readers: a consistent snapshot across several statements
    kImmediate,  // writers: take the write lock now, so busy_timeout applies up front instead
                 // of a deadlock-prone upgrade from read to write half way through
  };
  explicit Transaction(Connection& connection, Kind kind = Kind::kImmediate);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void Commit();

 private:
  Connection& connection_;
  bool open_ = false;
};

// Cursor helpers that number parameters and columns in order, so an INSERT's column list and
// its binds (or a SELECT's list and its reads) cannot drift apart by an off-by-one.
class Binder {
 public:
  explicit Binder(Statement& statement, int first = 1) : s_(statement), next_(first) {}
  Binder& Int(int64_t v) {
    s_.BindInt64(next_++, v);
    return *this;
  }
  Binder& Real(double v) {
    s_.BindDouble(next_++, v);
    return *this;
  }
  Binder& Text(std::string_view v) {
    s_.BindText(next_++, v);
    return *this;
  }
  Binder& Blob(std::span<const uint8_t> v) {
    s_.BindBlob(next_++, v);
    return *this;
  }
  // 0 stored as NULL: "not yet" / "not recorded".
  Binder& IntOrNull(int64_t v) {
    v == 0 ? s_.BindNull(next_++) : s_.BindInt64(next_++, v);
    return *this;
  }
  // NULL unless present: a number that was not recorded must not average in as 0.
  Binder& RealIf(bool present, double v) {
    present ? s_.BindDouble(next_++, v) : s_.BindNull(next_++);
    return *this;
  }
  Binder& IntIf(bool present, int64_t v) {
    present ? s_.BindInt64(next_++, v) : s_.BindNull(next_++);
    return *this;
  }
  int next() const { return next_; }

 private:
  Statement& s_;
  int next_;
};

class Reader {
 public:
  explicit Reader(const Statement& statement, int first = 0) : s_(statement), next_(first) {}
  int64_t Int() { return s_.ColumnInt64(next_++); }  // NULL reads as 0
  int32_t Int32() { return static_cast<int32_t>(s_.ColumnInt64(next_++)); }
  double Real() { return s_.ColumnDouble(next_++); }     // NULL reads as 0
  std::string Text() { return s_.ColumnText(next_++); }  // NULL reads as ""
  bool Bool() { return s_.ColumnInt64(next_++) != 0; }
  int next() const { return next_; }

 private:
  const Statement& s_;
  int next_;
};

}  // namespace ablation::db
