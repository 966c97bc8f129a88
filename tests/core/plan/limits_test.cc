#include "server/core/plan/limits.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "ablation/v1/ablation.pb.h"

namespace ablation::core {
namespace {

TEST(Limits, QuoteInputKeepsAShortEscapedPrefix) {
  EXPECT_EQ(QuoteInput("L1_R1_s9"), "'L1_R1_s9'");
  EXPECT_EQ(QuoteInput("a\x1b[2Jb'"), "'a\\x1b[2Jb\\x27'");
  const std::string quoted = QuoteInput(std::string(1 << 20, 'x'));
  EXPECT_EQ(quoted, "'" + std::string(64, 'x') + "'... (1048576 characters)");
}

TEST(Limits, RequestBoundsNameTheFieldBeforeAnyWork) {
  RequestLimits limits;
  v1::RunRequest request;
  request.add_variants("abl_*");
  EXPECT_TRUE(CheckRequestBounds(request, limits).ok());
  request.add_variants(std::string(129, 'v'));
  Status st = CheckRequestBounds(request, limits);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_EQ(st.message().rfind("variants[1]: 129 characters; at most 128 ('vvvv", 0), 0u)
      << st.message();
  request.clear_variants();
  request.add_tags("ok");
  request.add_tags("bell\a");
  st = CheckRequestBounds(request, limits);
  EXPECT_EQ(st.message(), "tags[1]: control characters are not allowed ('bell\\x07')");
  request.clear_tags();
  for (int i = 0; i <= limits.max_repeated; ++i) request.add_shapes();
  EXPECT_EQ(CheckRequestBounds(request, limits).message(), "shapes: 1025 entries; at most 1024");
  // Nested messages are walked too, and other text gets the longer bound.
  v1::RunRequest clocks;
  clocks.mutable_clocks()->set_sm_mhz(std::string(200, '9'));
  EXPECT_NE(CheckRequestBounds(clocks, limits).message().find("clocks.sm_mhz: 200 characters"),
            std::string::npos);
  v1::RunRequest spoof;
  spoof.set_requested_by(std::string(1000, 'r'));
  EXPECT_TRUE(CheckRequestBounds(spoof, limits).ok());
}

TEST(Limits, AKernelsSourceAndManifestAreDocumentsBoundedByTheMessage) {
  RequestLimits limits;
  v1::AddKernelRequest add;
  add.set_source(std::string(4000, 'x') + "\n\tint i;\r\n");  // lines and tabs are its text
  add.set_manifest("name = \"tiled\"\n");
  EXPECT_TRUE(CheckRequestBounds(add, limits).ok());
  add.set_source("int i;\x01\n");
  Status st = CheckRequestBounds(add, limits);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("source: control characters other than line breaks"),
            std::string::npos);
  limits.max_message_bytes = 100;
  add.set_source(std::string(101, 'x'));
  st = CheckRequestBounds(add, limits);
  EXPECT_NE(st.message().find("source: 101 bytes; at most 100"), std::string::npos);
  v1::GetKernelRequest get;  // any other text keeps its bounds
  get.set_name("a\nb");
  EXPECT_FALSE(CheckRequestBounds(get, RequestLimits{}).ok());
}

TEST(Limits, CheckedMultiplyRefusesWhatWraps) {
  int64_t out = 0;
  EXPECT_TRUE(CheckedMultiply(1 << 20, 1 << 20, &out));
  EXPECT_EQ(out, int64_t(1) << 40);
  EXPECT_FALSE(CheckedMultiply(int64_t(1) << 32, int64_t(1) << 32, &out));
  EXPECT_FALSE(CheckedMultiply(-1, 5, &out));
}

TEST(Limits, RunQuotaCountsPerIdentityAndInTotalUnderOneLock) {
  RequestLimits limits;
  limits.max_runs_per_identity = 2;
  limits.max_runs_total = 3;
  RunQuota quota(limits);
  EXPECT_TRUE(quota.Reserve("alice").ok());
  EXPECT_TRUE(quota.Reserve("alice").ok());
  Status st = quota.Reserve("alice");
  EXPECT_EQ(st.code(), Code::kFailedPrecondition);
  EXPECT_NE(st.message().find("alice already has 2 runs"), std::string::npos);
  EXPECT_TRUE(quota.Reserve("bob").ok());
  EXPECT_NE(quota.Reserve("carol").message().find("max_runs_total"), std::string::npos);
  EXPECT_EQ(quota.InFlight("carol"), 0);
  quota.Release("alice");
  EXPECT_TRUE(quota.Reserve("carol").ok());
  // Many threads at once never get more places than there are.
  RunQuota race(limits);
  std::atomic<int> granted{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 16; ++i) threads.emplace_back([&] { granted += race.Reserve("same").ok(); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(granted.load(), 2);
}

}  // namespace
}  // namespace ablation::core
