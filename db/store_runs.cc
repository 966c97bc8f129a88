// The Store's runs: created, started, finished, listed, and recovered after a crash. Columns
// come from ablation.v1.Run through RowMapping; what is written here by hand is what the .proto
// cannot say: run_tags, the computed ok / failed, and "0 is NULL" for the times not yet reached.
#include <utility>

#include "db/page_token.h"
#include "db/row_mapping.h"
#include "db/sqlite.h"
#include "db/store.h"
#include "db/store_internal.h"
#include "db/where.h"

namespace ablation::db {
namespace {

using internal::Describe;
using internal::kAnyRunState;
using internal::RunStateText;

const RowMapping& RunRow() { return RowMapping::Of<v1::Run>(); }
const RowMapping& DeviceColumns() { return RowMapping::Of<v1::DeviceIdentity>(); }

// ok / failed are computed, never stored, so they cannot drift from the rows they count. The
// literals are the EnumText of RUN_KIND_VERIFY and MEASUREMENT_STATUS_OK / _FAILED.
const std::string& RunSelect() {
  static const std::string sql = "SELECT " + RunRow().SelectList("r.") + R"sql(,
       CASE r.kind WHEN 'verify'
         THEN (SELECT count(*) FROM verifications v WHERE v.run_id = r.id AND v.passed = 1)
         ELSE (SELECT count(*) FROM measurements x WHERE x.run_id = r.id AND x.status = 'ok')
       END,
       CASE r.kind WHEN 'verify'
         THEN (SELECT count(*) FROM verifications v WHERE v.run_id = r.id AND v.passed = 0)
         ELSE (SELECT count(*) FROM measurements x WHERE x.run_id = r.id AND x.status = 'failed')
       END
FROM runs r)sql";
  return sql;
}

v1::Run ReadRun(const Statement& s) {
  v1::Run run;
  const int next = RunRow().Read(s, run);
  run.set_ok(static_cast<int32_t>(s.ColumnInt64(next)));
  run.set_failed(static_cast<int32_t>(s.ColumnInt64(next + 1)));
  return run;
}

}  // namespace

// ---------------------------------------------------------------- runs

int64_t Store::CreateRun(const v1::Run& run) {
  RunStateText(run.state(), kAnyRunState);
  if (run.kind() == v1::RUN_KIND_UNSPECIFIED || !v1::RunKind_IsValid(run.kind())) {
    throw Error(Error::Code::kInvalidArgument,
                "run kind " + Describe(run.kind()) + " refused; expected ablation or verify");
  }
  std::lock_guard lock(mutex_);
  RequireWritable("CreateRun");
  Transaction transaction(*connection_);
  int64_t id = 0;
  {
    static const std::string sql =
        "INSERT INTO runs (" + RunRow().ColumnList() + ") VALUES (" + RunRow().Placeholders() + ")";
    static const int created = RunRow().Parameter("created_at_ms");
    static const int started = RunRow().Parameter("started_at_ms");
    static const int finished = RunRow().Parameter("finished_at_ms");
    StatementScope s(Prepared(sql));
    RunRow().Bind(run, *s);
    if (run.created_at_ms() == 0) s->BindInt64(created, internal::NowMs());
    // Not `optional` in the .proto (0 there means "not yet"), but NULL in the table until it
    // happens (db/schema.md), so that the views' coalesce() and duration_s see no time, not 1970.
    if (run.started_at_ms() == 0) s->BindNull(started);
    if (run.finished_at_ms() == 0) s->BindNull(finished);
    s->Step();
    id = connection_->LastInsertRowid();
  }
  for (const std::string& tag : run.tags()) {
    StatementScope s(Prepared("INSERT OR IGNORE INTO run_tags (run_id, tag) VALUES (?, ?)"));
    s->BindInt64(1, id);
    s->BindText(2, tag);
    s->Step();
  }
  transaction.Commit();
  return id;
}

void Store::MarkRunStarted(int64_t run_id, const v1::DeviceIdentity& device,
                           int64_t started_at_ms) {
  std::lock_guard lock(mutex_);
  RequireWritable("MarkRunStarted");
  // The device's columns are those of Run.device: the same mapping, flattened the same way.
  static const std::string sql = "UPDATE runs SET state = 'running', " +
                                 DeviceColumns().Assignments() + ", started_at_ms = ? WHERE id = ?";
  StatementScope s(Prepared(sql));
  const int next = DeviceColumns().Bind(device, *s);
  s->BindInt64(next, started_at_ms);
  s->BindInt64(next + 1, run_id);
  s->Step();
  UpdateOneRun(run_id, "mark it started");
}

void Store::FinishRun(int64_t run_id, v1::RunState state, std::string_view error,
                      int64_t finished_at_ms) {
  if (!IsFinalRunState(state)) {
    throw Error(Error::Code::kInvalidArgument,
                "run state " + Describe(state) +
                    " is not final; expected succeeded, partial, failed or cancelled");
  }
  std::lock_guard lock(mutex_);
  RequireWritable("FinishRun");
  StatementScope s(
      Prepared("UPDATE runs SET state = ?, error = ?, finished_at_ms = ? WHERE id = ?"));
  Binder(*s).Text(EnumText(state)).Text(error).Int(finished_at_ms).Int(run_id);
  s->Step();
  UpdateOneRun(run_id, "finish it");
}

