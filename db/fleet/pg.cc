#include "db/fleet/pg.h"

#include <libpq-fe.h>

#include <cstdlib>

#include "db/fleet/conninfo.h"

namespace ablation::fleet {
namespace {

std::string Trimmed(const char* message) {
  std::string s = message ? message : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

PgResult::~PgResult() {
  if (result_ != nullptr) PQclear(result_);
}

int PgResult::rows() const { return PQntuples(result_); }

bool PgResult::IsNull(int row, int column) const { return PQgetisnull(result_, row, column) != 0; }

std::string PgResult::Text(int row, int column) const {
  if (IsNull(row, column)) return "";
  return std::string(PQgetvalue(result_, row, column),
                     static_cast<size_t>(PQgetlength(result_, row, column)));
}

long long PgResult::Int(int row, int column) const {
  return IsNull(row, column) ? 0 : std::strtoll(PQgetvalue(result_, row, column), nullptr, 10);
}

double PgResult::Real(int row, int column) const {
  return IsNull(row, column) ? 0 : std::strtod(PQgetvalue(result_, row, column), nullptr);
}

long long PgResult::Affected() const {
  const char* n = PQcmdTuples(result_);
  return (n == nullptr || *n == '\0') ? 0 : std::strtoll(n, nullptr, 10);
}

PgConnection::PgConnection(const std::string& conninfo, int connect_timeout_s)
    : redacted_(RedactConnInfo(conninfo)) {
  // connect_timeout through the keyword form, whatever form the string has.
  const std::string timeout = std::to_string(connect_timeout_s);
  const char* keys[] = {"dbname", "connect_timeout", "application_name", nullptr};
  const char* values[] = {conninfo.c_str(), timeout.c_str(), "ablationd", nullptr};
  conn_ = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (conn_ == nullptr || PQstatus(conn_) != CONNECTION_OK) {
    const std::string why = conn_ ? Trimmed(PQerrorMessage(conn_)) : "out of memory";
    if (conn_ != nullptr) PQfinish(conn_);
    conn_ = nullptr;
    throw FleetError("cannot connect to the fleet database " + redacted_ + ": " +
                     RedactPasswords(why, conninfo));
  }
  // Quiet NOTICEs ("relation already exists, skipping") stay out of the daemon's stderr.
  PQsetNoticeProcessor(
      conn_, [](void*, const char*) {}, nullptr);
}

PgConnection::~PgConnection() {
  if (conn_ != nullptr) PQfinish(conn_);
}

bool PgConnection::ok() const { return conn_ != nullptr && PQstatus(conn_) == CONNECTION_OK; }

bool PgConnection::Ping() {
  if (!ok()) return false;
  pg_result* r = PQexec(conn_, "SELECT 1");
  const bool answered = r != nullptr && PQresultStatus(r) == PGRES_TUPLES_OK;
  if (r != nullptr) PQclear(r);
  return answered;
}

void PgConnection::Fail(std::string_view what, pg_result* result) const {
  std::string why = result ? Trimmed(PQresultErrorMessage(result)) : "";
  if (why.empty()) why = Trimmed(PQerrorMessage(conn_));
  if (result != nullptr) PQclear(result);
  throw FleetError("fleet database " + redacted_ + ": " + std::string(what) + ": " + why);
}

void PgConnection::Exec(std::string_view sql, std::string_view what) {
  const std::string text(sql);
  pg_result* r = PQexec(conn_, text.c_str());
  const ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) Fail(what, r);
  PQclear(r);
}

PgResult PgConnection::Query(std::string_view sql, const std::vector<PgParam>& params,
                             std::string_view what) {
  const std::string text(sql);
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const PgParam& p : params) values.push_back(p ? p->c_str() : nullptr);
  pg_result* r = PQexecParams(conn_, text.c_str(), static_cast<int>(values.size()), nullptr,
                              values.data(), nullptr, nullptr, /*text results*/ 0);
  const ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) Fail(what, r);
  return PgResult(r);
}

PgTransaction::PgTransaction(PgConnection& connection, Kind kind) : connection_(connection) {
  connection_.Exec(kind == Kind::kReadOnly ? "BEGIN READ ONLY" : "BEGIN", "begin a transaction");
  open_ = true;
}

PgTransaction::~PgTransaction() {
  if (!open_ || !connection_.ok()) return;
  try {
    connection_.Exec("ROLLBACK", "roll back");
  } catch (const FleetError&) {
    // The connection is gone; the server rolled back for us.
  }
}

void PgTransaction::Commit() {
  connection_.Exec("COMMIT", "commit");
  open_ = false;
}

}  // namespace ablation::fleet
