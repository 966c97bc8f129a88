#include "client/report/compare.h"

#include <gmock/gmock.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "client/json.h"

namespace ablation::client::report {
namespace {

namespace v1 = ::ablation::v1;
using ::testing::HasSubstr;

void Add(v1::GetRunResponse& run, const std::string& variant, double ms, std::uint64_t seed,
         int samples = 80) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0, 0.01);
  v1::Measurement* m = run.add_measurements();
  m->set_variant(variant);
  m->set_dtype("bf16");
  m->mutable_shape()->set_m(4096);
  m->mutable_shape()->set_n(4096);
  m->mutable_shape()->set_k(4096);
  m->set_status(v1::MEASUREMENT_STATUS_OK);
  for (int i = 0; i < samples; ++i) m->add_sample_ms(ms * std::exp(noise(rng)));
  m->mutable_stats()->set_median_ms(ms);
}

TEST(Compare, SameRunTwiceIsNoRegression) {
  v1::GetRunResponse a, b;
  a.mutable_run()->set_id(1);
  b.mutable_run()->set_id(2);
  Add(a, "abl_x", 1.0, 1);
  Add(b, "abl_x", 1.0, 2);
  Add(a, "cublas_bf16", 0.5, 3);
  Add(b, "cublas_bf16", 0.5, 4);
  v1::Comparison c = Compare(a, b, 0.03);
  ASSERT_EQ(c.rows_size(), 2);
  EXPECT_EQ(c.regressions(), 0);
  EXPECT_EQ(c.schema_version(), 1);
  EXPECT_EQ(c.run_a(), 1);
  EXPECT_EQ(c.run_b(), 2);
}

TEST(Compare, ASignificantSlowdownBeyondTheThresholdIsARegression) {
  v1::GetRunResponse a, b;
  Add(a, "slower", 1.0, 1);
  Add(b, "slower", 1.06, 2);  // +6%: beyond 3%
  Add(a, "slightly", 1.0, 3);
  Add(b, "slightly", 1.015, 4);  // +1.5%: significant but under the threshold
  Add(a, "faster", 1.0, 5);
  Add(b, "faster", 0.9, 6);
  Add(a, "gone", 1.0, 7);
  v1::Comparison c = Compare(a, b, 0.03);
  ASSERT_EQ(c.rows_size(), 3);
  std::map<std::string, v1::ComparisonRow> rows;
  for (const auto& r : c.rows()) rows[r.variant()] = r;
  EXPECT_TRUE(rows["slower"].regression());
  EXPECT_EQ(rows["slower"].verdict(), "REGRESSION");
  EXPECT_TRUE(rows["slightly"].significant());
  EXPECT_FALSE(rows["slightly"].regression());
  EXPECT_EQ(rows["slightly"].verdict(), "slower");
  EXPECT_EQ(rows["faster"].verdict(), "faster");
  EXPECT_EQ(c.regressions(), 1);
  ASSERT_EQ(c.only_in_a_size(), 1);
  EXPECT_EQ(c.only_in_a(0), "gone bf16 4096x4096x4096");
  EXPECT_EQ(Compare(a, b, 0.10).regressions(), 0);  // a looser threshold

  // The JSON is the message: it parses back into it, nothing lost.
  const std::string json = JsonDocument(c);
  v1::Comparison parsed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &parsed).ok()) << json;
  EXPECT_EQ(parsed.schema_version(), 1);
  EXPECT_EQ(parsed.regressions(), 1);
  EXPECT_EQ(parsed.SerializeAsString(), c.SerializeAsString());
  EXPECT_THAT(json, HasSubstr("\"regressions\": 1"));
  const std::string csv = RenderCsv(CompareTable(c));
  EXPECT_THAT(csv, HasSubstr("variant,dtype,shape,median_a_ms"));
  EXPECT_THAT(RenderText(CompareTable(c)), HasSubstr("REGRESSION"));
}

TEST(Compare, WithoutSamplesNothingIsClaimed) {
  v1::GetRunResponse a, b;
  Add(a, "x", 1.0, 1, 1);
  Add(b, "x", 2.0, 2, 1);
  v1::Comparison c = Compare(a, b, 0.03);
  ASSERT_EQ(c.rows_size(), 1);
  EXPECT_EQ(c.rows(0).verdict(), "no samples");
  EXPECT_FALSE(c.rows(0).has_test());
  EXPECT_EQ(c.regressions(), 0);
  EXPECT_THAT(RenderCsv(CompareTable(c)),
              HasSubstr("\r\nx,bf16,4096x4096x4096,1,2,1,,,,,no samples\r\n"));
}

TEST(Compare, Threshold) {
  double f = 0;
  EXPECT_EQ(ParseThreshold("3%", &f), "");
  EXPECT_DOUBLE_EQ(f, 0.03);
  EXPECT_EQ(ParseThreshold("0.5", &f), "");
  EXPECT_DOUBLE_EQ(f, 0.005);
  EXPECT_NE(ParseThreshold("abc", &f), "");
  EXPECT_NE(ParseThreshold("-1%", &f), "");
  EXPECT_NE(ParseThreshold("", &f), "");
}

}  // namespace
}  // namespace ablation::client::report
