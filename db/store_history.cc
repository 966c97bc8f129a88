// The Store's history read: ok measurements as series points, each with the provenance that
// keys its series (the run's hardware fingerprint, v15) and the run's start as its time; a
// point's figures are its solo span's where it has one (v18), else its window's, and a series is
// of one kind (SeriesRow::figures) and of one L2 mode (SeriesRow::l2).
#include <string>

#include "db/sqlite.h"
#include "db/store.h"
#include "db/where.h"

namespace ablation::db {
namespace {

bool IsPattern(const std::string& glob) { return glob.find_first_of("*?[") != std::string::npos; }

}  // namespace

bool Store::VariantMeasured(const std::string& variant_glob) {
  std::lock_guard lock(mutex_);
  return IsPattern(variant_glob)
             ? Exists("SELECT 1 FROM measured_variants WHERE variant GLOB ? LIMIT 1", variant_glob)
             : Exists("SELECT 1 FROM measured_variants WHERE variant = ? LIMIT 1", variant_glob);
}

std::vector<SeriesRow> Store::SeriesRows(const SeriesFilter& f) {
  Where where;
  where.Add("x.status = ?", std::string("ok"));
  if (IsPattern(f.variant_glob)) {
    where.Add("x.variant IN (SELECT variant FROM measured_variants WHERE variant GLOB ?)",
              f.variant_glob);
  } else {
    where.Add("x.variant = ?", f.variant_glob);
  }
  if (!f.dtype.empty()) where.Add("x.dtype = ?", f.dtype);
  if (f.m != 0) where.Add("x.m = ?", f.m);
  if (f.n != 0) where.Add("x.n = ?", f.n);
  if (f.k != 0) where.Add("x.k = ?", f.k);
  if (!f.regime.empty()) where.Add("x.regime = ?", f.regime);
  if (!f.device.empty()) {
    if (f.device.find_first_not_of("0123456789") == std::string::npos) {
      where.Add("r.device_index = ?", std::stoll(f.device));
    } else {
      where.Add("r.device_uuid = ?", f.device);
    }
  }
  if (f.since_ms != 0) where.Add("r.started_at_ms >= ?", f.since_ms);
  if (!f.tag.empty()) where.Add("x.run_id IN (SELECT run_id FROM run_tags WHERE tag = ?)", f.tag);
  if (f.run_id != 0) {
    // The series that have a point in that run: same fingerprint and item.
    where.Add(R"sql(EXISTS (SELECT 1 FROM measurements y JOIN runs q ON q.id = y.run_id
        WHERE y.run_id = ? AND y.status = 'ok' AND y.variant = x.variant AND y.dtype = x.dtype
          AND y.m = x.m AND y.n = x.n AND y.k = x.k AND y.regime = x.regime
          AND y.solo_measured = x.solo_measured AND y.l2 = x.l2
          AND q.hardware_fingerprint = r.hardware_fingerprint))sql",
              f.run_id);
  }
  const std::string sql = R"sql(SELECT r.hardware_fingerprint, x.variant, x.dtype, x.regime,
       r.device_name, r.device_uuid, x.m, x.n, x.k, x.run_id, x.id,
       coalesce(r.started_at_ms, r.created_at_ms),
       CASE WHEN x.solo_measured THEN x.solo_median_ms ELSE x.median_ms END,
       CASE WHEN x.solo_measured THEN x.solo_noise ELSE x.noise END,
       CASE WHEN x.solo_measured THEN x.solo_tflops ELSE x.tflops END,
       CASE WHEN x.solo_measured THEN 'solo' ELSE 'window' END AS figures,
       x.user_build_id, coalesce(k.version, 0), coalesce(k.source_sha256, ''), x.l2
FROM measurements x JOIN runs r ON r.id = x.run_id
LEFT JOIN user_kernel_builds b ON b.id = x.user_build_id AND x.user_build_id > 0
LEFT JOIN user_kernels k ON k.id = b.kernel_id)sql" +
                          where.Sql() +
                          " AND r.kind = 'ablation' ORDER BY r.hardware_fingerprint, x.variant, "
                          "x.dtype, x.m, x.n, x.k, x.regime, figures, x.l2, "
                          "coalesce(r.started_at_ms, "
                          "r.created_at_ms), x.run_id, x.id";
  std::lock_guard lock(mutex_);
  std::vector<SeriesRow> out;
  StatementScope s(Prepared(sql));
  where.Bind(*s);
  while (s->Step()) {
    SeriesRow row;
    row.fingerprint = s->ColumnText(0);
    row.variant = s->ColumnText(1);
    row.dtype = s->ColumnText(2);
    row.regime = s->ColumnText(3);
    row.device_name = s->ColumnText(4);
    row.device_uuid = s->ColumnText(5);
    row.m = s->ColumnInt64(6);
    row.n = s->ColumnInt64(7);
    row.k = s->ColumnInt64(8);
    row.run_id = s->ColumnInt64(9);
    row.measurement_id = s->ColumnInt64(10);
    row.time_ms = s->ColumnInt64(11);
    row.median_ms = s->ColumnDouble(12);
    row.noise = s->ColumnDouble(13);
    row.tflops = s->ColumnDouble(14);
    row.figures = s->ColumnText(15);
    row.user_build_id = s->ColumnInt64(16);
    row.version = s->ColumnInt64(17);
    row.source_sha256 = s->ColumnText(18);
    row.l2 = s->ColumnText(19);
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace ablation::db
