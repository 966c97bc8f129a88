// A fleet's export end to end: Debian's real PostgreSQL (initdb in a temporary folder), two real
// daemons with the fake worker exporting to it through their outboxes, one of them while the
// database is stopped (and killed meanwhile, then started again), and the real client reading
// history, results and compare across both from the fleet database. Every run must arrive
// exactly once: the test counts ids, not just rows.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "client/output/json.h"
#include "db/fleet/fleet_change_points.h"
#include "db/fleet/fleet_schema.h"
#include "db/fleet/fleet_writer.h"
#include "db/fleet/pg.h"
#include "tests/e2e/harness.h"
#include "tests/e2e/postgres_server.h"
#include "tests/support/test_paths.h"

namespace ablation::testing {
namespace {

using ::testing::HasSubstr;

constexpr const char* kVariant = "abl_L1_R1_bl0_s3_sw1";

// GET http://127.0.0.1:port/metrics, the body (or "" when it cannot).
std::string Scrape(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string reply;
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    const std::string request = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (write(fd, request.data(), request.size()) == ssize_t(request.size())) {
      char buffer[8192];
      for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) reply.append(buffer, size_t(n));
    }
  }
  close(fd);
  return reply;
}

// The value of an unlabelled metric in a scrape; -1 when absent.
double Metric(const std::string& scrape, const std::string& name) {
  std::smatch m;
  if (std::regex_search(scrape, m, std::regex("\n" + name + " ([0-9.e+-]+)"))) {
    return std::stod(m[1]);
  }
  return -1;
}

