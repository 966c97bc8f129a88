// The Store's results: measurements (and their samples) and verifications, as the store reads
// them back and as they lie on disk.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <limits>
#include <string>
#include <vector>

#include "db/error.h"
#include "db/store.h"
#include "tests/db/db_test_support.h"
#include "tests/db/store_test_support.h"

namespace ablation::db {
namespace {

using testing::CodeOf;
using ::testing::ElementsAre;
using testing::FullMeasurement;
using ::testing::HasSubstr;
using testing::kBaseMs;
using testing::MakeRun;
using testing::RawDb;
using testing::SameMeasurement;
using testing::StoreTest;

std::vector<double> Samples(const v1::Measurement& x) {
  return std::vector<double>(x.sample_ms().begin(), x.sample_ms().end());
}

TEST_F(StoreTest, MeasurementRoundTripsEveryField) {
  const int64_t run = store_->CreateRun(MakeRun());
  const v1::Measurement written = FullMeasurement(run);
  const int64_t id = store_->InsertMeasurement(written);

  const auto with = store_->MeasurementsOfRun(run, /*include_samples=*/true);
  ASSERT_EQ(with.size(), 1u);
  EXPECT_EQ(with[0].id(), id);
  EXPECT_TRUE(SameMeasurement(with[0], written));
  EXPECT_EQ(Samples(with[0]), Samples(written));
  // A few by hand too, in case the comparison itself were blind.
  EXPECT_EQ(with[0].shape().n(), 2048);
  EXPECT_EQ(with[0].stats().total_seconds(), 0.61);
  EXPECT_EQ(with[0].telemetry().power_w_max(), 600.5);
  EXPECT_THAT(with[0].telemetry().throttle_reasons(), ElementsAre("sw_power_cap", "hw_slowdown"));
  EXPECT_EQ(with[0].occupancy().limiter(), "registers");
  EXPECT_EQ(with[0].l2(), v1::L2_MODE_COLD);
  EXPECT_EQ(with[0].verification_outcome(), v1::VERIFICATION_OUTCOME_PASSED);
  EXPECT_EQ(with[0].bytes_per_second(), 3.5e12);

  const auto without = store_->MeasurementsOfRun(run, /*include_samples=*/false);
  ASSERT_EQ(without.size(), 1u);
  EXPECT_TRUE(SameMeasurement(without[0], written));
  EXPECT_TRUE(without[0].sample_ms().empty());

  MeasurementFilter filter;
  filter.include_samples = true;
  const auto page = store_->QueryMeasurements(filter);
  ASSERT_EQ(page.measurements.size(), 1u);
  EXPECT_TRUE(SameMeasurement(page.measurements[0], written));
  EXPECT_EQ(Samples(page.measurements[0]), Samples(written));
  EXPECT_TRUE(page.next_page_token.empty());

  RawDb raw(path_);
  EXPECT_EQ(raw.Text("SELECT throttle_reasons FROM measurements"), "sw_power_cap,hw_slowdown");
  // The enums, the renamed telemetry columns and the flattened sub-messages, as on disk.
  EXPECT_EQ(raw.Text("SELECT status FROM measurements"), "ok");
  EXPECT_EQ(raw.Text("SELECT l2 FROM measurements"), "cold");
  EXPECT_EQ(raw.Text("SELECT verification_outcome FROM measurements"), "passed");
  EXPECT_EQ(raw.Int("SELECT telemetry_available FROM measurements"), 1);
  EXPECT_EQ(raw.Text("SELECT telemetry_note FROM measurements"), "nvml 12.560");
  EXPECT_EQ(raw.Int("SELECT k FROM measurements"), 1024);
  EXPECT_EQ(raw.Text("SELECT median_ms FROM measurements"), "1.01");
  EXPECT_EQ(raw.Int("SELECT threads_per_block FROM measurements"), 256);
  EXPECT_EQ(raw.Int("SELECT sequence FROM measurements"), 4);
  EXPECT_EQ(raw.Int("SELECT created_at_ms FROM measurements"), kBaseMs + 1234);
}

TEST_F(StoreTest, MeasurementCreatedAtDefaultsToNowAndStatusIsRequired) {
  const int64_t run = store_->CreateRun(MakeRun());
  v1::Measurement x = FullMeasurement(run);
  x.set_created_at_ms(0);
  store_->InsertMeasurement(x);
  EXPECT_GT(store_->MeasurementsOfRun(run, false)[0].created_at_ms(), kBaseMs);

  std::string message;
  x.set_status(v1::MEASUREMENT_STATUS_UNSPECIFIED);
  EXPECT_EQ(CodeOf([&] { store_->InsertMeasurement(x); }, &message), Error::Code::kInvalidArgument);
  EXPECT_THAT(message, HasSubstr("no status"));
  x.set_status(static_cast<v1::MeasurementStatus>(12));
  EXPECT_EQ(CodeOf([&] { store_->InsertMeasurement(x); }, &message), Error::Code::kInvalidArgument);
  EXPECT_THAT(message, HasSubstr("12"));
  x.set_status(v1::MEASUREMENT_STATUS_OK);
  x.set_l2(static_cast<v1::L2Mode>(5));
  EXPECT_EQ(CodeOf([&] { store_->InsertMeasurement(x); }, &message), Error::Code::kInvalidArgument);
  EXPECT_THAT(message, HasSubstr("ablation.v1.Measurement.l2"));
  EXPECT_EQ(store_->MeasurementsOfRun(run, false).size(), 1u);  // nothing half-written
  RawDb raw(path_);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM measurement_samples"), 1);
}

TEST_F(StoreTest, SamplesAreLittleEndianDoublesAndRoundTripExactly) {
  const int64_t run = store_->CreateRun(MakeRun());
  v1::Measurement x = FullMeasurement(run);
  x.clear_sample_ms();
  for (double v : {1.5, -0.0, std::numeric_limits<double>::denorm_min(),
                   std::numeric_limits<double>::max(), std::numeric_limits<double>::infinity(),
                   std::numeric_limits<double>::quiet_NaN(), 0.1 + 0.2}) {
    x.add_sample_ms(v);
  }
  const int64_t id = store_->InsertMeasurement(x);

  const auto read = store_->MeasurementsOfRun(run, true);
  ASSERT_EQ(read.size(), 1u);
  ASSERT_EQ(read[0].sample_ms_size(), x.sample_ms_size());
  for (int i = 0; i < x.sample_ms_size(); ++i) {
    EXPECT_EQ(std::bit_cast<uint64_t>(read[0].sample_ms(i)),
              std::bit_cast<uint64_t>(x.sample_ms(i)))
        << "sample " << i;
  }

  // What a dashboard reading the blob sees: 1.5 is 0x3FF8000000000000, low byte first.
  RawDb raw(path_);
  const std::string blob = raw.Blob(
      "SELECT sample_ms FROM measurement_samples WHERE "
      "measurement_id = " +
      std::to_string(id));
  ASSERT_EQ(blob.size(), 7 * sizeof(double));
  EXPECT_EQ(blob.substr(0, 8), std::string("\x00\x00\x00\x00\x00\x00\xF8\x3F", 8));
  EXPECT_EQ(raw.Int("SELECT sample_count FROM measurement_samples"), 7);
}

TEST_F(StoreTest, MeasurementWithoutSamplesOrTelemetryStoresNulls) {
  const int64_t run = store_->CreateRun(MakeRun());
  v1::Measurement x = FullMeasurement(run);
  x.set_status(v1::MEASUREMENT_STATUS_FAILED);
  x.set_error("worker died: illegal memory access");
  x.clear_sample_ms();
  x.clear_telemetry();
  x.mutable_telemetry()->set_unavailable_reason("NVML not available: libnvidia-ml.so.1 not found");
  x.clear_bytes_per_second();
  x.clear_fragment_loads_per_second();
  store_->InsertMeasurement(x);

  RawDb raw(path_);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM measurement_samples"), 0);
  EXPECT_EQ(raw.Text("SELECT coalesce(power_w_mean, 'null') FROM measurements"), "null");
  EXPECT_EQ(raw.Text("SELECT coalesce(throttled_samples, 'null') FROM measurements"), "null");
  EXPECT_EQ(raw.Text("SELECT coalesce(bytes_per_second, 'null') FROM measurements"), "null");
  EXPECT_EQ(raw.Text("SELECT status FROM measurements"), "failed");
  const auto read = store_->MeasurementsOfRun(run, true);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_TRUE(read[0].sample_ms().empty());
  EXPECT_FALSE(read[0].telemetry().available());
  EXPECT_FALSE(read[0].telemetry().has_power_w_mean());  // unset, not 0
  EXPECT_FALSE(read[0].telemetry().has_throttled_samples());
  EXPECT_EQ(read[0].telemetry().power_w_mean(), 0);
  EXPECT_EQ(read[0].telemetry().unavailable_reason(), x.telemetry().unavailable_reason());
  EXPECT_EQ(read[0].error(), x.error());
  EXPECT_FALSE(read[0].has_bytes_per_second());
  EXPECT_TRUE(SameMeasurement(read[0], x));
}

TEST_F(StoreTest, OptionalZeroIsStoredAsZeroNotNull) {
  const int64_t run = store_->CreateRun(MakeRun());
  v1::Measurement x = FullMeasurement(run);
  x.mutable_telemetry()->set_throttled_samples(0);
  x.set_bytes_per_second(0);
  store_->InsertMeasurement(x);
  RawDb raw(path_);
  EXPECT_EQ(raw.Text("SELECT coalesce(throttled_samples, 'null') FROM measurements"), "0");
  EXPECT_EQ(raw.Text("SELECT coalesce(bytes_per_second, 'null') FROM measurements"), "0.0");
  const auto read = store_->MeasurementsOfRun(run, false);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_TRUE(read[0].telemetry().has_throttled_samples());
  EXPECT_TRUE(read[0].has_bytes_per_second());
  EXPECT_TRUE(SameMeasurement(read[0], x));
}

TEST_F(StoreTest, EachMeasurementIsCommittedBeforeInsertReturns) {
  const int64_t run = store_->CreateRun(MakeRun());
  RawDb other(path_);  // another connection, as a crash-surviving reader would be
  for (int i = 1; i <= 3; ++i) {
    store_->InsertMeasurement(FullMeasurement(run));
    EXPECT_EQ(other.Int("SELECT count(*) FROM measurements"), i);
    EXPECT_EQ(other.Int("SELECT count(*) FROM measurement_samples"), i);
  }
}

TEST_F(StoreTest, StoredTextThatNamesNoEnumValueIsRefusedOnRead) {
  const int64_t run = store_->CreateRun(MakeRun());
  store_->InsertMeasurement(FullMeasurement(run));
  {
    RawDb raw(path_);  // l2 has no CHECK: only the store stands between it and a wrong enum
    raw.Exec("UPDATE measurements SET l2 = 'lukewarm'");
  }
  std::string message;
  EXPECT_EQ(CodeOf([&] { store_->MeasurementsOfRun(run, false); }, &message),
            Error::Code::kStorage);
  EXPECT_THAT(message, HasSubstr(path_));
  EXPECT_THAT(message, HasSubstr("column l2 holds 'lukewarm'"));
  EXPECT_THAT(message, HasSubstr("ablation.v1.L2Mode"));
  EXPECT_THAT(message, HasSubstr("'', 'cold', 'hot'"));
  EXPECT_EQ(CodeOf([&] { store_->QueryMeasurements({}); }), Error::Code::kStorage);
  {
    RawDb raw(path_);
    raw.Exec("UPDATE measurements SET l2 = 'hot', verification_outcome = 'PASSED'");
  }
  // Exactly the stored text: upper case is not the same value.
  EXPECT_EQ(CodeOf([&] { store_->MeasurementsOfRun(run, false); }, &message),
            Error::Code::kStorage);
  EXPECT_THAT(message, HasSubstr("column verification_outcome holds 'PASSED'"));
  {
    RawDb raw(path_);
    raw.Exec("UPDATE measurements SET verification_outcome = 'not_checked'");
  }
  const auto read = store_->MeasurementsOfRun(run, false);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].l2(), v1::L2_MODE_HOT);
  EXPECT_EQ(read[0].verification_outcome(), v1::VERIFICATION_OUTCOME_NOT_CHECKED);
}

