// ablationd's settings: flags over the configuration file, paths relative to the file, and what
// makes it stop before anything runs.
#include "server/daemon/settings.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <algorithm>

namespace ablation::daemon {
namespace {

class SettingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ablation_settings_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_ / "etc");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }

  bool Read(std::vector<std::string> args, DaemonSettings* settings, int* code) {
    args.insert(args.begin(), "ablationd");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    return ReadSettings(int(argv.size()), argv.data(), settings, code);
  }

  std::filesystem::path dir_;
};

TEST_F(SettingsTest, FlagsWinOverTheFileWhosePathsAreRelativeToIt) {
  const std::string config = Write("etc/ablationd.toml",
                                   "listen = \"127.0.0.1:6001\"\n"
                                   "db = \"/var/lib/x.db\"\n"
                                   "[auth]\ntokens = \"tokens\"\n");
  DaemonSettings s;
  int code = -1;
  ASSERT_TRUE(Read({"--config", config, "--db", "/tmp/y.db", "--metrics-listen", ""}, &s, &code));
  EXPECT_EQ(s.config.listen, "127.0.0.1:6001");
  EXPECT_EQ(s.config.db_path, "/tmp/y.db");
  EXPECT_EQ(s.config.auth.tokens_path, (dir_ / "etc" / "tokens").string());
  EXPECT_EQ(s.config.clock_journal, "/tmp/y.db.clocks");
  EXPECT_TRUE(s.metrics_listen_given);
  EXPECT_EQ(s.metrics_listen, "");
  ASSERT_NE(s.presets, nullptr);
  EXPECT_NE(s.presets->Find("ladder-h"), nullptr);  // the built-in presets are always there
  EXPECT_FALSE(s.config.worker_path.empty());       // beside the executable by default
}

TEST_F(SettingsTest, ResolvesEveryRelativePathAgainstTheConfigFileOnly) {
  core::DaemonConfig c;
  c.db_path = "r.db";
  c.auth.tls_cert = "cert.pem";
  c.auth.client_ca = "/abs/ca.pem";
  c.presets_path = "more.toml";
  ResolvePaths("/etc/ablationd/ablationd.toml", &c);
  EXPECT_EQ(c.auth.tls_cert, "/etc/ablationd/cert.pem");
  EXPECT_EQ(c.auth.client_ca, "/abs/ca.pem");
  EXPECT_EQ(c.presets_path, "/etc/ablationd/more.toml");
  EXPECT_EQ(c.clock_journal, "r.db.clocks");
  core::DaemonConfig flags_only;
  flags_only.presets_path = "more.toml";
  ResolvePaths("", &flags_only);  // no file: relative to the working directory, as given
  EXPECT_EQ(flags_only.presets_path, "more.toml");
}

TEST_F(SettingsTest, ABadFileOrPresetStopsWithCodeTwoBeforeAnythingRuns) {
  DaemonSettings s;
  int code = -1;
  EXPECT_FALSE(Read({"--config", Write("bad.toml", "listne = 1\n")}, &s, &code));
  EXPECT_EQ(code, 2);
  DaemonSettings p;
  code = -1;
  EXPECT_FALSE(Read({"--presets", Write("p.toml", "[x]\nvariants = 3\n")}, &p, &code));
  EXPECT_EQ(code, 2);
  DaemonSettings f;
  code = -1;
  EXPECT_FALSE(Read({"--log-level", "loud"}, &f, &code));
  EXPECT_NE(code, 0);
}

TEST_F(SettingsTest, VersionAndHashTokenStopOrGoOnWithoutReadingTheConfig) {
  DaemonSettings v;
  int code = -1;
  EXPECT_FALSE(Read({"--version"}, &v, &code));
  EXPECT_EQ(code, 0);
  DaemonSettings h;
  code = -1;
  // The configuration would be refused; --hash-token does not read it.
  ASSERT_TRUE(Read({"--hash-token", "alice:run", "--config", Write("bad.toml", "listne = 1\n")}, &h,
                   &code));
  EXPECT_EQ(h.hash_token, "alice:run");
  EXPECT_FALSE(h.metrics_listen_given);
}

