#include "db/fleet/fleet_writer.h"

#include <google/protobuf/util/json_util.h>

#include <cstdio>

#include "common/enum_words.h"

namespace ablation::fleet {
namespace {

// The message as JSON with the .proto's own field names, so that views and dashboards read
// run->>'clock_policy' as the schema names it.
std::string Json(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string json;
  const auto status = google::protobuf::util::MessageToJsonString(message, &json, options);
  if (!status.ok()) {
    throw FleetError("cannot write " + message.GetTypeName() +
                     " as JSON: " + std::string(status.message()));
  }
  return json;
}

// Unix milliseconds as a timestamptz parameter; 0 ("not yet") is NULL.
PgParam Time(int64_t ms) {
  if (ms == 0) return std::nullopt;
  return std::to_string(ms);
}

// Text arrays in PostgreSQL's literal form, every element quoted and escaped.
std::string TextArray(const google::protobuf::RepeatedPtrField<std::string>& items) {
  std::string out = "{";
  for (const std::string& item : items) {
    if (out.size() > 1) out += ',';
    out += '"';
    for (char c : item) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

std::string Real(double v) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
}

}  // namespace

ExportOutcome ExportRun(PgConnection& c, const DaemonIdentity& daemon, const RunExport& e) {
  const v1::Run& run = e.run;
  const std::string run_id = std::to_string(run.id());
  PgTransaction transaction(c);
  c.Query(
      R"sql(INSERT INTO ablationd.daemons (daemon_id, host_name, node_labels)
VALUES ($1, $2, $3)
ON CONFLICT (daemon_id) DO UPDATE
  SET host_name = EXCLUDED.host_name, node_labels = EXCLUDED.node_labels,
    last_export_at = now())sql",
      {daemon.daemon_id, daemon.host_name, daemon.node_labels}, "record the daemon");
  PgResult inserted = c.Query(
      R"sql(INSERT INTO ablationd.runs (daemon_id, run_id, host_name, kind, state, tags,
  created_at, started_at, finished_at, device_name, device_uuid, hardware_fingerprint, regime,
  node_labels, run)
VALUES ($1, $2, $3, $4, $5, $6::text[], to_timestamp($7::double precision / 1000),
  to_timestamp($8::double precision / 1000), to_timestamp($9::double precision / 1000), $10, $11,
  $12, $13, $14, $15::jsonb)
ON CONFLICT (daemon_id, run_id) DO NOTHING RETURNING run_id)sql",
      {daemon.daemon_id, run_id, run.host_name().empty() ? daemon.host_name : run.host_name(),
       common::EnumWord(run.kind()), common::EnumWord(run.state()), TextArray(run.tags()),
       Time(run.created_at_ms()), Time(run.started_at_ms()), Time(run.finished_at_ms()),
       run.device().name(), run.device().uuid(), run.device().hardware_fingerprint(),
       common::EnumWord(run.regime()), run.node_labels(), Json(run)},
      "insert run " + run_id);
  if (inserted.rows() == 0) return ExportOutcome::kAlreadyThere;  // rolled back: nothing new

  for (const v1::Measurement& m : e.measurements) {
    // The solo span's figures where the row has one (fleet schema v3); NULL else.
    const bool solo = m.solo().solo_measured();
    c.Query(
        R"sql(INSERT INTO ablationd.measurements (daemon_id, run_id, measurement_id, variant,
  dtype, m, n, k, regime, status, median_ms, noise, tflops, created_at, measurement, solo_median_ms,
  solo_noise, solo_tflops, l2)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13,
  to_timestamp($14::double precision / 1000), $15::jsonb, $16, $17, $18, $19)
ON CONFLICT (daemon_id, measurement_id) DO NOTHING)sql",
        {daemon.daemon_id, run_id, std::to_string(m.id()), m.variant(), m.dtype(),
         std::to_string(m.shape().m()), std::to_string(m.shape().n()),
         std::to_string(m.shape().k()), common::EnumWord(m.regime()), common::EnumWord(m.status()),
         Real(m.stats().median_ms()), Real(m.stats().noise()), Real(m.tflops()),
         Time(m.created_at_ms()), Json(m), solo ? Real(m.solo().solo_median_ms()) : PgParam(),
         solo ? Real(m.solo().solo_noise()) : PgParam(),
         solo ? Real(m.solo().solo_tflops()) : PgParam(), common::EnumWord(m.l2())},
        "insert measurement " + std::to_string(m.id()) + " of run " + run_id);
  }
  for (const v1::VerifyResult& v : e.verifications) {
    c.Query(
        R"sql(INSERT INTO ablationd.verifications (daemon_id, run_id, verification_id, variant,
  passed, verification) VALUES ($1, $2, $3, $4, $5, $6::jsonb)
ON CONFLICT (daemon_id, verification_id) DO NOTHING)sql",
        {daemon.daemon_id, run_id, std::to_string(v.id()), v.variant(),
         v.passed() ? "true" : "false", Json(v)},
        "insert verification " + std::to_string(v.id()) + " of run " + run_id);
  }
  transaction.Commit();
  return ExportOutcome::kExported;
}

}  // namespace ablation::fleet
