#include "server/core/setup/config.h"

#include <gtest/gtest.h>

namespace ablation::core {
namespace {

TEST(Config, ReadsEverySetting) {
  DaemonConfig c;
  Status st = LoadConfigText(R"(
listen = "0.0.0.0:6000"
db = "/var/lib/ablationd/results.db"
worker = "/opt/ablationd/bin/ablation-worker"
log_level = "debug"
[timing]
min_samples = 20
min_seconds = 1.0
max_seconds = 30
target_noise = 0.002
warmup_count = 5
warmup_seconds = 0.2
[queue]
max_queued_per_gpu = 8
)",
                             "test.toml", &c);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(c.listen, "0.0.0.0:6000");
  EXPECT_EQ(c.db_path, "/var/lib/ablationd/results.db");
  EXPECT_EQ(c.worker_path, "/opt/ablationd/bin/ablation-worker");
  EXPECT_EQ(c.timing.min_samples, 20);
  EXPECT_DOUBLE_EQ(c.timing.max_seconds, 30);
  EXPECT_DOUBLE_EQ(c.timing.target_noise, 0.002);
  EXPECT_EQ(c.max_queued_per_gpu, 8);
}

TEST(Config, ReadsTheRegimeAndItsSettleRuleAndRefusesWhatCannotSettle) {
  DaemonConfig c;
  Status st = LoadConfigText(R"(
[timing]
regime = "burst"
window_seconds = 6
settle_min_seconds = 8
settle_span_seconds = 2
settle_spans = 4
settle_clock_tolerance = 0.002
settle_power_tolerance = 0.01
)",
                             "r.toml", &c);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(c.timing.regime, Regime::kBurst);
  const RegimeParams& r = c.timing.regime_params;
  EXPECT_DOUBLE_EQ(r.window_seconds, 6);
  EXPECT_DOUBLE_EQ(r.settle_min_seconds, 8);
  EXPECT_DOUBLE_EQ(r.span_seconds, 2);
  EXPECT_EQ(r.settle_spans, 4);
  EXPECT_DOUBLE_EQ(r.clock_tolerance, 0.002);
  EXPECT_DOUBLE_EQ(r.power_tolerance, 0.01);
  const struct {
    const char* text;
    const char* says;
  } bad[] = {
      {"[timing]\nsettle_spans = 1\n", "timing.settle_spans: must be 2 to 20"},
      {"[timing]\nsettle_clock_tolerance = 0\n", "timing.settle_clock_tolerance: must be"},
      {"[timing]\nsettle_span_seconds = -1\n", "timing.settle_span_seconds: must be"},
      {"[timing]\nregime = \"locked\"\n", "timing.regime: 'locked' is not a default regime"},
  };
  for (const auto& b : bad) {
    DaemonConfig d;
    st = LoadConfigText(b.text, "bad.toml", &d);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << b.text;
    EXPECT_NE(st.message().find(b.says), std::string::npos) << st.message();
  }
}

TEST(Config, UnknownKeysWrongTypesAndBadValuesNameTheKey) {
  DaemonConfig c;
  Status st = LoadConfigText("listne = \"x\"\n", "a.toml", &c);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("a.toml:1: listne: unknown key"), std::string::npos) << st.message();
  st = LoadConfigText("[timing]\nmin_samples = \"ten\"\n", "b.toml", &c);
  EXPECT_NE(st.message().find("timing.min_samples: expected an integer"), std::string::npos);
  st = LoadConfigText("[timing]\ntarget_noise = 1.5\n", "c.toml", &c);
  EXPECT_NE(st.message().find("timing.target_noise"), std::string::npos);
  st = LoadConfigText("listen = \n", "d.toml", &c);
  EXPECT_NE(st.message().find("d.toml:1"), std::string::npos) << st.message();
}

