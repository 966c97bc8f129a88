#include "db/fleet/fleet_reader.h"

#include <google/protobuf/util/json_util.h>

#include "common/variant_names.h"
#include "db/fleet/fleet_schema.h"

namespace ablation::fleet {
namespace {

// The WHERE of a query built with its parameters numbered in order, so they cannot drift.
class Where {
 public:
  void Add(const std::string& condition_with_hole, PgParam value) {
    params_.push_back(std::move(value));
    std::string c = condition_with_hole;
    const size_t hole = c.find('?');
    c.replace(hole, 1, "$" + std::to_string(params_.size()));
    sql_ += (sql_.empty() ? " WHERE " : " AND ") + c;
  }
  void AddNode(const std::string& node, const char* daemon_column, const char* host_column) {
    if (node.empty()) return;
    // A host name, "host/prefix", or a daemon id's prefix.
    const size_t slash = node.find('/');
    if (slash != std::string::npos) {
      Add(std::string(host_column) + " = ?", node.substr(0, slash));
      Add(std::string(daemon_column) + " LIKE ? || '%'", node.substr(slash + 1));
    } else {
      params_.push_back(node);
      const std::string n = "$" + std::to_string(params_.size());
      sql_ += (sql_.empty() ? " WHERE " : " AND ") + std::string("(") + host_column + " = " + n +
              " OR " + daemon_column + " LIKE " + n + " || '%')";
    }
  }
  const std::string& sql() const { return sql_; }
  std::vector<PgParam>& params() { return params_; }

 private:
  std::string sql_;
  std::vector<PgParam> params_;
};

std::string NodeName(const std::string& host, const std::string& daemon_id) {
  return host + "/" + daemon_id.substr(0, 8);
}

template <class M>
void FromJson(const std::string& json, M* message, const std::string& what) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;  // rows written by a newer daemon
  const auto status = google::protobuf::util::JsonStringToMessage(json, message, options);
  if (!status.ok()) {
    throw FleetError("the fleet database's " + what + " is not a " + message->GetTypeName() + ": " +
                     std::string(status.message()));
  }
}

void AddVariant(Where& where, const std::string& glob, const char* column) {
  if (glob.empty()) return;
  if (!common::IsGlob(glob)) {
    where.Add(std::string(column) + " = ?", glob);
  } else {
    where.Add(std::string(column) + " ~ ?", GlobToRegex(glob));
  }
}

}  // namespace

std::string GlobToRegex(const std::string& glob) {
  std::string out = "^";
  bool in_class = false;
  for (char c : glob) {
    if (in_class) {
      if (c == ']') in_class = false;
      if (c == '\\') out += '\\';
      out += c;
    } else if (c == '*') {
      out += ".*";
    } else if (c == '?') {
      out += '.';
    } else if (c == '[') {
      in_class = true;
      out += c;
    } else {
      if (std::string_view("\\.^$|()+{}").find(c) != std::string_view::npos) out += '\\';
      out += c;
    }
  }
  return out + "$";
}

std::vector<history::SeriesRow> ReadSeriesRows(PgConnection& connection,
                                               const std::string& where_sql,
                                               const std::vector<PgParam>& params,
                                               std::vector<std::string>* daemon_ids) {
  // A daemon is named by the host it exported from last (ablationd.daemons), so that its points
  // stay one series, in time order, even across a renamed node.
  const std::string sql =
      "SELECT hardware_fingerprint, variant, dtype, regime, device_name, device_uuid, m, n, k, "
      "run_id, measurement_id, (extract(epoch FROM time) * 1000)::bigint, median_ms, noise, "
      "tflops, coalesce((SELECT d.host_name FROM ablationd.daemons d "
      "WHERE d.daemon_id = p.daemon_id), host_name) AS node_host, daemon_id, figures, l2 "
      "FROM ablationd.fleet_points p" +
      where_sql +
      " ORDER BY hardware_fingerprint, variant, dtype, m, n, k, regime, figures, l2, node_host, "
      "daemon_id, time, run_id, measurement_id";
  PgResult r = connection.Query(sql, params, "read the series");
  std::vector<history::SeriesRow> rows;
  for (int i = 0; i < r.rows(); ++i) {
    history::SeriesRow row;
    row.fingerprint = r.Text(i, 0);
    row.variant = r.Text(i, 1);
    row.dtype = r.Text(i, 2);
    row.regime = r.Text(i, 3);
    row.device_name = r.Text(i, 4);
    row.device_uuid = r.Text(i, 5);
    row.m = r.Int(i, 6);
    row.n = r.Int(i, 7);
    row.k = r.Int(i, 8);
    row.run_id = r.Int(i, 9);
    row.measurement_id = r.Int(i, 10);
    row.time_ms = r.Int(i, 11);
    row.median_ms = r.Real(i, 12);
    row.noise = r.Real(i, 13);
    row.tflops = r.Real(i, 14);
    row.node = NodeName(r.Text(i, 15), r.Text(i, 16));
    row.figures = r.Text(i, 17);
    row.l2 = r.Text(i, 18);
    if (daemon_ids) daemon_ids->push_back(r.Text(i, 16));
    rows.push_back(std::move(row));
  }
  return rows;
}