class FleetE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string bin = PostgresServer::FindBinDir();
    if (bin.empty()) {
      skip_ =
          "PostgreSQL's server is not installed (no /usr/lib/postgresql/*/bin/initdb): "
          "scripts/install-deps.sh installs postgresql";
      return;
    }
    pg_ = new PostgresServer();
    const std::string error = pg_->Create(bin);
    if (!error.empty()) failed_ = "cannot start PostgreSQL: " + error;
  }
  static void TearDownTestSuite() {
    delete pg_;
    pg_ = nullptr;
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_EQ(failed_, "");
    // One server for the suite: each test starts from an empty database, however it is run.
    fleet::PgConnection(pg_->conninfo())
        .Exec(
            "DROP SCHEMA IF EXISTS ablationd CASCADE; DROP SCHEMA IF EXISTS legacy CASCADE; "
            "DROP TABLE IF EXISTS public.fleet_change_points, public.fleet_change_point_series, "
            "public.verifications, public.measurements, public.runs, public.daemons, "
            "public.fleet_schema CASCADE; DROP ROLE IF EXISTS reader",
            "empty the database");
    dir_ = MakeTempDir();
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override {
    for (auto& d : daemons_)
      if (d) d->Stop(SIGTERM);
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  // A daemon on `node` exporting to the test's database: A through --fleet-db, B through the
  // configuration's db_file (a mounted secret's form). Metrics on a port of its own.
  Daemon& StartDaemon(int which) {
    const std::string node = which == 0 ? "gpu-a" : "gpu-b";
    const std::string home = dir_ + "/" + node;
    std::filesystem::create_directories(home);
    const std::string config = home + "/ablationd.toml";
    {
      std::ofstream out(config);
      out << "[fleet]\nretry_max_seconds = 1\n";
      if (which == 1) out << "db_file = \"" << home << "/fleet-db\"\n";
    }
    if (which == 1) std::ofstream(home + "/fleet-db") << pg_->conninfo() << "\n";
    if (daemons_[which]) daemons_[which]->Stop(SIGTERM);
    daemons_[which] = std::make_unique<Daemon>(
        home, FAKE_WORKER_PATH, std::map<std::string, std::string>{{"ABLATION_NODE_NAME", node}});
    std::vector<std::string> args = {"--config", config, "--metrics-listen", "127.0.0.1:0"};
    if (which == 0) args.insert(args.end(), {"--fleet-db", pg_->conninfo()});
    daemons_[which]->set_extra_args(args);
    EXPECT_EQ(daemons_[which]->Start(), "");
    return *daemons_[which];
  }
  void Runs(Daemon& d, int count) {
    for (int i = 0; i < count; ++i) {
      auto r = d.Client({"run", "--variant", "L1_R1_s3", "--shape", "256", "--regime", "burst",
                         "--burst-seconds", "0.05", "--tag", "nightly"});
      ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    }
  }
  // The daemon's log: spdlog writes to stdout (daemon.out), the harness keeps stderr apart.
  std::string Log(int which) {
    std::ifstream in(dir_ + "/" + (which == 0 ? "gpu-a" : "gpu-b") + "/daemon.out");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str() + daemons_[which]->log();
  }
  int MetricsPort(int which) {
    std::smatch m;
    const std::string log = Log(which);
    if (std::regex_search(log, m, std::regex(R"(metrics on http://\S+ \(port (\d+)\))")))
      return std::stoi(m[1]);
    return 0;
  }
  // The run ids of a host in the fleet database, ascending.
  std::vector<int64_t> FleetRunIds(const std::string& host) {
    fleet::PgConnection c(pg_->conninfo());
    fleet::PgResult r = c.Query(
        "SELECT run_id FROM ablationd.runs WHERE host_name = $1 ORDER BY run_id", {host}, "ids");
    std::vector<int64_t> ids;
    for (int i = 0; i < r.rows(); ++i) ids.push_back(r.Int(i, 0));
    return ids;
  }
  long long Count(const std::string& sql) {
    fleet::PgConnection c(pg_->conninfo());
    return c.Query(sql, {}, "count").Int(0, 0);
  }
  // Waits up to 30 s for the host's exported runs to be `expected`.
  ::testing::AssertionResult Eventually(const std::string& host, std::vector<int64_t> expected) {
    std::vector<int64_t> ids;
    for (int i = 0; i < 300; ++i) {
      ids = FleetRunIds(host);
      if (ids == expected) return ::testing::AssertionSuccess();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return ::testing::AssertionFailure() << host << " exported " << ids.size() << " runs";
  }
  // What the exporter does after each run it commits: the change points of the run's series.
  static fleet::ExportOutcome ExportAndCompute(fleet::PgConnection& c,
                                               const fleet::DaemonIdentity& daemon,
                                               const fleet::RunExport& run) {
    const fleet::ExportOutcome outcome = fleet::ExportRun(c, daemon, run);
    for (const fleet::FleetSeriesKey& key : fleet::SeriesOfRun(c, daemon.daemon_id, run.run.id()))
      fleet::RecomputeChangePoints(c, key);
    return outcome;
  }
  // Night `night`'s run of kVariant (bf16 256^3, burst) with one measurement of `median_ms`, as
  // a daemon on a GPU of `fingerprint` exports it.
  static fleet::RunExport Night(int64_t run_id, int night, double median_ms,
                                const std::string& fingerprint) {
    fleet::RunExport e;
    e.run.set_id(run_id);
    e.run.set_kind(v1::RUN_KIND_ABLATION);
    e.run.set_state(v1::RUN_STATE_SUCCEEDED);
    e.run.set_started_at_ms(1'700'000'000'000 + night * 86'400'000LL);
    e.run.mutable_device()->set_name("NVIDIA H200");
    e.run.mutable_device()->set_hardware_fingerprint(fingerprint);
    e.run.add_tags("nightly");
    v1::Measurement& m = e.measurements.emplace_back();
    m.set_id(run_id * 10);
    m.set_run_id(run_id);
    m.set_variant(kVariant);
    m.set_dtype("bf16");
    m.mutable_shape()->set_m(256);
    m.mutable_shape()->set_n(256);
    m.mutable_shape()->set_k(256);
    m.set_status(v1::MEASUREMENT_STATUS_OK);
    m.set_regime(v1::REGIME_BURST);
    m.mutable_stats()->set_median_ms(median_ms);
    m.mutable_stats()->set_noise(0.001);
    m.set_tflops(100 / median_ms);
    return e;
  }
  // What a daemon of fleet schema `version` (1 or 3) left: the tables, with their rows, in
  // `schema` (where the search_path put them before v4; 1: without the change points' tables),
  // a view of theirs there, and no schema ablationd. Made from a database of this version.
  void MakeOlder(fleet::PgConnection& c, const std::string& schema, int version) {
    c.Exec(
        "DROP VIEW ablationd.fleet_node_comparison, ablationd.fleet_steps, "
        "ablationd.fleet_throughput, ablationd.fleet_daemons, ablationd.fleet_points",
        "drop the views");
    if (version < 2) {
      c.Exec("DROP TABLE ablationd.fleet_change_points, ablationd.fleet_change_point_series",
             "drop the change points");
    }
    for (const char* table : {"daemons", "runs", "measurements", "verifications",
                              "fleet_change_point_series", "fleet_change_points", "fleet_schema"}) {
      if (version < 2 && std::string(table).rfind("fleet_change", 0) == 0) continue;
      c.Exec("ALTER TABLE ablationd." + std::string(table) + " SET SCHEMA " + schema, table);
    }
    c.Exec("UPDATE " + schema + ".fleet_schema SET version = " + std::to_string(version) +
               "; DROP SCHEMA ablationd; CREATE VIEW " + schema +
               ".fleet_points AS SELECT * FROM " + schema + ".measurements",
           "make it version " + std::to_string(version));
  }
  CommandResult FleetClient(std::vector<std::string> args) {
    std::vector<std::string> argv = {TestBinary(CLIENT_PATH), "--fleet-db", pg_->conninfo()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv);
  }

  static inline PostgresServer* pg_ = nullptr;
  static inline std::string skip_, failed_;
  std::string dir_;
  std::unique_ptr<Daemon> daemons_[2];
};

TEST_F(FleetE2E, TwoDaemonsExportEveryRunOnceThroughAnOutageAndHistorySpansThem) {
  Daemon& a = StartDaemon(0);
  Runs(a, 3);
  ASSERT_TRUE(Eventually("gpu-a", {1, 2, 3})) << Log(0);
  EXPECT_THAT(Log(0), HasSubstr("fleet export to host=")) << Log(0);
  EXPECT_THAT(Log(0), ::testing::Not(HasSubstr("password")));

  // B measures while the database is away: its runs wait in the outbox, said in the log and the
  // metrics; then B is killed (no shutdown) and started again before the database returns.
  ASSERT_EQ(pg_->Stop(), "");
  Daemon* b = &StartDaemon(1);
  Runs(*b, 2);
  for (int i = 0; i < 100 && Log(1).find("wait in the outbox") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_THAT(Log(1), HasSubstr("finished run(s) wait in the outbox")) << Log(1);
  // The gauge follows the outbox at each of the exporter's attempts (at most 1 s apart here).
  std::string scrape;
  for (int i = 0; i < 50; ++i) {
    scrape = Scrape(MetricsPort(1));
    if (Metric(scrape, "ablationd_fleet_outbox_runs") == 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(Metric(scrape, "ablationd_fleet_outbox_runs"), 2) << scrape;
  EXPECT_EQ(Metric(scrape, "ablationd_fleet_database_up"), 0) << scrape;
  b->Stop(SIGKILL);
  b = &StartDaemon(1);
  Runs(*b, 1);
  ASSERT_EQ(pg_->Start(), "");
  ASSERT_TRUE(Eventually("gpu-b", {1, 2, 3})) << Log(1);
  for (int i = 0; i < 100 && Log(1).find("caught up") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_THAT(Log(1), HasSubstr("caught up (3 run(s))")) << Log(1);
  const std::string after = Scrape(MetricsPort(1));
  EXPECT_EQ(Metric(after, "ablationd_fleet_outbox_runs"), 0) << after;
  EXPECT_EQ(Metric(after, "ablationd_fleet_database_up"), 1) << after;
  EXPECT_TRUE(Eventually("gpu-a", {1, 2, 3}));  // A's exporter lived through the outage

  // Exactly once: six runs of two daemons, each measurement once, as many as each daemon holds.
  EXPECT_EQ(Count("SELECT count(*) FROM ablationd.runs"), 6);
  EXPECT_EQ(Count("SELECT count(DISTINCT daemon_id) FROM ablationd.runs"), 2);
  EXPECT_EQ(Count("SELECT count(*) FROM ablationd.daemons"), 2);
  // In a schema of its own: nothing of the fleet's in the database's public schema.
  EXPECT_EQ(Count("SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                  "WHERE n.nspname = 'public'"),
            0);
  size_t held_total = 0;
  for (Daemon* d : {&a, b}) {
    auto held = d->Client({"--format", "json", "results", "--limit", "0"});
    ASSERT_EQ(held.exit_code, 0) << held.err;
    std::vector<v1::Measurement> local;
    ASSERT_EQ(client::ReadJsonEnvelope(held.out, "measurements", &local), "");
    ASSERT_GE(local.size(), 3u);  // at least one per run
    held_total += local.size();
    const std::string host = d == &a ? "gpu-a" : "gpu-b";
    EXPECT_EQ(Count("SELECT count(*) FROM ablationd.measurements m JOIN ablationd.runs r "
                    "USING (daemon_id, run_id) WHERE r.host_name = '" +
                    host + "'"),
              static_cast<long long>(local.size()));
  }
  EXPECT_EQ(Count("SELECT count(*) - count(DISTINCT (daemon_id, measurement_id)) FROM "
                  "ablationd.measurements"),
            0);

  // history across both daemons: the fake GPUs share a fingerprint, and each daemon's three
  // points are a series of their own (a node is compared with another, never mixed into its
  // series), named by the daemon.
  auto json = FleetClient({"--format", "json", "history", kVariant, "--tag", "nightly"});
  ASSERT_EQ(json.exit_code, 0) << json.out << json.err;
  std::vector<v1::Series> series;
  ASSERT_EQ(client::ReadJsonEnvelope(json.out, "history", &series), "") << json.out;
  ASSERT_EQ(series.size(), 2u) << json.out;
  EXPECT_EQ(series[0].hardware_fingerprint(), series[1].hardware_fingerprint());
  for (const v1::Series& s : series) {
    ASSERT_EQ(s.points_size(), 3);
    const std::string& node = s.points(0).node();
    const std::string host = node.substr(0, node.find('/'));
    EXPECT_TRUE(host == "gpu-a" || host == "gpu-b") << node;
    for (const v1::HistoryPoint& p : s.points()) EXPECT_EQ(p.node(), node);
  }
  EXPECT_NE(series[0].points(0).node(), series[1].points(0).node());
  // Each exporter computed its own series' change points after its runs: over its three points,
  // and none (the fake GPUs are steady), as the client says.
  long long computed = 0;
  for (int i = 0; i < 100 && computed != 2; ++i) {
    computed = Count("SELECT count(*) FROM ablationd.fleet_change_point_series WHERE points = 3");
    if (computed != 2) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(computed, 2) << Log(0) << Log(1);
  EXPECT_EQ(Count("SELECT count(*) FROM ablationd.fleet_change_point_series"), 2);
  EXPECT_EQ(series[0].change_points_size() + series[1].change_points_size(), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM ablationd.fleet_change_points"), 0);
  auto table = FleetClient({"history", "abl_L1_*", "--node", "gpu-b"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("gpu-b/"));
  EXPECT_THAT(table.out, ::testing::Not(HasSubstr("gpu-a/")));

  // results and compare read the same rows; compare names each run by its daemon.
  auto results = FleetClient({"--format", "csv", "results", "--limit", "0"});
  ASSERT_EQ(results.exit_code, 0) << results.err;
  EXPECT_EQ(std::count(results.out.begin(), results.out.end(), '\n'), 1 + long(held_total))
      << results.out;
  EXPECT_THAT(results.out, ::testing::StartsWith("node,"));
  auto compare = FleetClient({"compare", "gpu-a:1", "gpu-b:3"});
  EXPECT_EQ(compare.exit_code, 0) << compare.out << compare.err;
  EXPECT_THAT(compare.out, HasSubstr(kVariant));
  // runs, show and report read the fleet too (client/sources/source.h): every daemon's runs,
  // each naming its node; one run by NODE:ID, as from its daemon.
  auto runs = FleetClient({"--format", "csv", "runs", "--limit", "0"});
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  EXPECT_THAT(runs.out, ::testing::StartsWith("node,"));
  EXPECT_EQ(std::count(runs.out.begin(), runs.out.end(), '\n'), 1 + 6) << runs.out;
  auto only_b = FleetClient({"runs", "--node", "gpu-b"});
  ASSERT_EQ(only_b.exit_code, 0) << only_b.err;
  EXPECT_THAT(only_b.out, HasSubstr("gpu-b/"));
  EXPECT_THAT(only_b.out, ::testing::Not(HasSubstr("gpu-a/")));
  auto show = FleetClient({"show", "gpu-b:3"});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr(kVariant));
  auto report = FleetClient({"report", "gpu-a:1", "--format", "md"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_THAT(report.out, HasSubstr("# Ablation report: run 1"));
  EXPECT_THAT(report.out, HasSubstr("All measurements of the run"));
  auto bare = FleetClient({"show", "3"});
  EXPECT_EQ(bare.exit_code, 64);  // usage: refused by the client
  EXPECT_THAT(bare.err, HasSubstr("names no fleet run; use NODE:RUN_ID"));
}

// The export's key is (daemon, run): a run written twice (PostgreSQL committed, then the daemon
// died before its outbox row went) is there once; and another fingerprint is another series.
TEST_F(FleetE2E, ARunExportedTwiceIsStoredOnceAndFingerprintsNeverMix) {
  fleet::PgConnection c(pg_->conninfo());
  fleet::MigrateFleet(c);
  fleet::MigrateFleet(c);  // a second daemon's start: nothing to do
  EXPECT_EQ(fleet::FleetSchemaVersion(c), fleet::kFleetSchemaVersion);
  const fleet::DaemonIdentity daemon{"feedfacefeedfacefeedfacefeedface", "gpu-z", ""};
  fleet::RunExport run;
  run.run.set_id(7);
  run.run.set_kind(v1::RUN_KIND_ABLATION);
  run.run.set_state(v1::RUN_STATE_SUCCEEDED);
  run.run.set_started_at_ms(1'700'000'000'000);
  run.run.mutable_device()->set_name("NVIDIA H200");
  run.run.mutable_device()->set_hardware_fingerprint("0123456789abcdef");
  run.run.add_tags("nightly");
  v1::Measurement m;
  m.set_id(70);
  m.set_run_id(7);
  m.set_variant(kVariant);
  m.set_dtype("bf16");
  m.mutable_shape()->set_m(256);
  m.mutable_shape()->set_n(256);
  m.mutable_shape()->set_k(256);
  m.set_status(v1::MEASUREMENT_STATUS_OK);
  m.set_regime(v1::REGIME_BURST);
  m.mutable_stats()->set_median_ms(1.0);
  run.measurements.push_back(m);
  EXPECT_EQ(fleet::ExportRun(c, daemon, run), fleet::ExportOutcome::kExported);
  EXPECT_EQ(fleet::ExportRun(c, daemon, run), fleet::ExportOutcome::kAlreadyThere);
  EXPECT_EQ(Count("SELECT count(*) FROM ablationd.runs WHERE daemon_id = "
                  "'feedfacefeedfacefeedfacefeedface'"),
            1);
  EXPECT_EQ(Count("SELECT count(*) FROM ablationd.measurements WHERE daemon_id = "
                  "'feedfacefeedfacefeedfacefeedface'"),
            1);

  // Eleven nights more, the last six 10% slower: the client finds the change point over the
  // fleet's rows as the daemon would over its own.
  for (int night = 1; night <= 11; ++night) {
    run.run.set_id(10 + night);
    run.run.set_started_at_ms(1'700'000'000'000 + night * 86'400'000LL);
    run.measurements[0].set_id(100 + night);
    run.measurements[0].set_run_id(10 + night);
    run.measurements[0].mutable_stats()->set_median_ms(night <= 5 ? 1.0 : 1.1);
    run.measurements[0].set_tflops(night <= 5 ? 100 : 91);
    ASSERT_EQ(ExportAndCompute(c, daemon, run), fleet::ExportOutcome::kExported);
  }
  auto json = FleetClient({"--format", "json", "history", kVariant, "--node", "gpu-z"});
  ASSERT_EQ(json.exit_code, 0) << json.out << json.err;
  std::vector<v1::Series> series;
  ASSERT_EQ(client::ReadJsonEnvelope(json.out, "history", &series), "");
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].hardware_fingerprint(), "0123456789abcdef");
  ASSERT_EQ(series[0].points_size(), 12);
  EXPECT_EQ(series[0].points(0).node(), "gpu-z/feedface");
  ASSERT_EQ(series[0].change_points_size(), 1) << json.out;
  EXPECT_EQ(series[0].change_points(0).index(), 6);
  EXPECT_NEAR(series[0].change_points(0).relative_change(), 0.10, 0.001);

  // The exports computed the same change point into fleet_change_points: the client's point
  // (gpu-z's run 16, the sixth night), its relative change and p-value, and only that one.
  const char* kZ = "hardware_fingerprint = '0123456789abcdef'";
  auto stored = [&] {
    return c.Query(std::string("SELECT daemon_id, run_id, point_index, relative_change, p_value, "
                               "(extract(epoch FROM time) * 1000)::bigint, host_name, variant, "
                               "dtype, m, regime FROM ablationd.fleet_change_points WHERE ") +
                       kZ,
                   {}, "read the change points");
  };
  {
    fleet::PgResult r = stored();
    ASSERT_EQ(r.rows(), 1);
    const v1::HistoryPoint& at = series[0].points(6);
    EXPECT_EQ(r.Text(0, 0), "feedfacefeedfacefeedfacefeedface");
    EXPECT_EQ(r.Int(0, 1), at.run_id());
    EXPECT_EQ(r.Int(0, 1), 16);
    EXPECT_EQ(r.Int(0, 2), 6);
    EXPECT_NEAR(r.Real(0, 3), series[0].change_points(0).relative_change(), 1e-9);
    EXPECT_NEAR(r.Real(0, 4), series[0].change_points(0).p_value(), 1e-9);
    EXPECT_EQ(r.Int(0, 5), at.time_ms());
    EXPECT_EQ(r.Text(0, 6), "gpu-z");
    EXPECT_EQ(r.Text(0, 7), kVariant);
    EXPECT_EQ(r.Text(0, 8), "bf16");
    EXPECT_EQ(r.Int(0, 9), 256);
    EXPECT_EQ(r.Text(0, 10), "burst");
  }
  EXPECT_EQ(
      Count(std::string(
                "SELECT points * 100 + change_points FROM ablationd.fleet_change_point_series "
                "WHERE ") +
            kZ),
      12 * 100 + 1);
  // Exported again (a retry after a crash) and computed again: replaced, never doubled.
  EXPECT_EQ(ExportAndCompute(c, daemon, run), fleet::ExportOutcome::kAlreadyThere);
  EXPECT_EQ(Count(std::string("SELECT count(*) FROM ablationd.fleet_change_points WHERE ") + kZ),
            1);
  EXPECT_EQ(
      Count(std::string("SELECT count(*) FROM ablationd.fleet_change_point_series WHERE ") + kZ),
      1);
  // Two exporters replacing the series at once take turns (its advisory lock): no error, no
  // duplicate, the same row.
  {
    const std::vector<fleet::FleetSeriesKey> keys = fleet::SeriesOfRun(c, daemon.daemon_id, 21);
    ASSERT_EQ(keys.size(), 1u);
    std::atomic<int> failures = 0;
    auto replace = [&] {
      try {
        fleet::PgConnection own(pg_->conninfo());
        for (int i = 0; i < 10; ++i) fleet::RecomputeChangePoints(own, keys[0]);
      } catch (const fleet::FleetError& e) {
        ADD_FAILURE() << e.what();
        ++failures;
      }
    };
    std::thread other(replace);
    replace();
    other.join();
    EXPECT_EQ(failures, 0);
    fleet::PgResult r = stored();
    ASSERT_EQ(r.rows(), 1);
    EXPECT_EQ(r.Int(0, 1), 16);
  }

  // Another daemon on another setup (another fingerprint: a driver, say), the same item: its own
  // series, never mixed into gpu-z's.
  const fleet::DaemonIdentity other_setup{"0badc0de0badc0de0badc0de0badc0de", "gpu-y", ""};
  run.run.set_id(7);
  run.run.mutable_device()->set_hardware_fingerprint("fedcba9876543210");
  run.measurements[0].set_id(70);
  run.measurements[0].set_run_id(7);
  run.measurements[0].mutable_stats()->set_median_ms(2.0);
  ASSERT_EQ(ExportAndCompute(c, other_setup, run), fleet::ExportOutcome::kExported);
  // Its series flat over eight nights at twice gpu-z's time: no change point (mixed into
  // gpu-z's series it would make one), and gpu-z's change point stays as it was.
  for (int night = 1; night <= 7; ++night) {
    run.run.set_id(7 + night);
    run.run.set_started_at_ms(1'700'000'000'000 + night * 86'400'000LL);
    run.measurements[0].set_id(70 + night);
    run.measurements[0].set_run_id(7 + night);
    run.measurements[0].mutable_stats()->set_median_ms(night % 2 ? 2.0 : 2.002);
    ASSERT_EQ(ExportAndCompute(c, other_setup, run), fleet::ExportOutcome::kExported);
  }
  EXPECT_EQ(
      Count("SELECT points * 100 + change_points FROM ablationd.fleet_change_point_series WHERE "
            "hardware_fingerprint = 'fedcba9876543210'"),
      8 * 100 + 0);
  EXPECT_EQ(Count("SELECT count(*) FROM ablationd.fleet_change_points WHERE hardware_fingerprint = "
                  "'fedcba9876543210'"),
            0);
  {
    fleet::PgResult r = stored();
    ASSERT_EQ(r.rows(), 1);
    EXPECT_EQ(r.Int(0, 1), 16);
  }
  // A series left behind (its computation failed, or the database came from schema v1) is found
  // and computed again to the same rows.
  EXPECT_TRUE(fleet::StaleSeries(c).empty());
  c.Exec("DELETE FROM ablationd.fleet_change_point_series", "forget the change points");
  const std::vector<fleet::FleetSeriesKey> stale = fleet::StaleSeries(c);
  EXPECT_GE(stale.size(), 2u);
  for (const fleet::FleetSeriesKey& key : stale) fleet::RecomputeChangePoints(c, key);
  EXPECT_TRUE(fleet::StaleSeries(c).empty());
  {
    fleet::PgResult r = stored();
    ASSERT_EQ(r.rows(), 1);
    EXPECT_EQ(r.Int(0, 1), 16);
  }
  auto both = FleetClient({"--format", "json", "history", "abl_L1_*"});
  ASSERT_EQ(both.exit_code, 0) << both.err;
  series.clear();
  ASSERT_EQ(client::ReadJsonEnvelope(both.out, "history", &series), "");
  ASSERT_EQ(series.size(), 2u) << both.out;
  EXPECT_EQ(series[0].hardware_fingerprint(), "0123456789abcdef");
  EXPECT_EQ(series[0].points_size(), 12);
  EXPECT_EQ(series[1].hardware_fingerprint(), "fedcba9876543210");
  ASSERT_EQ(series[1].points_size(), 8);
  EXPECT_EQ(series[1].points(0).node(), "gpu-y/0badc0de");
  EXPECT_EQ(series[1].points(0).median_ms(), 2.0);
  EXPECT_EQ(series[1].change_points_size(), 0);

  // A role that may only read is enough for the client (its reads are READ ONLY transactions).
  c.Exec(
      "CREATE ROLE reader LOGIN; GRANT USAGE ON SCHEMA ablationd TO reader; "
      "GRANT SELECT ON ALL TABLES IN SCHEMA ablationd TO reader",
      "make a reader");
  std::string as_reader = pg_->conninfo();
  as_reader.replace(as_reader.find("user=fleet"), 10, "user=reader");
  auto read_only = RunCommand({TestBinary(CLIENT_PATH), "--fleet-db", as_reader, "--format", "csv",
                               "results", "--node", "gpu-y"});
  ASSERT_EQ(read_only.exit_code, 0) << read_only.err;
  EXPECT_EQ(std::count(read_only.out.begin(), read_only.out.end(), '\n'), 9) << read_only.out;
  {
    fleet::PgConnection reader(as_reader);
    EXPECT_THROW(reader.Exec("DELETE FROM ablationd.runs", "delete"), fleet::FleetError);
  }

  // A second node of gpu-z's fingerprint, 3% faster (its chip): a series of its own, set beside
  // gpu-z's by fleet_node_comparison (the dashboard's panel), and no change in gpu-z's series.
  const fleet::DaemonIdentity twin{"facefeedfacefeedfacefeedfacefeed", "gpu-x", ""};
  for (int night = 12; night <= 14; ++night) {
    ASSERT_EQ(
        ExportAndCompute(c, twin, Night(night, night, 0.97 + night * 1e-4, "0123456789abcdef")),
        fleet::ExportOutcome::kExported);
  }
  {
    fleet::PgResult r = stored();
    ASSERT_EQ(r.rows(), 1);
    EXPECT_EQ(r.Int(0, 1), 16);
  }

  // Every PostgreSQL panel and annotation of the fleet dashboard runs against this database and
  // returns rows (Grafana's $__timeFilter(column) as a condition that keeps every row): the
  // change points' panel and annotation among them, with gpu-z's change.
  std::ifstream file(std::string(SOURCE_DIR) +
                     "/deploy/k8s/grafana/ablationd-fleet-dashboard.json");
  const nlohmann::json dashboard = nlohmann::json::parse(file);
  int checked = 0, of_change_points = 0;
  auto check = [&](const nlohmann::json& target, const std::string& title) {
    if (!target.contains("rawSql")) return;
    const std::string sql =
        std::regex_replace(target["rawSql"].get<std::string>(),
                           std::regex(R"(\$__timeFilter\((\w+)\))"), "($1 IS NOT NULL)");
    fleet::PgResult rows = c.Query(sql, {}, title);
    EXPECT_GT(rows.rows(), 0) << title << ": " << sql;
    ++checked;
    if (sql.find("fleet_change_points") != std::string::npos) {
      ++of_change_points;
      EXPECT_EQ(rows.rows(), 1) << title << ": " << sql;
    }
  };
  for (const auto& panel : dashboard["panels"]) {
    for (const auto& target : panel["targets"]) check(target, panel["title"]);
  }
  for (const auto& annotation : dashboard["annotations"]["list"]) {
    check(annotation["target"], annotation["name"]);
  }
  EXPECT_GE(checked, 6);
  EXPECT_EQ(of_change_points, 2);  // the panel and the throughput's annotation

  // Bad input is named: a connection string libpq cannot read, a run with no daemon, a fleet
  // flag on a command that does not read it.
  auto bad =
      RunCommand({TestBinary(CLIENT_PATH), "--fleet-db", "host='unclosed", "history", kVariant});
  EXPECT_EQ(bad.exit_code, 64);  // usage: refused by the client
  EXPECT_THAT(bad.err, HasSubstr("--fleet-db"));
  auto nobody = FleetClient({"compare", "gpu-nosuch:1", "gpu-z:7"});
  EXPECT_NE(nobody.exit_code, 0);
  EXPECT_THAT(nobody.err, HasSubstr("no daemon 'gpu-nosuch'"));
  auto other = FleetClient({"variants"});
  EXPECT_EQ(other.exit_code, 64);  // usage: refused by the client
  EXPECT_THAT(other.err, HasSubstr("--fleet-db is read by runs, show, results, history, compare "
                                   "and report only"));

  // Short names, as a daemon takes them (L1_R1_s3 is abl_L1_R1_bl0_s3_sw1, in any case); a name
  // nothing was measured as is an error naming the nearest ones, never an empty table.
  auto short_history = FleetClient({"--format", "json", "history", "L1_R1_s3", "--node", "gpu-z"});
  ASSERT_EQ(short_history.exit_code, 0) << short_history.err;
  series.clear();
  ASSERT_EQ(client::ReadJsonEnvelope(short_history.out, "history", &series), "");
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].variant(), kVariant);
  EXPECT_EQ(series[0].points_size(), 12);
  auto short_results = FleetClient(
      {"--format", "csv", "results", "--variant", "l1_r1_s3", "--node", "gpu-y", "--limit", "0"});
  ASSERT_EQ(short_results.exit_code, 0) << short_results.err;
  EXPECT_EQ(std::count(short_results.out.begin(), short_results.out.end(), '\n'), 9)
      << short_results.out;
  auto typo = FleetClient({"results", "--variant", "L1_R1_s9"});
  EXPECT_EQ(typo.exit_code, 1) << typo.out;
  EXPECT_THAT(typo.err,
              HasSubstr("no variant 'L1_R1_s9' (abl_L1_R1_bl0_s9_sw1) was ever measured"));
  EXPECT_THAT(typo.err, HasSubstr("the nearest: " + std::string(kVariant)));
  EXPECT_EQ(typo.out, "");
}

// Two nodes of one fingerprint, the second's chip 4% slower and joining after the first's eight
// nights: each node is a series of its own, so the second's first run is no candidate and its
// runs no change point, while fleet_node_comparison sets the two side by side (+-2% of the
// fingerprint's median). Mixed into one series, the step between them read as a change.
TEST_F(FleetE2E, TwoNodesOfOneFingerprintAreComparedSideBySideNotReadAsAChange) {
  fleet::PgConnection c(pg_->conninfo());
  fleet::MigrateFleet(c);
  const std::string fingerprint = "00000000cafecafe";
  const fleet::DaemonIdentity a{"aaaaaaaa11111111aaaaaaaa11111111", "gpu-a", ""};
  const fleet::DaemonIdentity b{"bbbbbbbb22222222bbbbbbbb22222222", "gpu-b", ""};
  for (int night = 1; night <= 8; ++night) {
    ASSERT_EQ(ExportAndCompute(c, a, Night(night, night, night % 2 ? 1.0 : 1.001, fingerprint)),
              fleet::ExportOutcome::kExported);
  }
  auto history = [&] {
    auto json = FleetClient({"--format", "json", "history", "L1_R1_s3", "--tag", "nightly"});
    EXPECT_EQ(json.exit_code, 0) << json.err;
    std::vector<v1::Series> series;
    EXPECT_EQ(client::ReadJsonEnvelope(json.out, "history", &series), "") << json.out;
    return series;
  };
  for (int night = 9; night <= 12; ++night) {
    // b's run ids start at 1 as a new daemon's do.
    ASSERT_EQ(
        ExportAndCompute(c, b, Night(night - 8, night, night % 2 ? 1.04 : 1.041, fingerprint)),
        fleet::ExportOutcome::kExported);
    const std::vector<v1::Series> series = history();
    ASSERT_EQ(series.size(), 2u) << "after night " << night;
    for (const v1::Series& s : series) {
      EXPECT_EQ(s.change_points_size(), 0) << s.points(0).node() << " after night " << night;
      EXPECT_FALSE(s.newest().candidate()) << s.points(0).node() << " after night " << night;
    }
    EXPECT_EQ(series[0].points(0).node(), "gpu-a/aaaaaaaa");
    EXPECT_EQ(series[0].points_size(), 8);
    EXPECT_EQ(series[1].points(0).node(), "gpu-b/bbbbbbbb");
    EXPECT_EQ(series[1].points_size(), night - 8);
  }
  // The exporters' stored change points agree: one series per node, none with a change.
  EXPECT_EQ(Count("SELECT count(*) FROM ablationd.fleet_change_points"), 0);
  EXPECT_EQ(c.Query("SELECT string_agg(host_name || ':' || points || ':' || change_points, ',' "
                    "ORDER BY host_name) FROM ablationd.fleet_change_point_series",
                    {}, "read the series")
                .Text(0, 0),
            "gpu-a:8:0,gpu-b:4:0");
  // Side by side: each node against the median of the fingerprint's nodes.
  fleet::PgResult side = c.Query(
      "SELECT host_name, runs, nodes, relative_to_fingerprint FROM ablationd.fleet_node_comparison "
      "WHERE hardware_fingerprint = $1 ORDER BY host_name",
      {fingerprint}, "compare the nodes");
  ASSERT_EQ(side.rows(), 2);
  EXPECT_EQ(side.Text(0, 0), "gpu-a");
  EXPECT_EQ(side.Int(0, 1), 8);
  EXPECT_EQ(side.Int(0, 2), 2);
  EXPECT_NEAR(side.Real(0, 3), -0.0196, 0.001);
  EXPECT_EQ(side.Text(1, 0), "gpu-b");
  EXPECT_EQ(side.Int(1, 1), 4);
  EXPECT_NEAR(side.Real(1, 3), +0.0196, 0.001);
  // fleet_steps compares a point with its own node's before it: b's first night is no step.
  EXPECT_EQ(Count("SELECT count(*) FROM ablationd.fleet_steps WHERE abs(relative_step) > 0.01"), 0);
}

// A fleet database of v3, its tables where daemons before v4 put them (public, through the
// search_path), moves into schema ablationd with every row; the series are computed again per
// node; a fleet_schema of version 4 stays behind so that a daemon not yet upgraded refuses to
// export rather than making the tables in public again.
TEST_F(FleetE2E, AnOlderDatabaseInPublicMovesIntoItsOwnSchemaWithEveryRow) {
  fleet::PgConnection c(pg_->conninfo());
  fleet::MigrateFleet(c);
  const fleet::DaemonIdentity a{"aaaaaaaa33333333aaaaaaaa33333333", "gpu-a", ""};
  const fleet::DaemonIdentity b{"bbbbbbbb44444444bbbbbbbb44444444", "gpu-b", ""};
  for (int night = 1; night <= 5; ++night) {
    ASSERT_EQ(ExportAndCompute(c, a, Night(night, night, 1.0, "00000000000000a3")),
              fleet::ExportOutcome::kExported);
    ASSERT_EQ(ExportAndCompute(c, b, Night(night, night, 1.02, "00000000000000a3")),
              fleet::ExportOutcome::kExported);
  }
  MakeOlder(c, "public", 3);
  const char* kCounts =
      "SELECT (SELECT count(*) FROM %s.runs) * 10000 + (SELECT count(*) FROM %s.measurements) * "
      "100 + (SELECT count(*) FROM %s.daemons)";
  auto counts = [&](const std::string& schema) {
    std::string sql = kCounts;
    for (size_t at; (at = sql.find("%s")) != std::string::npos;) sql.replace(at, 2, schema);
    return Count(sql);
  };
  const long long before = counts("public");
  EXPECT_EQ(before, 10 * 10000 + 10 * 100 + 2);
  EXPECT_EQ(fleet::FleetSchemaVersion(c), 3);
  EXPECT_THROW(fleet::RequireFleetSchema(c), fleet::FleetError);  // upgrade the daemons

  fleet::MigrateFleet(c);
  EXPECT_EQ(fleet::FleetSchemaVersion(c), fleet::kFleetSchemaVersion);
  EXPECT_NO_THROW(fleet::RequireFleetSchema(c));
  EXPECT_EQ(counts("ablationd"), before);
  // In public only the marker is left, at this build's version: what an older daemon reads there.
  EXPECT_EQ(Count("SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                  "WHERE n.nspname = 'public' AND c.relkind IN ('r', 'v')"),
            1);
  EXPECT_EQ(Count("SELECT max(version) FROM fleet_schema"),
            fleet::kFleetSchemaVersion);  // the search_path's: public
  // The change points are computed again, one series per node, and the client reads it all.
  std::vector<fleet::FleetSeriesKey> stale = fleet::StaleSeries(c);
  ASSERT_EQ(stale.size(), 2u);
  EXPECT_NE(stale[0].daemon_id, stale[1].daemon_id);
  for (const fleet::FleetSeriesKey& key : stale) {
    EXPECT_EQ(fleet::RecomputeChangePoints(c, key).points, 5);
  }
  EXPECT_TRUE(fleet::StaleSeries(c).empty());
  auto results = FleetClient({"--format", "csv", "results", "--limit", "0"});
  ASSERT_EQ(results.exit_code, 0) << results.err;
  EXPECT_EQ(std::count(results.out.begin(), results.out.end(), '\n'), 1 + 10) << results.out;
  fleet::MigrateFleet(c);  // the next daemon's start: nothing to do
  EXPECT_EQ(counts("ablationd"), before);
}

// Schema v1 (no change points, no solo figures) in a schema of its own (a role whose
// search_path names it): moved, migrated to v4 with its run kept and its series found to
// compute; a version newer than this build's refused, by the exporter and the client alike.
TEST_F(FleetE2E, AVersionOneDatabaseMigratesAndANewerOneIsRefused) {
  const std::string legacy = pg_->conninfo() + " options='-c search_path=legacy'";
  {
    fleet::PgConnection admin(pg_->conninfo());
    admin.Exec("CREATE SCHEMA legacy", "make a schema");
    fleet::MigrateFleet(admin);
    const fleet::DaemonIdentity daemon{"abad1deaabad1deaabad1deaabad1dea", "gpu-old", ""};
    fleet::RunExport run = Night(1, 1, 1.0, "00000000000000aa");
    run.measurements[0].mutable_shape()->set_m(128);
    ASSERT_EQ(fleet::ExportRun(admin, daemon, run), fleet::ExportOutcome::kExported);
    MakeOlder(admin, "legacy", 1);
  }
  fleet::PgConnection c(legacy);
  EXPECT_EQ(fleet::FleetSchemaVersion(c), 1);
  EXPECT_THROW(fleet::RequireFleetSchema(c), fleet::FleetError);

  fleet::MigrateFleet(c);
  EXPECT_EQ(fleet::FleetSchemaVersion(c), fleet::kFleetSchemaVersion);
  EXPECT_EQ(Count("SELECT count(*) FROM ablationd.runs"), 1);  // kept
  const std::vector<fleet::FleetSeriesKey> stale = fleet::StaleSeries(c);
  ASSERT_EQ(stale.size(), 1u);
  EXPECT_EQ(stale[0].fingerprint, "00000000000000aa");
  EXPECT_EQ(stale[0].m, 128);
  const fleet::SeriesChangePoints computed = fleet::RecomputeChangePoints(c, stale[0]);
  EXPECT_EQ(computed.points, 1);
  EXPECT_EQ(computed.change_points, 0);
  EXPECT_TRUE(fleet::StaleSeries(c).empty());

  const std::string newer = std::to_string(fleet::kFleetSchemaVersion + 1);
  c.Exec("UPDATE ablationd.fleet_schema SET version = " + newer, "make it newer");
  try {
    fleet::MigrateFleet(c);
    ADD_FAILURE() << "a newer schema was migrated";
  } catch (const fleet::FleetError& e) {
    EXPECT_THAT(e.what(), HasSubstr("schema version " + newer + ", newer than version " +
                                    std::to_string(fleet::kFleetSchemaVersion)));
  }
  try {
    fleet::RequireFleetSchema(c);
    ADD_FAILURE() << "a newer schema was read";
  } catch (const fleet::FleetError& e) {
    EXPECT_THAT(e.what(), HasSubstr("upgrade ablation-client"));
  }
}

// v5: the L2 mode is part of a series' key, as in a daemon's own store: nights measured with the
// L2 hot (0.6 ms) between cold ones (1.0 ms) are a series of their own, not steps of the cold one.
// A database of v4 (no mode stored) gets each row's mode from its message when it migrates.
TEST_F(FleetE2E, TheL2ModeIsPartOfASeriesKey) {
  fleet::PgConnection c(pg_->conninfo());
  fleet::MigrateFleet(c);
  const fleet::DaemonIdentity daemon{"1234abcd1234abcd1234abcd1234abcd", "gpu-l2", ""};
  for (int night = 1; night <= 4; ++night) {
    const bool hot = night % 2 == 0;
    fleet::RunExport run = Night(night, night, hot ? 0.6 : 1.0, "00000000000000b2");
    run.measurements[0].set_l2(hot ? v1::L2_MODE_HOT : v1::L2_MODE_COLD_ROTATED);
    ASSERT_EQ(fleet::ExportRun(c, daemon, run), fleet::ExportOutcome::kExported);
  }
  EXPECT_EQ(Count("SELECT count(*) FROM ablationd.measurements WHERE l2 = 'hot'"), 2);
  const std::vector<fleet::FleetSeriesKey> of_night_4 = fleet::SeriesOfRun(c, daemon.daemon_id, 4);
  ASSERT_EQ(of_night_4.size(), 1u);
  EXPECT_EQ(of_night_4[0].l2, "hot");
  EXPECT_THAT(of_night_4[0].Name(), HasSubstr("(window, L2 hot)"));
  auto recompute_all = [&] {
    std::vector<fleet::FleetSeriesKey> stale = fleet::StaleSeries(c);
    EXPECT_EQ(stale.size(), 2u);
    std::string modes;
    for (const fleet::FleetSeriesKey& key : stale) {
      modes += key.l2 + " ";
      const fleet::SeriesChangePoints computed = fleet::RecomputeChangePoints(c, key);
      EXPECT_EQ(computed.points, 2) << key.Name();
      EXPECT_EQ(computed.change_points, 0) << key.Name();
    }
    EXPECT_EQ(modes, "cold_rotated hot ");
    EXPECT_TRUE(fleet::StaleSeries(c).empty());
  };
  recompute_all();
  EXPECT_EQ(Count("SELECT count(*) FROM ablationd.fleet_change_points"), 0);
  EXPECT_EQ(Count("SELECT count(DISTINCT l2) FROM ablationd.fleet_steps"), 2);

  // As a v4 database: the column empty, the version 4. The migration reads each row's mode from
  // its message and makes the change points anew, to be computed again per mode.
  c.Exec("UPDATE ablationd.measurements SET l2 = ''; UPDATE ablationd.fleet_schema SET version = 4",
         "make it version 4");
  fleet::MigrateFleet(c);
  EXPECT_EQ(fleet::FleetSchemaVersion(c), fleet::kFleetSchemaVersion);
  EXPECT_EQ(Count("SELECT count(*) FROM ablationd.measurements WHERE l2 = 'cold_rotated'"), 2);
  EXPECT_EQ(Count("SELECT count(*) FROM ablationd.measurements WHERE l2 = 'hot'"), 2);
  EXPECT_EQ(Count("SELECT count(*) FROM ablationd.fleet_change_point_series"), 0);
  recompute_all();
}

}  // namespace
}  // namespace ablation::testing