void Store::SetCancelledBy(int64_t run_id, std::string_view who) {
  std::lock_guard lock(mutex_);
  RequireWritable("SetCancelledBy");
  StatementScope s(Prepared("UPDATE runs SET cancelled_by = ? WHERE id = ?"));
  Binder(*s).Text(who).Int(run_id);
  s->Step();
  UpdateOneRun(run_id, "record who cancelled it");
}

void Store::UpdateRunState(int64_t run_id, v1::RunState state) {
  const std::string text = RunStateText(state, kAnyRunState);
  std::lock_guard lock(mutex_);
  RequireWritable("UpdateRunState");
  StatementScope s(Prepared("UPDATE runs SET state = ? WHERE id = ?"));
  Binder(*s).Text(text).Int(run_id);
  s->Step();
  UpdateOneRun(run_id, "update its state");
}

// ---------------------------------------------------------------- reads

void Store::FillTags(v1::Run& run) {
  // rowid order: tags come back in the order they were given.
  StatementScope s(Prepared("SELECT tag FROM run_tags WHERE run_id = ? ORDER BY rowid"));
  s->BindInt64(1, run.id());
  while (s->Step()) run.add_tags(s->ColumnText(0));
}

std::optional<v1::Run> Store::ReadOneRun(const std::string& sql, int64_t bind_id) {
  std::optional<v1::Run> run;
  {
    StatementScope s(Prepared(sql));
    if (bind_id != 0) s->BindInt64(1, bind_id);
    if (s->Step()) run = ReadRun(*s);
  }
  if (run) FillTags(*run);
  return run;
}

std::optional<v1::Run> Store::GetRun(int64_t run_id) {
  std::lock_guard lock(mutex_);
  if (run_id == 0) return std::nullopt;  // 0 binds nothing in ReadOneRun; no run has id 0
  return ReadOneRun(RunSelect() + " WHERE r.id = ?", run_id);
}

std::optional<v1::Run> Store::LatestRun() {
  std::lock_guard lock(mutex_);
  return ReadOneRun(RunSelect() + " ORDER BY r.id DESC LIMIT 1", 0);
}

RunPage Store::ListRuns(const RunFilter& filter) {
  const std::string state =
      filter.state == v1::RUN_STATE_UNSPECIFIED ? "" : RunStateText(filter.state, kAnyRunState);
  const int32_t page_size = internal::PageSize(filter.page_size, internal::kDefaultRunPageSize);
  // The state's text, as when states were strings: tokens handed out before stay valid.
  const uint64_t fingerprint = FilterFingerprint({filter.tag, state});
  Where where;
  if (!filter.page_token.empty()) {
    where.Add("r.id < ?", DecodePageToken(filter.page_token, 'r', fingerprint));
  }
  if (!state.empty()) where.Add("r.state = ?", state);
  if (!filter.tag.empty()) {
    where.Add("r.id IN (SELECT run_id FROM run_tags WHERE tag = ?)", filter.tag);
  }
  const std::string sql = RunSelect() + where.Sql() + " ORDER BY r.id DESC LIMIT ?";

  std::lock_guard lock(mutex_);
  RunPage page;
  {
    StatementScope s(Prepared(sql));
    const int limit_index = where.Bind(*s);
    // One more than asked tells whether another page exists without a second query.
    s->BindInt64(limit_index, page_size + 1);
    while (s->Step()) page.runs.push_back(ReadRun(*s));
  }
  if (static_cast<int32_t>(page.runs.size()) > page_size) {
    page.runs.pop_back();
    page.next_page_token = EncodePageToken('r', page.runs.back().id(), fingerprint);
  }
  // Tags are written with their run and never change, so reading them apart is consistent.
  for (v1::Run& run : page.runs) FillTags(run);
  return page;
}

// ---------------------------------------------------------------- recovery

std::vector<int64_t> Store::RunsInState(v1::RunState state) {
  const std::string text = RunStateText(state, kAnyRunState);
  std::lock_guard lock(mutex_);
  std::vector<int64_t> ids;
  StatementScope s(Prepared("SELECT id FROM runs WHERE state = ? ORDER BY id"));
  s->BindText(1, text);
  while (s->Step()) ids.push_back(s->ColumnInt64(0));
  return ids;
}

std::vector<int64_t> Store::MarkInterruptedRuns(int64_t finished_at_ms, std::string_view reason) {
  std::lock_guard lock(mutex_);
  RequireWritable("MarkInterruptedRuns");
  Transaction transaction(*connection_);
  std::vector<int64_t> ids;
  {
    StatementScope s(
        Prepared("SELECT id FROM runs WHERE state IN ('queued', 'running') ORDER BY id"));
    while (s->Step()) ids.push_back(s->ColumnInt64(0));
  }
  {
    // An error the run already had is kept: it may be the reason the daemon died.
    StatementScope s(Prepared(R"sql(
UPDATE runs SET state = 'failed', finished_at_ms = ?2,
                error = CASE WHEN error = '' THEN ?1 ELSE error || '; ' || ?1 END
WHERE state IN ('queued', 'running'))sql"));
    s->BindInt64(2, finished_at_ms);
    s->BindText(1, reason);
    s->Step();
  }
  transaction.Commit();
  return ids;
}

}  // namespace ablation::db
