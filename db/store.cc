// The Store's opening and what all its parts share; the runs are in store_runs.cc, the results
// (measurements, verifications) in store_results.cc.
#include "db/store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "db/migrations.h"
#include "db/row_mapping.h"
#include "db/sqlite.h"

namespace ablation::db {
namespace {

constexpr int kBusyTimeoutMs = 5000;

// Every column the row messages map to must exist once the schema is current: a field added to
// the .proto without its migration stops the daemon at start, naming the column, instead of
// failing its first write.
void RequireRowColumns(Connection& connection) {
  RowMapping::Of<v1::Run>().RequireColumns(connection, "runs");
  RowMapping::Of<v1::Measurement>().RequireColumns(connection, "measurements");
  RowMapping::Of<v1::VerifyResult>().RequireColumns(connection, "verifications");
}

// A new database file is made 0640 whatever the umask (0644 under umask 022 before: every local
// user could read every result and request); the group keeps read access, as the dashboards read
// the file as members of the daemon's group (deploy/systemd). SQLite gives its -wal and -shm
// files the database file's permissions. An existing file keeps the mode its operator gave it.
void CreatePrivate(const std::string& path) {
  if (path.empty() || path == ":memory:" || path.rfind("file:", 0) == 0) return;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
  if (fd >= 0) {
    ::fchmod(fd, 0640);  // O_CREAT's mode is masked by the umask: a umask of 077 would drop g+r
    ::close(fd);
  } else if (errno != EEXIST) {
    throw Error("cannot create database '" + path + "': " + std::strerror(errno));
  }
}

// Every page read once (PRAGMA quick_check: the b-trees and free list, not the indexes'
// contents): corruption in a late page is seen at start, naming the file, rather than as an
// internal error of whichever query first reads it.
void RequireIntact(Connection& connection) {
  std::string result;
  try {
    result = connection.QueryText("PRAGMA quick_check(1)");
  } catch (const Error& e) {  // a page so damaged that the check itself fails
    result = e.what();
  }
  if (result != "ok")
    throw Error("database '" + connection.path() + "' is damaged (PRAGMA quick_check: " + result +
                "): the daemon will not write to it; restore it from a backup, or move it aside "
                "and start with a new one (sqlite3 '.recover' may save what is readable)");
}

}  // namespace

// ---------------------------------------------------------------- open

std::unique_ptr<Store> Store::Open(const std::string& path) {
  CreatePrivate(path);
  auto connection = std::make_unique<Connection>(path, Connection::Mode::kReadWrite);
  connection->Exec("PRAGMA busy_timeout = 5000");
  static_assert(kBusyTimeoutMs == 5000, "keep the PRAGMA above in step");
  // Before anything that writes (journal_mode=WAL rewrites the header): a newer database must
  // be left exactly as it was.
  RefuseNewerSchema(*connection);
  RequireIntact(*connection);
  if (const std::string mode = connection->QueryText("PRAGMA journal_mode = WAL"); mode != "wal") {
    throw Error("database '" + path + "': cannot switch to WAL journal mode (got '" + mode +
                "'); WAL is needed so that readers do not block the daemon's writes");
  }
  // FULL, not WAL's usual NORMAL: a result committed must survive a power cut too; one fsync
  // per measurement costs nothing next to the measurement.
  connection->Exec("PRAGMA synchronous = FULL");
  connection->Exec("PRAGMA foreign_keys = ON");
  Migrate(*connection);
  RequireRowColumns(*connection);
  return std::unique_ptr<Store>(new Store(std::move(connection), false));
}

std::unique_ptr<Store> Store::OpenReadOnly(const std::string& path) {
  auto connection = std::make_unique<Connection>(path, Connection::Mode::kReadOnly);
  connection->Exec("PRAGMA busy_timeout = 5000");
  RefuseNewerSchema(*connection);
  if (const int version = SchemaVersion(*connection); version != kSchemaVersion) {
    throw Error(Error::Code::kIncompatible,
                "database '" + path + "' has schema version " + std::to_string(version) +
                    ", older than version " + std::to_string(kSchemaVersion) +
                    " that this code reads; a read-only reader cannot migrate it: let ablationd "
                    "open it once (read-write) first");
  }
  RequireRowColumns(*connection);
  return std::unique_ptr<Store>(new Store(std::move(connection), true));
}

Store::Store(std::unique_ptr<Connection> connection, bool read_only)
    : connection_(std::move(connection)), path_(connection_->path()), read_only_(read_only) {}

// Statements go before the connection: sqlite3_close_v2 would otherwise keep it as a zombie.
Store::~Store() { statements_.clear(); }

Statement& Store::Prepared(const std::string& sql) {
  auto it = statements_.find(sql);
  if (it == statements_.end()) {
    it = statements_.emplace(sql, std::make_unique<Statement>(*connection_, sql)).first;
  }
  return *it->second;
}

void Store::RequireWritable(std::string_view what) const {
  if (read_only_) {
    throw Error(Error::Code::kInvalidArgument, "database '" + path_ + "' is open read-only; " +
                                                   std::string(what) + " needs Store::Open");
  }
}

bool Store::Exists(const std::string& sql, const std::string& text) {
  StatementScope s(Prepared(sql));
  s->BindText(1, text);
  return s->Step();
}

void Store::RequireRunExists(int64_t run_id) {
  StatementScope s(Prepared("SELECT 1 FROM runs WHERE id = ?"));
  s->BindInt64(1, run_id);
  if (!s->Step()) {
    throw Error(Error::Code::kNotFound,
                "database '" + path_ + "': run " + std::to_string(run_id) + " does not exist");
  }
}

void Store::UpdateOneRun(int64_t run_id, std::string_view what) {
  if (connection_->Changes() == 0) {
    throw Error(Error::Code::kNotFound, "database '" + path_ + "': cannot " + std::string(what) +
                                            ": run " + std::to_string(run_id) + " does not exist");
  }
}

}  // namespace ablation::db
