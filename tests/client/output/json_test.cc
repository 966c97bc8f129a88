// The JSON envelope of every --format json (client/json.h): its shape, the items in protobuf's
// mapping with the enum values as the words the CSV and the database use, and the way back.
#include "client/output/json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ablation/v1/ablation.pb.h"
#include "ablation/v1/report.pb.h"

namespace ablation::client {
namespace {

namespace v1 = ::ablation::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

v1::Measurement MakeMeasurement(const std::string& variant, double median_ms) {
  v1::Measurement m;
  m.set_variant(variant);
  m.set_dtype("bf16");
  m.mutable_shape()->set_m(4096);
  m.set_status(v1::MEASUREMENT_STATUS_OK);
  m.set_regime(v1::REGIME_SUSTAINED);
  m.mutable_stats()->set_median_ms(median_ms);
  m.set_run_id(42);
  return m;
}

TEST(JsonEnvelopeTest, SchemaVersionKindFieldsThenItemsOnePerLine) {
  const std::vector<v1::Measurement> ms = {MakeMeasurement("a", 1.5), MakeMeasurement("b", 2.5)};
  const std::string text =
      JsonEnvelope("measurements", ms, {{"run_id", std::int64_t{42}}, {"truncated", false}});
  ParsedEnvelope parsed;
  ASSERT_EQ(ParseJsonEnvelope(text, &parsed), "") << text;
  EXPECT_EQ(parsed.schema_version, kJsonSchemaVersion);
  EXPECT_EQ(parsed.kind, "measurements");
  EXPECT_THAT(parsed.keys, ElementsAre("schema_version", "kind", "run_id", "truncated", "items"));
  EXPECT_EQ(parsed.Field("run_id"), "42");  // an id is a number, as in the items
  EXPECT_EQ(parsed.Field("truncated"), "false");
  ASSERT_EQ(parsed.items.size(), 2u);
  // One item per line: grep finds a row.
  EXPECT_THAT(text, HasSubstr("\n    {\"id\":0,\"run_id\":42"));
  EXPECT_THAT(text, HasSubstr("\"variant\":\"a\""));
}

TEST(JsonEnvelopeTest, EnumValuesAreTheWordsOfTheCsvAndTheDatabase) {
  v1::Measurement m = MakeMeasurement("a", 1);
  m.set_verification_outcome(v1::VERIFICATION_OUTCOME_NOT_CHECKED);
  const std::string item = JsonItem(m);
  EXPECT_THAT(item, HasSubstr("\"status\":\"ok\""));
  EXPECT_THAT(item, HasSubstr("\"regime\":\"sustained\""));
  EXPECT_THAT(item, HasSubstr("\"verification_outcome\":\"not_checked\""));
  EXPECT_THAT(item, Not(HasSubstr("MEASUREMENT_STATUS_")));
  EXPECT_THAT(item, Not(HasSubstr("REGIME_")));
  // The zero value says nothing, as in the CSV.
  EXPECT_THAT(JsonItem(v1::Run()), HasSubstr("\"state\":\"\""));
  // Nested and repeated: a report's rows.
  v1::Report report;
  report.mutable_run()->set_state(v1::RUN_STATE_SUCCEEDED);
  report.add_sections()->add_rows()->set_status(v1::ROW_STATUS_MISSING);
  const std::string r = JsonItem(report);
  EXPECT_THAT(r, HasSubstr("\"state\":\"succeeded\""));
  EXPECT_THAT(r, HasSubstr("\"status\":\"missing\""));
  EXPECT_THAT(r, Not(HasSubstr("RUN_STATE_")));
}

TEST(JsonEnvelopeTest, ItemsReadBackIntoTheirMessages) {
  v1::Measurement m = MakeMeasurement("a", 1.25);
  m.set_status(v1::MEASUREMENT_STATUS_FAILED);
  m.set_error("quote\" backslash\\ newline\n unicode \xc3\xa9 </script>");
  ParsedEnvelope parsed;
  ASSERT_EQ(
      ParseJsonEnvelope(JsonEnvelope("measurements", std::vector{m, v1::Measurement()}), &parsed),
      "");
  ASSERT_EQ(parsed.items.size(), 2u);
  v1::Measurement back;
  ASSERT_EQ(ParseJsonItem(parsed.items[0], &back), "");
  EXPECT_EQ(back.SerializeAsString(), m.SerializeAsString());
  v1::Measurement empty;
  ASSERT_EQ(ParseJsonItem(parsed.items[1], &empty), "");
  EXPECT_EQ(empty.status(), v1::MEASUREMENT_STATUS_UNSPECIFIED);
  // A word the enum does not have is named by protobuf's parser.
  EXPECT_THAT(ParseJsonItem(R"({"status":"sideways"})", &back), HasSubstr("sideways"));
}

// int64 fields are JSON numbers ("id":14, not "14"), a uint64 past 2^63 kept whole; a string
// that holds the run's request is that request as JSON, not JSON in a string; and both read back
// into the same message.
TEST(JsonEnvelopeTest, Int64sAreNumbersAndARequestIsAnObject) {
  v1::Run run;
  run.set_id(14);
  run.set_created_at_ms(1796181184230);
  run.set_order_seed(9223372036854775813ull);  // 2^63 + 5
  run.mutable_device()->set_memory_bytes(150109880320);
  run.set_request_json(R"({"variants":["abl_*"],"shapes":[{"m":"4096","n":"4096","k":"512"}]})");
  const std::string item = JsonItem(run);
  EXPECT_THAT(item, HasSubstr("\"id\":14,"));
  EXPECT_THAT(item, HasSubstr("\"created_at_ms\":1796181184230,"));
  EXPECT_THAT(item, HasSubstr("\"order_seed\":9223372036854775813,"));
  EXPECT_THAT(item, HasSubstr("\"memory_bytes\":150109880320,"));
  EXPECT_THAT(item, HasSubstr("\"request_json\":{\"variants\":[\"abl_*\"],\"shapes\":[{\"m\":4096,"
                              "\"n\":4096,\"k\":512}]}"));
  EXPECT_THAT(item, Not(HasSubstr("\\\"")));  // no escaped quote: no JSON inside a string
  v1::Run back;
  ASSERT_EQ(ParseJsonItem(item, &back), "");
  EXPECT_EQ(back.SerializeAsString(), run.SerializeAsString());
  // No request (a run stored before they were kept): null, and back to "".
  run.clear_request_json();
  EXPECT_THAT(JsonItem(run), HasSubstr("\"request_json\":null"));
  ASSERT_EQ(ParseJsonItem(JsonItem(run), &back), "");
  EXPECT_EQ(back.request_json(), "");
  // Beside the items, an id is a number too.
  ParsedEnvelope parsed;
  ASSERT_EQ(
      ParseJsonEnvelope(JsonEnvelope("cancellation", run, {{"run_id", std::int64_t{14}}}), &parsed),
      "");
  EXPECT_EQ(parsed.Field("run_id"), "14");
}

TEST(JsonEnvelopeTest, EmptyItemsAndBadText) {
  const std::string text = JsonEnvelope("runs", std::vector<v1::Run>{}, {{"truncated", false}});
  EXPECT_EQ(text,
            "{\n  \"schema_version\": 2,\n  \"kind\": \"runs\",\n  \"truncated\": false,\n"
            "  \"items\": []\n}\n");
  ParsedEnvelope parsed;
  EXPECT_EQ(ParseJsonEnvelope(text, &parsed), "");
  EXPECT_TRUE(parsed.items.empty());
  EXPECT_EQ(ParseJsonEnvelope("[]", &parsed), "not a JSON object (the envelope is one)");
  EXPECT_EQ(ParseJsonEnvelope("{\"kind\":\"runs\",\"items\":[]}", &parsed),
            "no integer schema_version");
  EXPECT_EQ(ParseJsonEnvelope("{", &parsed), "not JSON");
}

TEST(JsonEnvelopeTest, StringFieldsAreEscaped) {
  const std::string text =
      JsonEnvelope("runs", std::vector<v1::Run>{}, {{"notice", std::string("say \"hi\"\n")}});
  ParsedEnvelope parsed;
  ASSERT_EQ(ParseJsonEnvelope(text, &parsed), "") << text;
  EXPECT_EQ(parsed.Field("notice"), "\"say \\\"hi\\\"\\n\"");
}

}  // namespace
}  // namespace ablation::client
