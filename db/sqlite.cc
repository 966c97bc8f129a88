#include "db/sqlite.h"

#include <sqlite3.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <string>

#include "db/error.h"

namespace ablation::db {

Connection::Connection(const std::string& path, Mode mode) : path_(path) {
  const int flags = (mode == Mode::kReadOnly ? SQLITE_OPEN_READONLY
                                             : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
                    SQLITE_OPEN_NOMUTEX;  // Store holds its own mutex
  const int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    // sqlite3_open_v2 hands back a handle even on failure, holding the message.
    std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw Error("cannot open database '" + path + "'" +
                (mode == Mode::kReadOnly ? " read-only" : "") + ": " + message);
  }
  sqlite3_extended_result_codes(db_, 1);
}

Connection::~Connection() { sqlite3_close_v2(db_); }

namespace {

// SQLite's "database or disk is full", or a write the system refused for want of room. SQLite
// says SQLITE_FULL for ENOSPC; a write past a file-size limit (EFBIG) or a quota is an I/O error
// whose errno it does not always keep, so where the errno is gone the room is looked at: the
// file system's free space, and the process's file-size limit against the database's files.
bool NoRoom(sqlite3* db, int rc, const std::string& path) {
  if ((rc & 0xff) == SQLITE_FULL) return true;
  if ((rc & 0xff) != SQLITE_IOERR) return false;
  const int e = db != nullptr ? sqlite3_system_errno(db) : 0;
  if (e == ENOSPC || e == EFBIG || e == EDQUOT) return true;
  if (e != 0 || rc != SQLITE_IOERR_WRITE) return false;
  constexpr uint64_t kSlack = 1 << 20;
  std::error_code ec;
  const std::filesystem::path file(path);
  const std::filesystem::space_info space =
      std::filesystem::space(file.has_parent_path() ? file.parent_path() : ".", ec);
  if (!ec && space.available < kSlack) return true;
  rlimit limit{};
  if (::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    for (const std::string& f : {path, path + "-wal", path + "-journal"}) {
      const uintmax_t size = std::filesystem::file_size(f, ec);
      if (!ec && size + kSlack >= limit.rlim_cur) return true;
    }
  }
  return false;
}

}  // namespace

void Connection::Fail(int rc, std::string_view what) const {
  const char* message = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  throw Error(NoRoom(db_, rc, path_) ? Error::Code::kFull : Error::Code::kStorage,
              "database '" + path_ + "': " + std::string(what) + ": " + message + " (code " +
                  std::to_string(rc) + ")");
}

int64_t Connection::Changes() const { return sqlite3_changes64(db_); }

int64_t Connection::LastInsertRowid() const { return sqlite3_last_insert_rowid(db_); }

void Connection::Exec(const char* sql) {
  char* message = nullptr;
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    std::string text = message != nullptr ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    throw Error(NoRoom(db_, rc, path_) ? Error::Code::kFull : Error::Code::kStorage,
                "database '" + path_ + "': " + text + " (code " + std::to_string(rc) + ", errno " +
                    std::to_string(sqlite3_system_errno(db_)) + ") in: " + sql);
  }
}

int64_t Connection::QueryInt(const char* sql) {
  Statement statement(*this, sql);
  if (!statement.Step()) Fail(SQLITE_ERROR, std::string("no row from ") + sql);
  return statement.ColumnInt64(0);
}

std::string Connection::QueryText(const char* sql) {
  Statement statement(*this, sql);
  if (!statement.Step()) Fail(SQLITE_ERROR, std::string("no row from ") + sql);
  return statement.ColumnText(0);
}

Statement::Statement(Connection& connection, std::string_view sql)
    : connection_(connection), sql_(sql) {
  // SQLITE_PREPARE_PERSISTENT: these statements live as long as the connection.
  const int rc =
      sqlite3_prepare_v3(connection_.handle(), sql_.data(), static_cast<int>(sql_.size()),
                         SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
  if (rc != SQLITE_OK) connection_.Fail(rc, "preparing " + sql_);
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::BindNull(int index) {
  if (int rc = sqlite3_bind_null(stmt_, index); rc != SQLITE_OK) connection_.Fail(rc, "bind");
}

void Statement::BindInt64(int index, int64_t value) {
  if (int rc = sqlite3_bind_int64(stmt_, index, value); rc != SQLITE_OK) {
    connection_.Fail(rc, "bind");
  }
}

void Statement::BindDouble(int index, double value) {
  if (int rc = sqlite3_bind_double(stmt_, index, value); rc != SQLITE_OK) {
    connection_.Fail(rc, "bind");
  }
}

void Statement::BindText(int index, std::string_view value) {
  // SQLITE_TRANSIENT: SQLite copies, so the caller's string may die before Step().
  if (int rc = sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT,
                                   SQLITE_UTF8);
      rc != SQLITE_OK) {
    connection_.Fail(rc, "bind");
  }
}

void Statement::BindBlob(int index, std::span<const uint8_t> value) {
  // A zero-length blob is still a blob, not NULL: bind_zeroblob keeps it so.
  const int rc = value.empty() ? sqlite3_bind_zeroblob(stmt_, index, 0)
                               : sqlite3_bind_blob64(stmt_, index, value.data(), value.size(),
                                                     SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) connection_.Fail(rc, "bind");
}

bool Statement::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  connection_.Fail(rc, "executing " + sql_);
}

void Statement::Reset() {
  // The error code of reset only repeats the last step's, which was already reported.
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::IsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

int64_t Statement::ColumnInt64(int column) const { return sqlite3_column_int64(stmt_, column); }

double Statement::ColumnDouble(int column) const { return sqlite3_column_double(stmt_, column); }

std::string Statement::ColumnText(int column) const {
  const auto* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text), sqlite3_column_bytes(stmt_, column));
}

std::vector<uint8_t> Statement::ColumnBlob(int column) const {
  const auto* data = static_cast<const uint8_t*>(sqlite3_column_blob(stmt_, column));
  const int size = sqlite3_column_bytes(stmt_, column);
  if (data == nullptr || size <= 0) return {};
  return std::vector<uint8_t>(data, data + size);
}

Transaction::Transaction(Connection& connection, Kind kind) : connection_(connection) {
  connection_.Exec(kind == Kind::kImmediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED");
  open_ = true;
}

Transaction::~Transaction() {
  if (open_) {
    // Best effort: a failed rollback (the transaction was already rolled back by SQLite after
    // an I/O error, say) must not throw from a destructor.
    sqlite3_exec(connection_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

void Transaction::Commit() {
  connection_.Exec("COMMIT");
  open_ = false;
}

}  // namespace ablation::db