// A metrics address other machines reach is refused before anything starts, as the gRPC listener
// refuses one without TLS, unless --metrics-allow-remote says it is meant.
TEST_F(SettingsTest, ARemoteMetricsAddressNeedsMetricsAllowRemote) {
  DaemonSettings s;
  int code = -1;
  EXPECT_FALSE(Read({"--metrics-listen", "0.0.0.0:9464"}, &s, &code));
  EXPECT_EQ(code, 2);
  DaemonSettings allowed;
  EXPECT_TRUE(
      Read({"--metrics-listen", "0.0.0.0:9464", "--metrics-allow-remote"}, &allowed, &code));
  EXPECT_TRUE(allowed.metrics_allow_remote);
  DaemonSettings loopback;
  EXPECT_TRUE(
      Read({"--metrics-listen", "127.0.0.1:9464", "--audit-log", "/tmp/a"}, &loopback, &code));
  EXPECT_EQ(loopback.audit_log, "/tmp/a");
  // IPv6: the loopback is taken as it is, all addresses ([::]) are remote.
  DaemonSettings v6_loopback;
  EXPECT_TRUE(Read({"--metrics-listen", "[::1]:9464"}, &v6_loopback, &code));
  EXPECT_EQ(v6_loopback.metrics_listen, "[::1]:9464");
  DaemonSettings v6_any;
  EXPECT_FALSE(Read({"--metrics-listen", "[::]:9464"}, &v6_any, &code));
  EXPECT_EQ(code, 2);
}

}  // namespace
}  // namespace ablation::daemon

namespace ablation::daemon {
namespace {

// A password given as --fleet-db is warned of and overwritten in the process's arguments (what
// ps and /proc/PID/cmdline show), in both spellings of the flag; the daemon still uses it.
TEST_F(SettingsTest, AFleetPasswordOnTheCommandLineIsWarnedOfAndHiddenFromPs) {
  for (const bool joined : {false, true}) {
    std::vector<std::string> args = {"ablationd", "--metrics-listen", ""};
    const std::string db = "postgresql://ablationd@fleet-db/fleet?%70assword=s3cret";
    if (joined) {
      args.push_back("--fleet-db=" + db);
    } else {
      args.push_back("--fleet-db");
      args.push_back(db);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    DaemonSettings settings;
    int code = -1;
    ::testing::internal::CaptureStderr();
    ASSERT_TRUE(ReadSettings(int(argv.size()), argv.data(), &settings, &code));
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("warning: --fleet-db holds a password"), std::string::npos) << err;
    EXPECT_EQ(settings.config.fleet.db, db);
    const std::string shown = argv.back();  // the bytes ps reads
    EXPECT_EQ(shown.find("s3cret"), std::string::npos) << shown;
    EXPECT_NE(shown.find("postgresql://ablationd@fleet-db/fleet"), std::string::npos) << shown;
  }
}

// The fleet database: the flag over the file's db_file (relative to the file) over the
// environment; a string libpq cannot read stops the daemon naming it, never its password.
TEST_F(SettingsTest, TheFleetDatabaseFromAFlagAFileOrTheEnvironmentIsChecked) {
  Write("etc/fleet-db", "postgresql://ablationd:s3cret@fleet-db/fleet\n");
  const std::string config =
      Write("etc/ablationd.toml", "[fleet]\ndb_file = \"fleet-db\"\nretry_max_seconds = 5\n");
  ::unsetenv("ABLATION_FLEET_DB");
  DaemonSettings from_file;
  int code = -1;
  ASSERT_TRUE(Read({"--config", config, "--metrics-listen", ""}, &from_file, &code));
  EXPECT_EQ(from_file.config.fleet.db, "postgresql://ablationd:s3cret@fleet-db/fleet");
  EXPECT_EQ(from_file.config.fleet.retry_max_seconds, 5);
  DaemonSettings from_flag;
  ASSERT_TRUE(
      Read({"--config", config, "--fleet-db", "host=/run/pg dbname=fleet"}, &from_flag, &code));
  EXPECT_EQ(from_flag.config.fleet.db, "host=/run/pg dbname=fleet");
  ::setenv("ABLATION_FLEET_DB", "postgresql://env@fleet-db/fleet", 1);
  DaemonSettings from_env;
  ASSERT_TRUE(Read({}, &from_env, &code));
  EXPECT_EQ(from_env.config.fleet.db, "postgresql://env@fleet-db/fleet");
  ::unsetenv("ABLATION_FLEET_DB");
  DaemonSettings none;
  ASSERT_TRUE(Read({}, &none, &code));
  EXPECT_EQ(none.config.fleet.db, "");

  core::FleetConfig bad;
  bad.db = "host=db password=s3cret nosuchkey=1";
  const core::Status st = ResolveFleetDb(&bad);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("nosuchkey"), std::string::npos) << st.message();
  EXPECT_EQ(st.message().find("s3cret"), std::string::npos) << st.message();
  core::FleetConfig missing;
  missing.db_file = (dir_ / "nosuch").string();
  EXPECT_NE(ResolveFleetDb(&missing).message().find("fleet.db_file: cannot read"),
            std::string::npos);
  DaemonSettings refused;
  code = -1;
  EXPECT_FALSE(Read({"--fleet-db", "host='unclosed"}, &refused, &code));
  EXPECT_EQ(code, 2);
}

// The node's provenance: ABLATION_NODE_LABELS adds to (and replaces) the file's labels,
// ABLATION_NODE_NAME wins over the file's name, the host name stands in for none; a bad label
// stops the daemon naming it.
// The bytes-per-run bound: config key and flag (the flag wins), its floor; and SIGHUP's reading
// of the file again keeps the flags over it and names what needs a restart.
TEST_F(SettingsTest, TheBytesPerRunBoundAndAReloadThatKeepsTheFlags) {
  const std::string config =
      Write("etc/ablationd.toml", "readers = 4\n[limits]\nmax_stored_bytes_per_run = 8388608\n");
  DaemonSettings s;
  int code = -1;
  ASSERT_TRUE(Read({"--config", config, "--metrics-listen", ""}, &s, &code));
  EXPECT_EQ(s.config.limits.max_stored_bytes_per_run, 8388608);
  DaemonSettings by_flag;
  ASSERT_TRUE(Read({"--config", config, "--metrics-listen", "", "--db", "/tmp/z.db",
                    "--max-stored-bytes-per-run", "16777216"},
                   &by_flag, &code));
  EXPECT_EQ(by_flag.config.limits.max_stored_bytes_per_run, 16777216);
  DaemonSettings too_small;
  EXPECT_FALSE(Read({"--max-stored-bytes-per-run", "1000"}, &too_small, &code));
  EXPECT_NE(code, 0);  // CLI11's code for a value out of range
  Write("etc/small.toml", "[limits]\nmax_stored_bytes_per_run = 1000\n");
  EXPECT_FALSE(Read({"--config", (dir_ / "etc/small.toml").string()}, &too_small, &code));
  EXPECT_EQ(code, 2);

  // Read again: the file's new values, the flags still over them, the changes that need a
  // restart named.
  Write("etc/ablationd.toml",
        "readers = 2\ndb = \"/var/lib/other.db\"\n[limits]\n"
        "max_stored_bytes_per_run = 4194304\nmax_runs_per_identity = 3\n");
  core::DaemonConfig fresh;
  ASSERT_TRUE(ReloadConfig(by_flag, by_flag.config, &fresh).ok());
  EXPECT_EQ(fresh.limits.max_runs_per_identity, 3);
  EXPECT_EQ(fresh.limits.max_stored_bytes_per_run, 16777216);  // the flag still wins
  EXPECT_EQ(fresh.db_path, "/tmp/z.db");                       // so does --db
  const std::vector<std::string> restart = NeedRestart(by_flag.config, fresh);
  ASSERT_EQ(restart.size(), 1u);
  EXPECT_EQ(restart[0], "readers (4 -> 2)");
  // [user_kernels] is read at the start only: a change is named, not applied. [timing] is applied
  // (TimingChanges names each change), so it needs no restart.
  Write("etc/ablationd.toml",
        "[timing]\nmin_samples = 20\nregime = \"burst\"\nwindow_seconds = 5\n"
        "[user_kernels]\nadd_role = \"run\"\n");
  ASSERT_TRUE(ReloadConfig(by_flag, by_flag.config, &fresh).ok());
  const std::vector<std::string> later = NeedRestart(by_flag.config, fresh);
  EXPECT_EQ(later, std::vector<std::string>{"user_kernels.add_role ('' -> 'run')"});
  EXPECT_EQ(TimingChanges(by_flag.config.timing, fresh.timing),
            (std::vector<std::string>{"timing.min_samples (10 -> 20)",
                                      "timing.regime (sustained -> burst)",
                                      "timing.window_seconds (3 -> 5)"}));
  Write("etc/ablationd.toml", "log_level = \"loud\"\n");
  const core::Status bad = ReloadConfig(by_flag, by_flag.config, &fresh);
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("log_level: 'loud'"), std::string::npos) << bad.message();
}

