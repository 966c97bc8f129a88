// A small RAII layer over libpq (Debian's libpq-dev), the fleet database's client: a connection,
// results, and statements whose values only ever travel as parameters ($1, $2, ...), never
// spliced into SQL text. Errors throw FleetError naming what was being done and PostgreSQL's
// message; a connection string in a message is always redacted (conninfo.h).
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

struct pg_conn;
struct pg_result;

namespace ablation::fleet {

class FleetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A statement's parameter: text as PostgreSQL reads it, or NULL.
using PgParam = std::optional<std::string>;

class PgResult {
 public:
  explicit PgResult(pg_result* result) : result_(result) {}
  ~PgResult();
  PgResult(PgResult&& other) noexcept : result_(other.result_) { other.result_ = nullptr; }
  PgResult(const PgResult&) = delete;
  PgResult& operator=(const PgResult&) = delete;
  PgResult& operator=(PgResult&&) = delete;

  int rows() const;
  bool IsNull(int row, int column) const;
  std::string Text(int row, int column) const;  // NULL reads as ""
  long long Int(int row, int column) const;     // NULL reads as 0
  double Real(int row, int column) const;       // NULL reads as 0
  /// Rows changed by an INSERT/UPDATE/DELETE.
  long long Affected() const;

 private:
  pg_result* result_;
};

class PgConnection {
 public:
  /// Connects (libpq's URI or key=value form); throws FleetError naming the redacted string.
  /// `connect_timeout_s` bounds the attempt, so a database that is away fails fast.
  explicit PgConnection(const std::string& conninfo, int connect_timeout_s = 5);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  /// False once the server went away (a failed statement tells; the caller reconnects).
  bool ok() const;
  /// Whether the server answers a trivial statement now: after a failed statement, tells a
  /// refusal (it answers) from a lost server (libpq may not have noticed the socket closed).
  bool Ping();
  /// Runs SQL that binds nothing (DDL, BEGIN, COMMIT); several statements allowed.
  void Exec(std::string_view sql, std::string_view what);
  /// One statement with parameters; its rows if it returns any.
  PgResult Query(std::string_view sql, const std::vector<PgParam>& params, std::string_view what);

 private:
  [[noreturn]] void Fail(std::string_view what, pg_result* result) const;

  pg_conn* conn_ = nullptr;
  std::string redacted_;  // for messages
};

/// BEGIN (or BEGIN READ ONLY) on construction, ROLLBACK in the destructor unless committed.
class PgTransaction {
 public:
  enum class Kind { kReadWrite, kReadOnly };
  explicit PgTransaction(PgConnection& connection, Kind kind = Kind::kReadWrite);
  ~PgTransaction();
  PgTransaction(const PgTransaction&) = delete;
  PgTransaction& operator=(const PgTransaction&) = delete;
  void Commit();

 private:
  PgConnection& connection_;
  bool open_ = false;
};

}  // namespace ablation::fleet
