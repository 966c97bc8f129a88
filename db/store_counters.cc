// The Store's hardware counters: one row of `counters` per metric of a profiled launch (schema
// v9, db/schema.md). A measurement's rows go in with the measurement (same transaction, as its
// samples do), so a row a client saw in the run's stream has its counters on disk too; a Profile
// call's rows belong to no run. A row with metric '' carries only a note: why that launch has no
// counters (profiling refused), shown as Measurement.counters_note.
#include "db/sqlite.h"
#include "db/store.h"
#include "db/store_internal.h"

namespace ablation::db {
namespace {

// The columns written, in one order, for both kinds of row.
constexpr const char* kInsert =
    "INSERT INTO counters (measurement_id, run_id, variant, dtype, m, n, k, device_uuid, arch, "
    "metric, ncu_name, value, unit, tool, tool_version, note, created_at_ms) VALUES ";

// A measurement's rows take the GPU and architecture from its run: the measurement does not
// carry them, and they must be the run's.
const std::string& MeasurementInsert() {
  static const std::string sql =
      std::string(kInsert) +
      "(?1, ?2, ?3, ?4, ?5, ?6, ?7, (SELECT device_uuid FROM runs WHERE id = ?2), "
      "(SELECT CASE WHEN compute_capability = '' THEN '' ELSE 'sm_' || "
      "replace(compute_capability, '.', '') END FROM runs WHERE id = ?2), "
      "?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)";
  return sql;
}

const std::string& ProfileInsert() {
  static const std::string sql = std::string(kInsert) +
                                 "(NULL, NULL, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
                                 "?12, ?13, ?14, ?15)";
  return sql;
}

// metric .. created_at_ms, from `first` on.
void BindCounter(Statement& s, int first, const v1::Counter& c, int64_t created_at_ms) {
  Binder(s, first)
      .Text(c.metric())
      .Text(c.ncu_name())
      .RealIf(c.has_value(), c.value())
      .Text(c.unit())
      .Text(c.tool())
      .Text(c.tool_version())
      .Text(c.note())
      .Int(created_at_ms);
}

}  // namespace

void Store::WriteMeasurementCounters(int64_t measurement_id, const v1::Measurement& m) {
  if (m.counters().empty() && m.counters_note().empty()) return;
  const int64_t created = m.created_at_ms() != 0 ? m.created_at_ms() : internal::NowMs();
  std::vector<v1::Counter> rows(m.counters().begin(), m.counters().end());
  if (!m.counters_note().empty()) {
    v1::Counter note;
    note.set_note(m.counters_note());
    rows.push_back(std::move(note));
  }
  for (const auto& c : rows) {
    StatementScope s(Prepared(MeasurementInsert()));
    Binder(*s)
        .Int(measurement_id)
        .Int(m.run_id())
        .Text(m.variant())
        .Text(m.dtype())
        .Int(m.shape().m())
        .Int(m.shape().n())
        .Int(m.shape().k());
    BindCounter(*s, 8, c, created);
    s->Step();
  }
}

void Store::InsertProfiledKernel(const v1::ProfiledKernel& kernel, std::string_view device_uuid,
                                 std::string_view arch) {
  std::lock_guard lock(mutex_);
  RequireWritable("InsertProfiledKernel");
  Transaction transaction(*connection_);
  const int64_t created = internal::NowMs();
  for (const auto& c : kernel.counters()) {
    StatementScope s(Prepared(ProfileInsert()));
    Binder(*s)
        .Text(kernel.variant())
        .Text(kernel.dtype())
        .Int(kernel.shape().m())
        .Int(kernel.shape().n())
        .Int(kernel.shape().k())
        .Text(device_uuid)
        .Text(arch);
    BindCounter(*s, 8, c, created);
    s->Step();
  }
  transaction.Commit();
}

void Store::FillCounters(std::vector<v1::Measurement>& measurements) {
  std::lock_guard lock(mutex_);
  for (auto& m : measurements) {
    StatementScope s(
        Prepared("SELECT metric, ncu_name, value, unit, tool, tool_version, note FROM counters "
                 "WHERE measurement_id = ? ORDER BY id"));
    s->BindInt64(1, m.id());
    while (s->Step()) {
      if (s->ColumnText(0).empty()) {
        m.set_counters_note(s->ColumnText(6));
        continue;
      }
      v1::Counter* c = m.add_counters();
      c->set_metric(s->ColumnText(0));
      c->set_ncu_name(s->ColumnText(1));
      if (!s->IsNull(2)) c->set_value(s->ColumnDouble(2));
      c->set_unit(s->ColumnText(3));
      c->set_tool(s->ColumnText(4));
      c->set_tool_version(s->ColumnText(5));
      c->set_note(s->ColumnText(6));
    }
  }
}

}  // namespace ablation::db