// ---------------------------------------------------------------- verifications

TEST_F(StoreTest, VerificationsRoundTrip) {
  v1::Run run = MakeRun();
  run.set_kind(v1::RUN_KIND_VERIFY);
  const int64_t id = store_->CreateRun(run);
  v1::VerifyResult v;
  v.set_run_id(id);
  v.set_variant("abl_L1_R1_bl0_s3_sw1");
  v.set_dtype("fp16");
  v.mutable_shape()->set_m(512);
  v.mutable_shape()->set_n(256);
  v.mutable_shape()->set_k(128);
  v.set_reference(v1::REFERENCE_CPU);
  v.set_max_abs_error(1.5e-3);
  v.set_max_rel_error(2.5e-3);
  v.set_rel_frobenius_error(3.5e-4);
  v.set_mismatches(7);
  v.set_nan_count(2);
  v.set_unwritten_count(1);
  v.set_tolerance(1e-2);
  v.set_passed(false);
  v.set_error("7 elements outside tolerance");
  v.set_created_at_ms(kBaseMs + 5);
  const int64_t vid = store_->InsertVerification(v);
  v1::VerifyResult second = v;
  second.set_passed(true);
  second.set_reference(v1::REFERENCE_CUBLAS);
  store_->InsertVerification(second);
  v1::VerifyResult third = v;
  third.set_reference(v1::REFERENCE_VARIANT);
  third.set_reference_variant("abl_L0_R0_bl0_s1_sw1");
  third.set_created_at_ms(0);  // now
  store_->InsertVerification(third);

  const auto read = store_->VerificationsOfRun(id);
  ASSERT_EQ(read.size(), 3u);
  const v1::VerifyResult& r = read[0];
  EXPECT_EQ(r.id(), vid);
  EXPECT_EQ(r.run_id(), id);
  EXPECT_EQ(r.variant(), v.variant());
  EXPECT_EQ(r.dtype(), v.dtype());
  EXPECT_EQ(r.shape().m(), 512);
  EXPECT_EQ(r.shape().n(), 256);
  EXPECT_EQ(r.shape().k(), 128);
  EXPECT_EQ(r.reference(), v1::REFERENCE_CPU);
  EXPECT_EQ(r.reference_variant(), "");
  EXPECT_EQ(r.max_abs_error(), v.max_abs_error());
  EXPECT_EQ(r.max_rel_error(), v.max_rel_error());
  EXPECT_EQ(r.rel_frobenius_error(), v.rel_frobenius_error());
  EXPECT_EQ(r.mismatches(), 7);
  EXPECT_EQ(r.nan_count(), 2);
  EXPECT_EQ(r.unwritten_count(), 1);
  EXPECT_EQ(r.tolerance(), v.tolerance());
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.error(), v.error());
  EXPECT_EQ(r.created_at_ms(), kBaseMs + 5);
  EXPECT_TRUE(testing::SameMessage(r, v, {"id"}));
  EXPECT_TRUE(read[1].passed());
  EXPECT_EQ(read[1].reference(), v1::REFERENCE_CUBLAS);
  EXPECT_EQ(read[2].reference(), v1::REFERENCE_VARIANT);
  EXPECT_EQ(read[2].reference_variant(), "abl_L0_R0_bl0_s1_sw1");
  EXPECT_GT(read[2].created_at_ms(), kBaseMs);
  EXPECT_TRUE(store_->VerificationsOfRun(id + 1).empty());

  // On disk: the renamed error columns, the typed reference, and `against` in words for the
  // dashboards that read it.
  RawDb raw(path_);
  EXPECT_EQ(raw.Text("SELECT max_abs FROM verifications WHERE id = 1"), "0.0015");
  EXPECT_EQ(raw.Text("SELECT rel_frobenius FROM verifications WHERE id = 1"), "0.00035");
  EXPECT_EQ(raw.Text("SELECT group_concat(reference, ' ') FROM verifications"),
            "cpu cublas variant");
  EXPECT_EQ(raw.Text("SELECT group_concat(against, ' ') FROM verifications"),
            "cpu cublas abl_L0_R0_bl0_s1_sw1");
  EXPECT_EQ(raw.Text("SELECT reference_variant FROM verifications WHERE id = 3"),
            "abl_L0_R0_bl0_s1_sw1");
}

TEST_F(StoreTest, VerificationWithoutReferenceStoresEmptyText) {
  const int64_t id = store_->CreateRun(MakeRun());
  v1::VerifyResult v;
  v.set_run_id(id);
  v.set_variant("simt_naive");
  store_->InsertVerification(v);
  RawDb raw(path_);
  EXPECT_EQ(raw.Text("SELECT reference || '|' || against FROM verifications"), "|");
  EXPECT_EQ(store_->VerificationsOfRun(id)[0].reference(), v1::REFERENCE_UNSPECIFIED);
}

}  // namespace
}  // namespace ablation::db
