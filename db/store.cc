#include "db/store.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <utility>
#include <variant>

#include "db/migrations.h"
#include "db/page_token.h"
#include "db/sqlite.h"

namespace ablation::db {
namespace {

constexpr int kBusyTimeoutMs = 5000;
constexpr int32_t kDefaultRunPageSize = 50;
constexpr int32_t kDefaultMeasurementPageSize = 100;
constexpr int32_t kMaxPageSize = 1000;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int32_t PageSize(int32_t requested, int32_t fallback) {
  if (requested <= 0) return fallback;
  return std::min(requested, kMaxPageSize);
}

// ---- samples as a BLOB of little-endian doubles, whatever the host's byte order, so a
// database copied between machines (or read by a dashboard in Python) means the same.

std::vector<uint8_t> EncodeSamples(const std::vector<double>& samples) {
  std::vector<uint8_t> bytes(samples.size() * sizeof(double));
  for (size_t i = 0; i < samples.size(); ++i) {
    uint64_t bits = std::bit_cast<uint64_t>(samples[i]);
    for (size_t b = 0; b < sizeof(double); ++b) bytes[i * 8 + b] = (bits >> (8 * b)) & 0xFF;
  }
  return bytes;
}

std::vector<double> DecodeSamples(const std::vector<uint8_t>& bytes) {
  std::vector<double> samples(bytes.size() / sizeof(double));
  for (size_t i = 0; i < samples.size(); ++i) {
    uint64_t bits = 0;
    for (size_t b = 0; b < sizeof(double); ++b) bits |= uint64_t{bytes[i * 8 + b]} << (8 * b);
    samples[i] = std::bit_cast<double>(bits);
  }
  return samples;
}

std::string JoinReasons(const std::vector<std::string>& reasons) {
  std::string out;
  for (const auto& reason : reasons) {
    if (!out.empty()) out += ',';
    out += reason;
  }
  return out;
}

std::vector<std::string> SplitReasons(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// ---- runs

// ok / failed are computed, never stored, so they cannot drift from the rows they count.
constexpr const char* kRunSelect = R"sql(
SELECT r.id, r.kind, r.state, r.device_index, r.device_name, r.device_uuid,
       r.compute_capability, r.sm_count, r.driver_version, r.cuda_runtime_version,
       r.cublas_version, r.memory_bytes, r.l2_bytes, r.smem_per_block_optin, r.smem_per_sm,
       r.daemon_version, r.git_revision, r.request_json, r.requested_by, r.created_at_ms,
       r.started_at_ms, r.finished_at_ms, r.error, r.planned, r.clock_policy,
       CASE r.kind WHEN 'verify'
         THEN (SELECT count(*) FROM verifications v WHERE v.run_id = r.id AND v.passed = 1)
         ELSE (SELECT count(*) FROM measurements x WHERE x.run_id = r.id AND x.status = 'ok')
       END,
       CASE r.kind WHEN 'verify'
         THEN (SELECT count(*) FROM verifications v WHERE v.run_id = r.id AND v.passed = 0)
         ELSE (SELECT count(*) FROM measurements x WHERE x.run_id = r.id AND x.status = 'failed')
       END
FROM runs r)sql";

RunRecord ReadRun(const Statement& s) {
  Reader r(s);
  RunRecord run;
  run.id = r.Int();
  run.kind = r.Text();
  run.state = r.Text();
  run.device.index = r.Int32();
  run.device.name = r.Text();
  run.device.uuid = r.Text();
  run.device.compute_capability = r.Text();
  run.device.sm_count = r.Int32();
  run.device.driver_version = r.Text();
  run.device.cuda_runtime_version = r.Text();
  run.device.cublas_version = r.Text();
  run.device.memory_bytes = r.Int();
  run.device.l2_bytes = r.Int();
  run.device.smem_per_block_optin = r.Int();
  run.device.smem_per_sm = r.Int();
  run.daemon_version = r.Text();
  run.git_revision = r.Text();
  run.request_json = r.Text();
  run.requested_by = r.Text();
  run.created_at_ms = r.Int();
  run.started_at_ms = r.Int();
  run.finished_at_ms = r.Int();
  run.error = r.Text();
  run.planned = r.Int32();
  run.clock_policy = r.Text();
  run.ok = r.Int32();
  run.failed = r.Int32();
  return run;
}

// ---- measurements: one column list for INSERT and SELECT, bound and read in this order.

constexpr std::string_view kMeasurementColumns[] = {"run_id",
                                                    "sequence",
                                                    "variant",
                                                    "dtype",
                                                    "m",
                                                    "n",
                                                    "k",
                                                    "status",
                                                    "error",
                                                    "median_ms",
                                                    "mean_ms",
                                                    "stddev_ms",
                                                    "min_ms",
                                                    "max_ms",
                                                    "q1_ms",
                                                    "q3_ms",
                                                    "samples",
                                                    "noise",
                                                    "tflops",
                                                    "created_at_ms",
                                                    "total_seconds",
                                                    "l2",
                                                    "clock_policy",
                                                    "verification",
                                                    "telemetry_available",
                                                    "telemetry_note",
                                                    "sm_clock_mhz_mean",
                                                    "sm_clock_mhz_min",
                                                    "sm_clock_mhz_max",
                                                    "mem_clock_mhz_mean",
                                                    "mem_clock_mhz_min",
                                                    "mem_clock_mhz_max",
                                                    "power_w_mean",
                                                    "power_w_min",
                                                    "power_w_max",
                                                    "temperature_c_mean",
                                                    "temperature_c_min",
                                                    "temperature_c_max",
                                                    "throttle_reasons",
                                                    "throttled_samples",
                                                    "registers_per_thread",
                                                    "static_smem_bytes",
                                                    "dynamic_smem_bytes",
                                                    "local_bytes_per_thread",
                                                    "max_blocks_per_sm",
                                                    "max_warps_per_sm",
                                                    "theoretical_occupancy",
                                                    "limiter",
                                                    "threads_per_block",
                                                    "bytes_per_second",
                                                    "fragment_loads_per_second"};
constexpr int kMeasurementColumnCount = std::size(kMeasurementColumns);

const std::string& MeasurementInsertSql() {
  static const std::string sql = [] {
    std::string columns, values;
    for (std::string_view column : kMeasurementColumns) {
      if (!columns.empty()) columns += ", ", values += ", ";
      columns += column;
      values += '?';
    }
    return "INSERT INTO measurements (" + columns + ") VALUES (" + values + ")";
  }();
  return sql;
}

std::string MeasurementSelect(bool include_samples) {
  std::string sql = "SELECT measurements.id";
  for (std::string_view column : kMeasurementColumns) {
    sql += ", measurements.";
    sql += column;
  }
  if (include_samples) {
    sql +=
        ", measurement_samples.sample_ms FROM measurements LEFT JOIN measurement_samples "
        "ON measurement_samples.measurement_id = measurements.id";
  } else {
    sql += " FROM measurements";
  }
  return sql;
}

void BindMeasurement(Statement& s, const MeasurementRecord& x, int64_t created_at_ms) {
  const Telemetry& t = x.telemetry;
  const Occupancy& o = x.occupancy;
  const bool tele = t.available;
  Binder b(s);
  b.Int(x.run_id).Int(x.sequence).Text(x.variant).Text(x.dtype).Int(x.m).Int(x.n).Int(x.k);
  b.Text(x.status).Text(x.error);
  b.Real(x.stats.median_ms).Real(x.stats.mean_ms).Real(x.stats.stddev_ms);
  b.Real(x.stats.min_ms).Real(x.stats.max_ms).Real(x.stats.q1_ms).Real(x.stats.q3_ms);
  b.Int(x.stats.samples).Real(x.stats.noise).Real(x.tflops).Int(created_at_ms);
  b.Real(x.stats.total_seconds).Text(x.l2).Text(x.clock_policy).Text(x.verification);
  b.Int(tele ? 1 : 0).Text(t.note);
  b.RealIf(tele, t.sm_clock_mhz_mean).RealIf(tele, t.sm_clock_mhz_min);
  b.RealIf(tele, t.sm_clock_mhz_max).RealIf(tele, t.mem_clock_mhz_mean);
  b.RealIf(tele, t.mem_clock_mhz_min).RealIf(tele, t.mem_clock_mhz_max);
  b.RealIf(tele, t.power_w_mean).RealIf(tele, t.power_w_min).RealIf(tele, t.power_w_max);
  b.RealIf(tele, t.temperature_c_mean).RealIf(tele, t.temperature_c_min);
  b.RealIf(tele, t.temperature_c_max);
  b.Text(JoinReasons(t.throttle_reasons)).IntIf(tele, t.throttled_samples);
  b.Int(o.registers_per_thread).Int(o.static_smem_bytes).Int(o.dynamic_smem_bytes);
  b.Int(o.local_bytes_per_thread).Int(o.max_blocks_per_sm).Int(o.max_warps_per_sm);
  b.Real(o.theoretical_occupancy).Text(o.limiter).Int(o.threads_per_block);
  b.RealIf(x.bytes_per_second > 0, x.bytes_per_second);
  b.RealIf(x.fragment_loads_per_second > 0, x.fragment_loads_per_second);
  if (b.next() - 1 != kMeasurementColumnCount) {
    throw Error("internal: measurement binds out of step with its column list");
  }
}

MeasurementRecord ReadMeasurement(const Statement& s, bool include_samples) {
  Reader r(s);
  MeasurementRecord x;
  Telemetry& t = x.telemetry;
  Occupancy& o = x.occupancy;
  x.id = r.Int();
  x.run_id = r.Int();
  x.sequence = r.Int32();
  x.variant = r.Text();
  x.dtype = r.Text();
  x.m = r.Int();
  x.n = r.Int();
  x.k = r.Int();
  x.status = r.Text();
  x.error = r.Text();
  x.stats.median_ms = r.Real();
  x.stats.mean_ms = r.Real();
  x.stats.stddev_ms = r.Real();
  x.stats.min_ms = r.Real();
  x.stats.max_ms = r.Real();
  x.stats.q1_ms = r.Real();
  x.stats.q3_ms = r.Real();
  x.stats.samples = r.Int32();
  x.stats.noise = r.Real();
  x.tflops = r.Real();
  x.created_at_ms = r.Int();
  x.stats.total_seconds = r.Real();
  x.l2 = r.Text();
  x.clock_policy = r.Text();
  x.verification = r.Text();
  t.available = r.Bool();
  t.note = r.Text();
  t.sm_clock_mhz_mean = r.Real();
  t.sm_clock_mhz_min = r.Real();
  t.sm_clock_mhz_max = r.Real();
  t.mem_clock_mhz_mean = r.Real();
  t.mem_clock_mhz_min = r.Real();
  t.mem_clock_mhz_max = r.Real();
  t.power_w_mean = r.Real();
  t.power_w_min = r.Real();
  t.power_w_max = r.Real();
  t.temperature_c_mean = r.Real();
  t.temperature_c_min = r.Real();
  t.temperature_c_max = r.Real();
  t.throttle_reasons = SplitReasons(r.Text());
  t.throttled_samples = r.Int32();
  o.registers_per_thread = r.Int32();
  o.static_smem_bytes = r.Int();
  o.dynamic_smem_bytes = r.Int();
  o.local_bytes_per_thread = r.Int();
  o.max_blocks_per_sm = r.Int32();
  o.max_warps_per_sm = r.Int32();
  o.theoretical_occupancy = r.Real();
  o.limiter = r.Text();
  o.threads_per_block = r.Int32();
  x.bytes_per_second = r.Real();
  x.fragment_loads_per_second = r.Real();
  if (include_samples) x.sample_ms = DecodeSamples(s.ColumnBlob(r.next()));
  return x;
}

// ---- verifications

constexpr const char* kVerificationSelect = R"sql(
SELECT id, run_id, variant, dtype, m, n, k, against, max_abs, max_rel, rel_frobenius,
       mismatches, nan_count, unwritten_count, tolerance, passed, error, created_at_ms
FROM verifications)sql";

VerificationRecord ReadVerification(const Statement& s) {
  Reader r(s);
  VerificationRecord v;
  v.id = r.Int();
  v.run_id = r.Int();
  v.variant = r.Text();
  v.dtype = r.Text();
  v.m = r.Int();
  v.n = r.Int();
  v.k = r.Int();
  v.against = r.Text();
  v.max_abs = r.Real();
  v.max_rel = r.Real();
  v.rel_frobenius = r.Real();
  v.mismatches = r.Int();
  v.nan_count = r.Int();
  v.unwritten_count = r.Int();
  v.tolerance = r.Real();
  v.passed = r.Bool();
  v.error = r.Text();
  v.created_at_ms = r.Int();
  return v;
}

// A WHERE clause built from fixed fragments; values only ever travel as bound parameters.
class Where {
 public:
  void Add(const char* fragment, int64_t value) { Add(fragment, Param{value}); }
  void Add(const char* fragment, std::string value) { Add(fragment, Param{std::move(value)}); }
  std::string Sql() const { return sql_; }
  // Binds every parameter, then returns the next free index.
  int Bind(Statement& s) const {
    int index = 1;
    for (const Param& p : params_) {
      if (const auto* i = std::get_if<int64_t>(&p)) {
        s.BindInt64(index++, *i);
      } else {
        s.BindText(index++, std::get<std::string>(p));
      }
    }
    return index;
  }

