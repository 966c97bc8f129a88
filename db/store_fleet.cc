// The Store's side of a fleet's export: the daemon's identity and the outbox (schema v17). The
// outbox is filled by triggers (migrations.cc, MigrateV17) and drained by the exporter
// (server/core/fleet/exporter.h), which deletes a row only once PostgreSQL committed its run.
#include "db/sqlite.h"
#include "db/store.h"
#include "db/store_internal.h"

namespace ablation::db {

std::string Store::DaemonId() {
  std::lock_guard lock(mutex_);
  StatementScope s(Prepared("SELECT daemon_id FROM daemon_identity WHERE only_row = 1"));
  if (!s->Step()) {
    throw Error(Error::Code::kStorage,
                "database '" + path_ + "' has no daemon_identity row (schema v17 makes it)");
  }
  return s->ColumnText(0);
}

std::vector<OutboxEntry> Store::PendingExports(int limit) {
  std::lock_guard lock(mutex_);
  std::vector<OutboxEntry> entries;
  StatementScope s(
      Prepared("SELECT run_id, enqueued_at_ms, attempts, last_error FROM fleet_outbox "
               "ORDER BY enqueued_at_ms, run_id LIMIT ?"));
  s->BindInt64(1, limit);
  while (s->Step()) {
    Reader r(*s);
    OutboxEntry e;
    e.run_id = r.Int();
    e.enqueued_at_ms = r.Int();
    e.attempts = r.Int();
    e.last_error = r.Text();
    entries.push_back(std::move(e));
  }
  return entries;
}

OutboxBacklog Store::ExportBacklog() {
  std::lock_guard lock(mutex_);
  StatementScope s(Prepared("SELECT count(*), coalesce(min(enqueued_at_ms), 0) FROM fleet_outbox"));
  OutboxBacklog backlog;
  if (s->Step()) {
    backlog.runs = s->ColumnInt64(0);
    backlog.oldest_enqueued_at_ms = s->ColumnInt64(1);
  }
  return backlog;
}

void Store::MarkExported(int64_t run_id) {
  std::lock_guard lock(mutex_);
  RequireWritable("MarkExported");
  StatementScope s(Prepared("DELETE FROM fleet_outbox WHERE run_id = ?"));
  s->BindInt64(1, run_id);
  s->Step();
}

void Store::RecordExportFailure(int64_t run_id, std::string_view error) {
  std::lock_guard lock(mutex_);
  RequireWritable("RecordExportFailure");
  StatementScope s(
      Prepared("UPDATE fleet_outbox SET attempts = attempts + 1, last_error = ? WHERE run_id = ?"));
  Binder(*s).Text(error).Int(run_id);
  s->Step();
}

}  // namespace ablation::db