FleetReader::FleetReader(const std::string& conninfo)
    : connection_(std::make_unique<PgConnection>(conninfo)) {
  RequireFleetSchema(*connection_);
}

std::string FleetReader::ResolveVariant(const std::string& selector) {
  const std::string resolved = common::CanonicalVariantSelector(selector);
  if (resolved.empty() || common::IsGlob(resolved)) return resolved;
  PgResult known =
      connection_->Query("SELECT EXISTS (SELECT 1 FROM ablationd.measurements WHERE variant = $1)",
                         {resolved}, "look for variant '" + resolved + "'");
  if (known.Text(0, 0) == "t") return resolved;
  PgResult all = connection_->Query("SELECT DISTINCT variant FROM ablationd.measurements", {},
                                    "read the variants measured");
  std::vector<std::string> names;
  for (int i = 0; i < all.rows(); ++i) names.push_back(all.Text(i, 0));
  std::string message = "no variant '" + selector + "'";
  if (resolved != selector) message += " (" + resolved + ")";
  message += " was ever measured in the fleet database";
  const std::vector<std::string> near = common::ClosestNames(names, selector);
  for (size_t i = 0; i < near.size(); ++i) message += (i ? ", " : "; the nearest: ") + near[i];
  throw FleetError(message);
}

std::vector<history::SeriesRow> FleetReader::SeriesRows(const FleetSeriesFilter& f) {
  PgTransaction transaction(*connection_, PgTransaction::Kind::kReadOnly);
  Where where;
  AddVariant(where, ResolveVariant(f.variant_glob), "variant");
  if (!f.dtype.empty()) where.Add("dtype = ?", f.dtype);
  if (f.m != 0) where.Add("m = ?", std::to_string(f.m));
  if (f.n != 0) where.Add("n = ?", std::to_string(f.n));
  if (f.k != 0) where.Add("k = ?", std::to_string(f.k));
  if (!f.regime.empty()) where.Add("regime = ?", f.regime);
  if (!f.tag.empty()) where.Add("? = ANY (tags)", f.tag);
  if (f.since_ms != 0) {
    where.Add("time >= to_timestamp(?::double precision / 1000)", std::to_string(f.since_ms));
  }
  where.AddNode(f.node, "daemon_id", "host_name");
  std::vector<history::SeriesRow> rows = ReadSeriesRows(*connection_, where.sql(), where.params());
  transaction.Commit();
  return rows;
}

std::vector<FleetMeasurement> FleetReader::Measurements(const FleetMeasurementFilter& f,
                                                        bool* more) {
  PgTransaction transaction(*connection_, PgTransaction::Kind::kReadOnly);
  Where where;
  AddVariant(where, ResolveVariant(f.variant_glob), "x.variant");
  if (!f.dtype.empty()) where.Add("x.dtype = ?", f.dtype);
  if (f.m != 0) where.Add("x.m = ?", std::to_string(f.m));
  if (f.n != 0) where.Add("x.n = ?", std::to_string(f.n));
  if (f.k != 0) where.Add("x.k = ?", std::to_string(f.k));
  if (!f.tag.empty()) where.Add("? = ANY (r.tags)", f.tag);
  if (f.since_ms != 0) {
    where.Add("x.created_at >= to_timestamp(?::double precision / 1000)",
              std::to_string(f.since_ms));
  }
  if (f.until_ms != 0) {
    where.Add("x.created_at < to_timestamp(?::double precision / 1000)",
              std::to_string(f.until_ms));
  }
  if (!f.status.empty()) where.Add("x.status = ?", f.status);
  if (f.run_id != 0) where.Add("x.run_id = ?", std::to_string(f.run_id));
  where.AddNode(f.node, "r.daemon_id", "r.host_name");
  const char* order = f.newest_first ? "DESC" : "ASC";
  std::string sql =
      std::string("SELECT r.host_name, r.daemon_id, ") +
      (f.samples ? "x.measurement"
                 : "x.measurement - 'sample_ms' - 'sample_cycles' "
                   "- 'sample_sm_mhz' - 'solo_sample_ms'") +
      " FROM ablationd.measurements x JOIN ablationd.runs r USING (daemon_id, run_id)" +
      where.sql() + " ORDER BY x.created_at " + order + ", r.daemon_id " + order +
      ", x.measurement_id " + order;
  if (f.limit > 0) sql += " LIMIT " + std::to_string(f.limit + 1);
  PgResult r = connection_->Query(sql, where.params(), "read the measurements");
  std::vector<FleetMeasurement> out;
  for (int i = 0; i < r.rows(); ++i) {
    FleetMeasurement m;
    m.node = NodeName(r.Text(i, 0), r.Text(i, 1));
    FromJson(r.Text(i, 2), &m.measurement, "measurement");
    out.push_back(std::move(m));
  }
  transaction.Commit();
  *more = f.limit > 0 && static_cast<int>(out.size()) > f.limit;
  if (*more) out.resize(static_cast<size_t>(f.limit));
  return out;
}