TEST(Config, ReadsLimitsAuthAndTlsAndRefusesWhatWouldWrapOrIsNotFinite) {
  DaemonConfig c;
  Status st = LoadConfigText(R"(
readers = 2
hang_margin_seconds = 7
[limits]
max_measurements_per_run = 500
max_runs_per_identity = 3
max_name_length = 64
[auth]
tokens = "tokens"
anonymous_role = "read"
client_cert_role = "admin"
[tls]
cert = "s.pem"
key = "s.key"
client_ca = "ca.pem"
require_client_cert = true
)",
                             "t.toml", &c);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(c.readers, 2);
  EXPECT_EQ(c.hang_margin_seconds, 7);
  EXPECT_EQ(c.limits.max_measurements_per_run, 500);
  EXPECT_EQ(c.limits.max_runs_per_identity, 3);
  EXPECT_EQ(c.limits.max_name_length, 64u);
  EXPECT_EQ(c.auth.anonymous_role, Role::kRead);
  EXPECT_EQ(c.auth.client_cert_role, Role::kAdmin);
  EXPECT_TRUE(c.auth.require_client_cert);
  const std::pair<const char*, const char*> bad[] = {
      {"[limits]\nmax_runs_total = 4294967296\n", "limits.max_runs_total: must be between 0"},
      {"[timing]\nwarmup_seconds = inf\n", "timing.warmup_seconds: must be a finite number"},
      {"[auth]\nanonymous_role = \"root\"\n", "auth.anonymous_role: expected none, read"},
      {"[tls]\ncert = \"a\"\n", "tls.cert: tls.cert and tls.key go together"},
      {"[tls]\nrequire_client_cert = true\n", "tls.require_client_cert: needs tls.client_ca"},
      {"readers = 0\n", "readers: must be 1 to 64"},
  };
  for (const auto& [text, expect] : bad) {
    DaemonConfig d;
    st = LoadConfigText(text, "b.toml", &d);
    EXPECT_NE(st.message().find(expect), std::string::npos) << text << " -> " << st.message();
  }
}

}  // namespace
}  // namespace ablation::core

namespace ablation::core {
namespace {

TEST(Config, ReadsTheNodeNameAndLabels) {
  DaemonConfig c;
  Status st = LoadConfigText(R"(
[node]
name = "gpu-node-7"
labels = { zone = "eu-1", "nvidia.com/gpu.product" = "H200" }
)",
                             "test.toml", &c);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(c.node_name, "gpu-node-7");
  ASSERT_EQ(c.node_labels.size(), 2u);
  EXPECT_EQ(c.node_labels.at("zone"), "eu-1");
  EXPECT_EQ(c.node_labels.at("nvidia.com/gpu.product"), "H200");
  DaemonConfig bad;
  st = LoadConfigText("[node]\nlabels = { \"bad key\" = \"x\" }\n", "test.toml", &bad);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("node.labels.bad key"), std::string::npos) << st.message();
  st = LoadConfigText("[node]\nlabels = { zone = 3 }\n", "test.toml", &bad);
  EXPECT_NE(st.message().find("expected a string"), std::string::npos) << st.message();
  st = LoadConfigText("[node]\nowner = \"me\"\n", "test.toml", &bad);
  EXPECT_NE(st.message().find("node.owner"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace ablation::core

namespace ablation::core {
namespace {

TEST(Config, ReadsTheFleetTableAndNamesWhatIsWrong) {
  DaemonConfig c;
  Status st = LoadConfigText(
      "[fleet]\ndb_file = \"/etc/ablationd/fleet-db\"\nretry_max_seconds = 30\n", "test.toml", &c);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(c.fleet.db_file, "/etc/ablationd/fleet-db");
  EXPECT_EQ(c.fleet.db, "");
  EXPECT_EQ(c.fleet.retry_max_seconds, 30);
  for (const auto& [text, expect] : std::vector<std::pair<std::string, std::string>>{
           {"[fleet]\nretry_max_seconds = 0\n", "fleet.retry_max_seconds"},
           {"[fleet]\ndb = 5\n", "fleet.db"},
           {"[fleet]\nurl = \"x\"\n", "fleet.url"},
           {"fleet = 1\n", "fleet"}}) {
    DaemonConfig d;
    st = LoadConfigText(text, "b.toml", &d);
    ASSERT_FALSE(st.ok()) << text;
    EXPECT_NE(st.message().find(expect), std::string::npos) << text << " -> " << st.message();
  }
}

}  // namespace
}  // namespace ablation::core
