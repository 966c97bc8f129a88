// The Store's results: measurements (with their raw samples) and verifications, written one
// committed transaction each and read back by run or by filter. Columns come from
// ablation.v1.Measurement / VerifyResult through RowMapping; written here by hand is what the
// .proto cannot say: measurement_samples, verifications.against, and "0 is now".
#include <span>
#include <utility>

#include "db/page_token.h"
#include "db/row_mapping.h"
#include "db/samples.h"
#include "db/sqlite.h"
#include "db/store.h"
#include "db/store_internal.h"
#include "db/where.h"

namespace ablation::db {
namespace {

using internal::Describe;

const RowMapping& MeasurementRow() { return RowMapping::Of<v1::Measurement>(); }
const RowMapping& VerificationRow() { return RowMapping::Of<v1::VerifyResult>(); }

// ---- measurements

const std::string& MeasurementSelect(bool include_samples) {
  static const std::string without =
      "SELECT " + MeasurementRow().SelectList("measurements.") + " FROM measurements";
  static const std::string with =
      "SELECT " + MeasurementRow().SelectList("measurements.") +
      ", measurement_samples.sample_ms, measurement_samples.sample_cycles, "
      "measurement_samples.sample_sm_mhz, measurement_samples.solo_sample_ms FROM measurements "
      "LEFT JOIN measurement_samples "
      "ON measurement_samples.measurement_id = measurements.id";
  return include_samples ? with : without;
}

v1::Measurement ReadMeasurement(const Statement& s, bool include_samples) {
  v1::Measurement x;
  const int next = MeasurementRow().Read(s, x);
  if (include_samples) {
    DecodeSamples(s.ColumnBlob(next), *x.mutable_sample_ms());
    DecodeSamples(s.ColumnBlob(next + 1), *x.mutable_sample_cycles());
    DecodeSamples(s.ColumnBlob(next + 2), *x.mutable_sample_sm_mhz());
    DecodeSamples(s.ColumnBlob(next + 3), *x.mutable_solo_sample_ms());
  }
  return x;
}

std::string StatusText(v1::MeasurementStatus status) {
  if (!v1::MeasurementStatus_IsValid(status)) {
    throw Error(Error::Code::kInvalidArgument, "measurement status " + Describe(status) +
                                                   " refused; expected ok, failed or "
                                                   "skipped");
  }
  return EnumText(status);
}

// ---- verifications

// The pre-v5 column `against`, kept for dashboards: the typed reference in words, "cpu",
// "cublas" or the reference variant's name ('' when unspecified).
std::string AgainstText(const v1::VerifyResult& v) {
  return v.reference() == v1::REFERENCE_VARIANT ? v.reference_variant() : EnumText(v.reference());
}

}  // namespace

// ---------------------------------------------------------------- results

int64_t Store::InsertMeasurement(const v1::Measurement& measurement) {
  if (measurement.status() == v1::MEASUREMENT_STATUS_UNSPECIFIED) {
    // The table's CHECK would refuse it too, but as "CHECK constraint failed".
    throw Error(Error::Code::kInvalidArgument,
                "measurement of " + measurement.variant() +
                    " has no status; expected ok, failed or skipped");
  }
  std::lock_guard lock(mutex_);
  RequireWritable("InsertMeasurement");
  Transaction transaction(*connection_);
  // Checked here for a message that names the run; the foreign key would say only
  // "FOREIGN KEY constraint failed".
  RequireRunExists(measurement.run_id());
  int64_t id = 0;
  {
    static const std::string sql = "INSERT INTO measurements (" + MeasurementRow().ColumnList() +
                                   ") VALUES (" + MeasurementRow().Placeholders() + ")";
    static const int created = MeasurementRow().Parameter("created_at_ms");
    StatementScope s(Prepared(sql));
    MeasurementRow().Bind(measurement, *s);
    if (measurement.created_at_ms() == 0) s->BindInt64(created, internal::NowMs());
    s->Step();
    id = connection_->LastInsertRowid();
  }
  if (!measurement.sample_ms().empty()) {
    StatementScope s(
        Prepared("INSERT INTO measurement_samples (measurement_id, sample_count, sample_ms, "
                 "sample_cycles, sample_sm_mhz, solo_sample_ms) VALUES (?, ?, ?, ?, ?, ?)"));
    auto blob = [](const google::protobuf::RepeatedField<double>& values) {
      return EncodeSamples(std::span<const double>(values.data(), values.size()));
    };
    // Cycles and clocks are per sample too, or empty where the GPU could not tell.
    Binder(*s)
        .Int(id)
        .Int(measurement.sample_ms_size())
        .Blob(blob(measurement.sample_ms()))
        .Blob(blob(measurement.sample_cycles()))
        .Blob(blob(measurement.sample_sm_mhz()))
        .Blob(blob(measurement.solo_sample_ms()));
    s->Step();
  }
  WriteMeasurementCounters(id, measurement);
  transaction.Commit();
  return id;
}

int64_t Store::InsertVerification(const v1::VerifyResult& verification) {
  std::lock_guard lock(mutex_);
  RequireWritable("InsertVerification");
  Transaction transaction(*connection_);
  RequireRunExists(verification.run_id());
  static const std::string sql = "INSERT INTO verifications (" + VerificationRow().ColumnList() +
                                 ", against) VALUES (" + VerificationRow().Placeholders() + ", ?)";
  static const int created = VerificationRow().Parameter("created_at_ms");
  StatementScope s(Prepared(sql));
  const int against = VerificationRow().Bind(verification, *s);
  s->BindText(against, AgainstText(verification));
  if (verification.created_at_ms() == 0) s->BindInt64(created, internal::NowMs());
  s->Step();
  const int64_t id = connection_->LastInsertRowid();
  transaction.Commit();
  return id;
}

// ---------------------------------------------------------------- reads

MeasurementPage Store::QueryMeasurements(const MeasurementFilter& f) {
  const std::string status =
      f.status == v1::MEASUREMENT_STATUS_UNSPECIFIED ? "" : StatusText(f.status);
  const int32_t page_size = internal::PageSize(f.page_size, internal::kDefaultMeasurementPageSize);
  // The status's text, as when statuses were strings: tokens handed out before stay valid.
  // Newest first is another order: its tokens are its own (and the oldest-first tokens handed
  // out before it existed stay valid).
  const std::string m = std::to_string(f.m), n = std::to_string(f.n), k = std::to_string(f.k),
                    run = std::to_string(f.run_id), since = std::to_string(f.since_ms),
                    until = std::to_string(f.until_ms);
  const uint64_t fingerprint =
      f.newest_first
          ? FilterFingerprint({f.variant_glob, f.dtype, m, n, k, run, f.tag, since, until, status,
                               "newest first"})
          : FilterFingerprint({f.variant_glob, f.dtype, m, n, k, run, f.tag, since, until, status});
  Where where;
  if (!f.page_token.empty()) {
    where.Add(f.newest_first ? "measurements.id < ?" : "measurements.id > ?",
              DecodePageToken(f.page_token, 'm', fingerprint));
  }
  // A pattern is matched against the few hundred names ever measured (measured_variants, v8),
  // not against every row: one that matches none of them ends here, before any scan.
  const bool pattern = f.variant_glob.find_first_of("*?[") != std::string::npos;
  if (pattern) {
    where.Add(
        "measurements.variant IN (SELECT variant FROM measured_variants WHERE variant GLOB ?)",
        f.variant_glob);
  } else if (!f.variant_glob.empty()) {
    where.Add("measurements.variant = ?", f.variant_glob);
  }
  if (!f.dtype.empty()) where.Add("measurements.dtype = ?", f.dtype);
  if (f.m != 0) where.Add("measurements.m = ?", f.m);
  if (f.n != 0) where.Add("measurements.n = ?", f.n);
  if (f.k != 0) where.Add("measurements.k = ?", f.k);
  if (f.run_id != 0) where.Add("measurements.run_id = ?", f.run_id);
  if (!f.tag.empty()) {
    where.Add("measurements.run_id IN (SELECT run_id FROM run_tags WHERE tag = ?)", f.tag);
  }
  if (f.since_ms != 0) where.Add("measurements.created_at_ms >= ?", f.since_ms);
  if (f.until_ms != 0) where.Add("measurements.created_at_ms < ?", f.until_ms);
  if (!status.empty()) where.Add("measurements.status = ?", status);
  // Each combination of filters is its own SQL text and so its own cached statement: at most
  // 2^11, in practice a handful; each gets a plan that uses the index its filters allow.
  const std::string sql = MeasurementSelect(f.include_samples) + where.Sql() +
                          (f.newest_first ? " ORDER BY measurements.id DESC LIMIT ?"
                                          : " ORDER BY measurements.id LIMIT ?");

  std::lock_guard lock(mutex_);
  MeasurementPage page;
  if (pattern &&
      !Exists("SELECT 1 FROM measured_variants WHERE variant GLOB ? LIMIT 1", f.variant_glob))
    return page;
  if (!f.tag.empty() && !Exists("SELECT 1 FROM run_tags WHERE tag = ? LIMIT 1", f.tag)) return page;
  StatementScope s(Prepared(sql));
  const int limit_index = where.Bind(*s);
  s->BindInt64(limit_index, page_size + 1);
  while (s->Step()) page.measurements.push_back(ReadMeasurement(*s, f.include_samples));
  if (static_cast<int32_t>(page.measurements.size()) > page_size) {
    page.measurements.pop_back();
    page.next_page_token = EncodePageToken('m', page.measurements.back().id(), fingerprint);
  }
  return page;
}

std::vector<v1::Measurement> Store::MeasurementsOfRun(int64_t run_id, bool include_samples) {
  std::lock_guard lock(mutex_);
  std::vector<v1::Measurement> out;
  StatementScope s(Prepared(MeasurementSelect(include_samples) +
                            " WHERE measurements.run_id = ? ORDER BY measurements.sequence, "
                            "measurements.id"));
  s->BindInt64(1, run_id);
  while (s->Step()) out.push_back(ReadMeasurement(*s, include_samples));
  return out;
}

std::vector<v1::VerifyResult> Store::VerificationsOfRun(int64_t run_id) {
  std::lock_guard lock(mutex_);
  static const std::string sql = "SELECT " + VerificationRow().SelectList() +
                                 " FROM verifications WHERE run_id = ? ORDER BY id";
  std::vector<v1::VerifyResult> out;
  StatementScope s(Prepared(sql));
  s->BindInt64(1, run_id);
  while (s->Step()) {
    v1::VerifyResult v;
    VerificationRow().Read(*s, v);
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace ablation::db