std::vector<FleetRun> FleetReader::Runs(const FleetRunFilter& f, bool* more) {
  Where where;
  if (!f.tag.empty()) where.Add("? = ANY (tags)", f.tag);
  if (!f.state.empty()) where.Add("state = ?", f.state);
  where.AddNode(f.node, "daemon_id", "host_name");
  std::string sql = "SELECT host_name, daemon_id, run FROM ablationd.runs" + where.sql() +
                    " ORDER BY coalesce(started_at, created_at) DESC, daemon_id, run_id DESC";
  if (f.limit > 0) sql += " LIMIT " + std::to_string(f.limit + 1);
  PgTransaction transaction(*connection_, PgTransaction::Kind::kReadOnly);
  PgResult r = connection_->Query(sql, where.params(), "read the runs");
  std::vector<FleetRun> out;
  for (int i = 0; i < r.rows(); ++i) {
    FleetRun run;
    run.node = NodeName(r.Text(i, 0), r.Text(i, 1));
    FromJson(r.Text(i, 2), &run.run, "run");
    out.push_back(std::move(run));
  }
  transaction.Commit();
  *more = f.limit > 0 && static_cast<int>(out.size()) > f.limit;
  if (*more) out.resize(static_cast<size_t>(f.limit));
  return out;
}

v1::GetRunResponse FleetReader::Run(const std::string& node, int64_t run_id) {
  PgTransaction transaction(*connection_, PgTransaction::Kind::kReadOnly);
  Where daemons;
  daemons.AddNode(node, "daemon_id", "host_name");
  PgResult d = connection_->Query(
      "SELECT daemon_id, host_name FROM ablationd.daemons" + daemons.sql() + " ORDER BY daemon_id",
      daemons.params(), "find daemon '" + node + "'");
  if (d.rows() == 0) {
    throw FleetError("no daemon '" + node +
                     "' has exported to the fleet database (a host name or a daemon id's prefix)");
  }
  if (d.rows() > 1) {
    std::string names;
    for (int i = 0; i < d.rows(); ++i)
      names += (i ? ", " : "") + NodeName(d.Text(i, 1), d.Text(i, 0));
    throw FleetError("'" + node + "' names " + std::to_string(d.rows()) + " daemons (" + names +
                     "); name one as HOST/ID-PREFIX");
  }
  const std::string daemon_id = d.Text(0, 0);
  const std::string id = std::to_string(run_id);
  v1::GetRunResponse response;
  PgResult run =
      connection_->Query("SELECT run FROM ablationd.runs WHERE daemon_id = $1 AND run_id = $2",
                         {daemon_id, id}, "read run " + id);
  if (run.rows() == 0) {
    throw FleetError("daemon " + NodeName(d.Text(0, 1), daemon_id) + " has exported no run " + id);
  }
  FromJson(run.Text(0, 0), response.mutable_run(), "run");
  PgResult ms = connection_->Query(
      "SELECT measurement FROM ablationd.measurements WHERE daemon_id = $1 AND run_id = $2 "
      "ORDER BY (measurement->>'sequence')::int, measurement_id",
      {daemon_id, id}, "read the measurements of run " + id);
  for (int i = 0; i < ms.rows(); ++i)
    FromJson(ms.Text(i, 0), response.add_measurements(), "measurement");
  PgResult vs = connection_->Query(
      "SELECT verification FROM ablationd.verifications WHERE daemon_id = $1 AND run_id = $2 "
      "ORDER BY verification_id",
      {daemon_id, id}, "read the verifications of run " + id);
  for (int i = 0; i < vs.rows(); ++i)
    FromJson(vs.Text(i, 0), response.add_verifications(), "verification");
  transaction.Commit();
  return response;
}

}  // namespace ablation::fleet