TEST(NodeEnvironment, EnvironmentOverTheFileAndTheHostNameLast) {
  core::DaemonConfig config;
  config.node_labels = {{"zone", "a"}, {"pool", "h100"}};
  ::setenv("ABLATION_NODE_LABELS", "pool=h200,rack=r7", 1);
  ::unsetenv("ABLATION_NODE_NAME");
  ASSERT_TRUE(ApplyNodeEnvironment(&config).ok());
  EXPECT_EQ(config.node_labels.at("pool"), "h200");
  EXPECT_EQ(config.node_labels.at("rack"), "r7");
  EXPECT_EQ(config.node_labels.at("zone"), "a");
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  EXPECT_EQ(config.node_name, host);
  ::setenv("ABLATION_NODE_NAME", "gpu-node-7", 1);
  ASSERT_TRUE(ApplyNodeEnvironment(&config).ok());
  EXPECT_EQ(config.node_name, "gpu-node-7");
  ::setenv("ABLATION_NODE_LABELS", "pool", 1);
  const core::Status st = ApplyNodeEnvironment(&config);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("ABLATION_NODE_LABELS: node label 'pool' is not key=value"),
            std::string::npos)
      << st.message();
  ::unsetenv("ABLATION_NODE_LABELS");
  ::unsetenv("ABLATION_NODE_NAME");
}

}  // namespace
}  // namespace ablation::daemon
