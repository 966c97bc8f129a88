#include "server/core/config.h"

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

TEST(Config, UnknownKeysWrongTypesAndBadValuesNameTheKey) {
  DaemonConfig c;
  Status st = LoadConfigText("listne = \"x\"\n", "a.toml", &c);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("a.toml: listne: unknown setting"), std::string::npos)
      << st.message();
  st = LoadConfigText("[timing]\nmin_samples = \"ten\"\n", "b.toml", &c);
  EXPECT_NE(st.message().find("timing.min_samples: expected an integer"), std::string::npos);
  st = LoadConfigText("[timing]\ntarget_noise = 1.5\n", "c.toml", &c);
  EXPECT_NE(st.message().find("timing.target_noise"), std::string::npos);
  st = LoadConfigText("listen = \n", "d.toml", &c);
  EXPECT_NE(st.message().find("d.toml:1"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace ablation::core