 private:
  using Param = std::variant<int64_t, std::string>;
  void Add(const char* fragment, Param p) {
    sql_ += sql_.empty() ? " WHERE " : " AND ";
    sql_ += fragment;
    params_.push_back(std::move(p));
  }
  std::string sql_;
  std::vector<Param> params_;
};

[[noreturn]] void RefuseState(std::string_view state, std::string_view allowed) {
  throw Error(Error::Code::kInvalidArgument,
              "unknown run state '" + std::string(state) + "'; expected " + std::string(allowed));
}

}  // namespace

// ---------------------------------------------------------------- open

std::unique_ptr<Store> Store::Open(const std::string& path) {
  auto connection = std::make_unique<Connection>(path, Connection::Mode::kReadWrite);
  connection->Exec("PRAGMA busy_timeout = 5000");
  static_assert(kBusyTimeoutMs == 5000, "keep the PRAGMA above in step");
  // Before anything that writes (journal_mode=WAL rewrites the header): a newer database must
  // be left exactly as it was.
  RefuseNewerSchema(*connection);
  if (const std::string mode = connection->QueryText("PRAGMA journal_mode = WAL"); mode != "wal") {
    throw Error("database '" + path + "': cannot switch to WAL journal mode (got '" + mode +
                "'); WAL is needed so that readers do not block the daemon's writes");
  }
  // FULL, not WAL's usual NORMAL: a result committed must survive a power cut too; one fsync
  // per measurement costs nothing next to the measurement.
  connection->Exec("PRAGMA synchronous = FULL");
  connection->Exec("PRAGMA foreign_keys = ON");
  Migrate(*connection);
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

// ---------------------------------------------------------------- runs

int64_t Store::CreateRun(const RunRecord& run) {
  if (!IsRunState(run.state)) {
    RefuseState(run.state, "queued, running, succeeded, partial, failed or cancelled");
  }
  if (run.kind != kKindAblation && run.kind != kKindVerify) {
    throw Error(Error::Code::kInvalidArgument,
                "unknown run kind '" + run.kind + "'; expected ablation or verify");
  }
  std::lock_guard lock(mutex_);
  RequireWritable("CreateRun");
  Transaction transaction(*connection_);
  int64_t id = 0;
  {
    StatementScope s(Prepared(R"sql(
INSERT INTO runs (kind, state, device_index, device_name, device_uuid, compute_capability,
                  sm_count, driver_version, cuda_runtime_version, cublas_version, memory_bytes,
                  l2_bytes, smem_per_block_optin, smem_per_sm, daemon_version, git_revision,
                  request_json, requested_by, created_at_ms, started_at_ms, finished_at_ms,
                  error, planned, clock_policy)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?))sql"));
    const DeviceIdentity& d = run.device;
    Binder b(*s);
    b.Text(run.kind).Text(run.state).Int(d.index).Text(d.name).Text(d.uuid);
    b.Text(d.compute_capability).Int(d.sm_count).Text(d.driver_version);
    b.Text(d.cuda_runtime_version).Text(d.cublas_version).Int(d.memory_bytes).Int(d.l2_bytes);
    b.Int(d.smem_per_block_optin).Int(d.smem_per_sm).Text(run.daemon_version);
    b.Text(run.git_revision).Text(run.request_json).Text(run.requested_by);
    b.Int(run.created_at_ms != 0 ? run.created_at_ms : NowMs());
    b.IntOrNull(run.started_at_ms).IntOrNull(run.finished_at_ms).Text(run.error);
    b.Int(run.planned).Text(run.clock_policy);
    s->Step();
    id = connection_->LastInsertRowid();
  }
  for (const std::string& tag : run.tags) {
    StatementScope s(Prepared("INSERT OR IGNORE INTO run_tags (run_id, tag) VALUES (?, ?)"));
    s->BindInt64(1, id);
    s->BindText(2, tag);
    s->Step();
  }
  transaction.Commit();
  return id;
}

void Store::MarkRunStarted(int64_t run_id, const DeviceIdentity& d, int64_t started_at_ms) {
  std::lock_guard lock(mutex_);
  RequireWritable("MarkRunStarted");
  StatementScope s(Prepared(R"sql(
UPDATE runs SET state = 'running', device_index = ?, device_name = ?, device_uuid = ?,
                compute_capability = ?, sm_count = ?, driver_version = ?,
                cuda_runtime_version = ?, cublas_version = ?, memory_bytes = ?, l2_bytes = ?,
                smem_per_block_optin = ?, smem_per_sm = ?, started_at_ms = ?
WHERE id = ?)sql"));
  Binder b(*s);
  b.Int(d.index).Text(d.name).Text(d.uuid).Text(d.compute_capability).Int(d.sm_count);
  b.Text(d.driver_version).Text(d.cuda_runtime_version).Text(d.cublas_version);
  b.Int(d.memory_bytes).Int(d.l2_bytes).Int(d.smem_per_block_optin).Int(d.smem_per_sm);
  b.Int(started_at_ms).Int(run_id);
  s->Step();
  UpdateOneRun(run_id, "mark it started");
}

void Store::FinishRun(int64_t run_id, std::string_view state, std::string_view error,
                      int64_t finished_at_ms) {
  if (!IsFinalRunState(state)) {
    RefuseState(state, "a final state: succeeded, partial, failed or cancelled");
  }
  std::lock_guard lock(mutex_);
  RequireWritable("FinishRun");
  StatementScope s(
      Prepared("UPDATE runs SET state = ?, error = ?, finished_at_ms = ? WHERE id = ?"));
  Binder(*s).Text(state).Text(error).Int(finished_at_ms).Int(run_id);
  s->Step();
  UpdateOneRun(run_id, "finish it");
}

void Store::UpdateRunState(int64_t run_id, std::string_view state) {
  if (!IsRunState(state)) {
    RefuseState(state, "queued, running, succeeded, partial, failed or cancelled");
  }
  std::lock_guard lock(mutex_);
  RequireWritable("UpdateRunState");
  StatementScope s(Prepared("UPDATE runs SET state = ? WHERE id = ?"));
  Binder(*s).Text(state).Int(run_id);
  s->Step();
  UpdateOneRun(run_id, "update its state");
}

// ---------------------------------------------------------------- results

int64_t Store::InsertMeasurement(const MeasurementRecord& measurement) {
  std::lock_guard lock(mutex_);
  RequireWritable("InsertMeasurement");
  Transaction transaction(*connection_);
  // Checked here for a message that names the run; the foreign key would say only
  // "FOREIGN KEY constraint failed".
  RequireRunExists(measurement.run_id);
  int64_t id = 0;
  {
    StatementScope s(Prepared(MeasurementInsertSql()));
    BindMeasurement(*s, measurement,
                    measurement.created_at_ms != 0 ? measurement.created_at_ms : NowMs());
    s->Step();
    id = connection_->LastInsertRowid();
  }
  if (!measurement.sample_ms.empty()) {
    StatementScope s(
        Prepared("INSERT INTO measurement_samples (measurement_id, sample_count, sample_ms) "
                 "VALUES (?, ?, ?)"));
    const std::vector<uint8_t> blob = EncodeSamples(measurement.sample_ms);
    Binder(*s).Int(id).Int(static_cast<int64_t>(measurement.sample_ms.size())).Blob(blob);
    s->Step();
  }
  transaction.Commit();
  return id;
}

int64_t Store::InsertVerification(const VerificationRecord& v) {
  std::lock_guard lock(mutex_);
  RequireWritable("InsertVerification");
  Transaction transaction(*connection_);
  RequireRunExists(v.run_id);
  StatementScope s(Prepared(R"sql(
INSERT INTO verifications (run_id, variant, dtype, m, n, k, against, max_abs, max_rel,
                           rel_frobenius, mismatches, nan_count, unwritten_count, tolerance,
                           passed, error, created_at_ms)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?))sql"));
  Binder b(*s);
  b.Int(v.run_id).Text(v.variant).Text(v.dtype).Int(v.m).Int(v.n).Int(v.k).Text(v.against);
  b.Real(v.max_abs).Real(v.max_rel).Real(v.rel_frobenius).Int(v.mismatches).Int(v.nan_count);
  b.Int(v.unwritten_count).Real(v.tolerance).Int(v.passed ? 1 : 0).Text(v.error);
  b.Int(v.created_at_ms != 0 ? v.created_at_ms : NowMs());
  s->Step();
  const int64_t id = connection_->LastInsertRowid();
  transaction.Commit();
  return id;
}

// ---------------------------------------------------------------- reads

void Store::FillTags(RunRecord& run) {
  // rowid order: tags come back in the order they were given.
  StatementScope s(Prepared("SELECT tag FROM run_tags WHERE run_id = ? ORDER BY rowid"));
  s->BindInt64(1, run.id);
  while (s->Step()) run.tags.push_back(s->ColumnText(0));
}

std::optional<RunRecord> Store::ReadOneRun(const std::string& sql, int64_t bind_id) {
  std::optional<RunRecord> run;
  {
    StatementScope s(Prepared(sql));
    if (bind_id != 0) s->BindInt64(1, bind_id);
    if (s->Step()) run = ReadRun(*s);
  }
  if (run) FillTags(*run);
  return run;
}

std::optional<RunRecord> Store::GetRun(int64_t run_id) {
  std::lock_guard lock(mutex_);
  if (run_id == 0) return std::nullopt;  // 0 binds nothing in ReadOneRun; no run has id 0
  return ReadOneRun(std::string(kRunSelect) + " WHERE r.id = ?", run_id);
}

std::optional<RunRecord> Store::LatestRun() {
  std::lock_guard lock(mutex_);
  return ReadOneRun(std::string(kRunSelect) + " ORDER BY r.id DESC LIMIT 1", 0);
}

RunPage Store::ListRuns(const RunFilter& filter) {
  if (!filter.state.empty() && !IsRunState(filter.state)) {
    RefuseState(filter.state, "queued, running, succeeded, partial, failed or cancelled");
  }
  const int32_t page_size = PageSize(filter.page_size, kDefaultRunPageSize);
  const uint64_t fingerprint = FilterFingerprint({filter.tag, filter.state});
  Where where;
  if (!filter.page_token.empty()) {
    where.Add("r.id < ?", DecodePageToken(filter.page_token, 'r', fingerprint));
  }
  if (!filter.state.empty()) where.Add("r.state = ?", filter.state);
  if (!filter.tag.empty()) {
    where.Add("r.id IN (SELECT run_id FROM run_tags WHERE tag = ?)", filter.tag);
  }
  const std::string sql = kRunSelect + where.Sql() + " ORDER BY r.id DESC LIMIT ?";

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
    page.next_page_token = EncodePageToken('r', page.runs.back().id, fingerprint);
  }
  // Tags are written with their run and never change, so reading them apart is consistent.
  for (RunRecord& run : page.runs) FillTags(run);
  return page;
}

MeasurementPage Store::QueryMeasurements(const MeasurementFilter& f) {
  const int32_t page_size = PageSize(f.page_size, kDefaultMeasurementPageSize);
  const uint64_t fingerprint =
      FilterFingerprint({f.variant_glob, f.dtype, std::to_string(f.m), std::to_string(f.n),
                         std::to_string(f.k), std::to_string(f.run_id), f.tag,
                         std::to_string(f.since_ms), std::to_string(f.until_ms), f.status});
  Where where;
  if (!f.page_token.empty()) {
    where.Add("measurements.id > ?", DecodePageToken(f.page_token, 'm', fingerprint));
  }
  if (!f.variant_glob.empty()) where.Add("measurements.variant GLOB ?", f.variant_glob);
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
  if (!f.status.empty()) where.Add("measurements.status = ?", f.status);
  // Each combination of filters is its own SQL text and so its own cached statement: at most
  // 2^11, in practice a handful; each gets a plan that uses the index its filters allow.
  const std::string sql =
      MeasurementSelect(f.include_samples) + where.Sql() + " ORDER BY measurements.id LIMIT ?";

  std::lock_guard lock(mutex_);
  MeasurementPage page;
  StatementScope s(Prepared(sql));
  const int limit_index = where.Bind(*s);
  s->BindInt64(limit_index, page_size + 1);
  while (s->Step()) page.measurements.push_back(ReadMeasurement(*s, f.include_samples));
  if (static_cast<int32_t>(page.measurements.size()) > page_size) {
    page.measurements.pop_back();
    page.next_page_token = EncodePageToken('m', page.measurements.back().id, fingerprint);
  }
  return page;
}

std::vector<MeasurementRecord> Store::MeasurementsOfRun(int64_t run_id, bool include_samples) {
  std::lock_guard lock(mutex_);
  std::vector<MeasurementRecord> out;
  StatementScope s(Prepared(MeasurementSelect(include_samples) +
                            " WHERE measurements.run_id = ? ORDER BY measurements.sequence, "
                            "measurements.id"));
  s->BindInt64(1, run_id);
  while (s->Step()) out.push_back(ReadMeasurement(*s, include_samples));
  return out;
}

std::vector<VerificationRecord> Store::VerificationsOfRun(int64_t run_id) {
  std::lock_guard lock(mutex_);
  std::vector<VerificationRecord> out;
  StatementScope s(Prepared(std::string(kVerificationSelect) + " WHERE run_id = ? ORDER BY id"));
  s->BindInt64(1, run_id);
  while (s->Step()) out.push_back(ReadVerification(*s));
  return out;
}

// ---------------------------------------------------------------- recovery

std::vector<int64_t> Store::RunsInState(std::string_view state) {
  if (!IsRunState(state)) {
    RefuseState(state, "queued, running, succeeded, partial, failed or cancelled");
  }
  std::lock_guard lock(mutex_);
  std::vector<int64_t> ids;
  StatementScope s(Prepared("SELECT id FROM runs WHERE state = ? ORDER BY id"));
  s->BindText(1, state);
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
