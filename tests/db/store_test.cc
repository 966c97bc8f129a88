#include "db/store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "db/error.h"
#include "tests/db/db_test_support.h"

namespace ablation::db {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::RawDb;

constexpr int64_t kBaseMs = 1'700'000'000'000;

DeviceIdentity H200() {
  DeviceIdentity d;
  d.index = 1;
  d.name = "NVIDIA H200";
  d.uuid = "GPU-0f1e2d3c";
  d.compute_capability = "9.0";
  d.sm_count = 132;
  d.driver_version = "560.35.03";
  d.cuda_runtime_version = "12.6";
  d.cublas_version = "12.6.4.1";
  d.memory_bytes = 150'117'613'568;
  d.l2_bytes = 52'428'800;
  d.smem_per_block_optin = 232'448;
  d.smem_per_sm = 233'472;
  return d;
}

RunRecord MakeRun(std::vector<std::string> tags = {}) {
  RunRecord run;
  run.daemon_version = "0.1.0";
  run.git_revision = "0123456789ab";
  run.request_json = R"({"variants":["abl_*"],"dtype":"bf16"})";
  run.requested_by = "alice@node7";
  run.tags = std::move(tags);
  run.created_at_ms = kBaseMs;
  run.planned = 12;
  run.clock_policy = "observe";
  return run;
}

// Every field set to something distinct, so a swapped column shows.
MeasurementRecord FullMeasurement(int64_t run_id) {
  MeasurementRecord x;
  x.run_id = run_id;
  x.sequence = 4;
  x.variant = "abl_L1_R1_bl0_s3_sw1";
  x.dtype = "bf16";
  x.m = 4096;
  x.n = 2048;
  x.k = 1024;
  x.status = "ok";
  x.error = "";
  x.stats = {.median_ms = 1.01,
             .mean_ms = 1.02,
             .stddev_ms = 0.03,
             .min_ms = 0.94,
             .max_ms = 1.25,
             .q1_ms = 0.99,
             .q3_ms = 1.04,
             .samples = 5,
             .noise = 0.0042,
             .total_seconds = 0.61};
  x.tflops = 170.5;
  x.l2 = "cold";
  x.clock_policy = "lock sm=1980 mem=max";
  x.verification = "passed";
  x.telemetry.available = true;
  x.telemetry.note = "nvml 12.560";
  x.telemetry.sm_clock_mhz_mean = 1975.5;
  x.telemetry.sm_clock_mhz_min = 1965;
  x.telemetry.sm_clock_mhz_max = 1980;
  x.telemetry.mem_clock_mhz_mean = 2619;
  x.telemetry.mem_clock_mhz_min = 2618;
  x.telemetry.mem_clock_mhz_max = 2620;
  x.telemetry.power_w_mean = 512.25;
  x.telemetry.power_w_min = 480;
  x.telemetry.power_w_max = 600.5;
  x.telemetry.temperature_c_mean = 61.5;
  x.telemetry.temperature_c_min = 58;
  x.telemetry.temperature_c_max = 64;
  x.telemetry.throttle_reasons = {"sw_power_cap", "hw_slowdown"};
  x.telemetry.throttled_samples = 3;
  x.occupancy = {.registers_per_thread = 168,
                 .static_smem_bytes = 1024,
                 .dynamic_smem_bytes = 98304,
                 .local_bytes_per_thread = 16,
                 .max_blocks_per_sm = 2,
                 .max_warps_per_sm = 16,
                 .theoretical_occupancy = 0.25,
                 .limiter = "registers",
                 .threads_per_block = 256};
  x.sample_ms = {1.01, 0.94, 1.25, 0.99, 1.04};
  x.created_at_ms = kBaseMs + 1234;
  return x;
}

void ExpectSameMeasurement(const MeasurementRecord& a, const MeasurementRecord& b) {
  EXPECT_EQ(a.run_id, b.run_id);
  EXPECT_EQ(a.sequence, b.sequence);
  EXPECT_EQ(a.variant, b.variant);
  EXPECT_EQ(a.dtype, b.dtype);
  EXPECT_EQ(a.m, b.m);
  EXPECT_EQ(a.n, b.n);
  EXPECT_EQ(a.k, b.k);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.stats.median_ms, b.stats.median_ms);
  EXPECT_EQ(a.stats.mean_ms, b.stats.mean_ms);
  EXPECT_EQ(a.stats.stddev_ms, b.stats.stddev_ms);
  EXPECT_EQ(a.stats.min_ms, b.stats.min_ms);
  EXPECT_EQ(a.stats.max_ms, b.stats.max_ms);
  EXPECT_EQ(a.stats.q1_ms, b.stats.q1_ms);
  EXPECT_EQ(a.stats.q3_ms, b.stats.q3_ms);
  EXPECT_EQ(a.stats.samples, b.stats.samples);
  EXPECT_EQ(a.stats.noise, b.stats.noise);
  EXPECT_EQ(a.stats.total_seconds, b.stats.total_seconds);
  EXPECT_EQ(a.tflops, b.tflops);
  EXPECT_EQ(a.l2, b.l2);
  EXPECT_EQ(a.clock_policy, b.clock_policy);
  EXPECT_EQ(a.verification, b.verification);
  const Telemetry& t = a.telemetry;
  const Telemetry& u = b.telemetry;
  EXPECT_EQ(t.available, u.available);
  EXPECT_EQ(t.note, u.note);
  EXPECT_EQ(t.sm_clock_mhz_mean, u.sm_clock_mhz_mean);
  EXPECT_EQ(t.sm_clock_mhz_min, u.sm_clock_mhz_min);
  EXPECT_EQ(t.sm_clock_mhz_max, u.sm_clock_mhz_max);
  EXPECT_EQ(t.mem_clock_mhz_mean, u.mem_clock_mhz_mean);
  EXPECT_EQ(t.mem_clock_mhz_min, u.mem_clock_mhz_min);
  EXPECT_EQ(t.mem_clock_mhz_max, u.mem_clock_mhz_max);
  EXPECT_EQ(t.power_w_mean, u.power_w_mean);
  EXPECT_EQ(t.power_w_min, u.power_w_min);
  EXPECT_EQ(t.power_w_max, u.power_w_max);
  EXPECT_EQ(t.temperature_c_mean, u.temperature_c_mean);
  EXPECT_EQ(t.temperature_c_min, u.temperature_c_min);
  EXPECT_EQ(t.temperature_c_max, u.temperature_c_max);
  EXPECT_EQ(t.throttle_reasons, u.throttle_reasons);
  EXPECT_EQ(t.throttled_samples, u.throttled_samples);
  const Occupancy& o = a.occupancy;
  const Occupancy& p = b.occupancy;
  EXPECT_EQ(o.registers_per_thread, p.registers_per_thread);
  EXPECT_EQ(o.static_smem_bytes, p.static_smem_bytes);
  EXPECT_EQ(o.dynamic_smem_bytes, p.dynamic_smem_bytes);
  EXPECT_EQ(o.local_bytes_per_thread, p.local_bytes_per_thread);
  EXPECT_EQ(o.max_blocks_per_sm, p.max_blocks_per_sm);
  EXPECT_EQ(o.max_warps_per_sm, p.max_warps_per_sm);
  EXPECT_EQ(o.theoretical_occupancy, p.theoretical_occupancy);
  EXPECT_EQ(o.limiter, p.limiter);
  EXPECT_EQ(o.threads_per_block, p.threads_per_block);
  EXPECT_EQ(a.created_at_ms, b.created_at_ms);
}

template <typename Fn>
Error::Code CodeOf(Fn&& fn, std::string* message = nullptr) {
  try {
    fn();
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.code();
  }
  ADD_FAILURE() << "no db::Error thrown";
  return Error::Code::kStorage;
}

class StoreTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    path_ = PathOf("ablation.db");
    store_ = Store::Open(path_);
  }
  void TearDown() override {
    store_.reset();
    TempDirTest::TearDown();
  }

  std::string path_;
  std::unique_ptr<Store> store_;
};

// ---------------------------------------------------------------- runs

TEST_F(StoreTest, RunRoundTripsWithTagsAndDeviceThroughItsLifecycle) {
  RunRecord run = MakeRun({"nightly", "h200", "nightly"});
  run.kind = "verify";
  const int64_t id = store_->CreateRun(run);
  EXPECT_GT(id, 0);

  auto read = store_->GetRun(id);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->id, id);
  EXPECT_EQ(read->kind, "verify");
  EXPECT_EQ(read->state, "queued");
  EXPECT_EQ(read->daemon_version, "0.1.0");
  EXPECT_EQ(read->git_revision, "0123456789ab");
  EXPECT_EQ(read->request_json, run.request_json);
  EXPECT_EQ(read->requested_by, "alice@node7");
  EXPECT_THAT(read->tags, ElementsAre("nightly", "h200"));  // given order, duplicate once
  EXPECT_EQ(read->created_at_ms, kBaseMs);
  EXPECT_EQ(read->started_at_ms, 0);
  EXPECT_EQ(read->finished_at_ms, 0);
  EXPECT_EQ(read->planned, 12);
  EXPECT_EQ(read->clock_policy, "observe");
  EXPECT_EQ(read->device.name, "");
  {
    RawDb raw(path_);
    EXPECT_EQ(raw.Text("SELECT coalesce(started_at_ms, 'null') FROM runs"), "null");
  }

  store_->MarkRunStarted(id, H200(), kBaseMs + 10);
  read = store_->GetRun(id);
  EXPECT_EQ(read->state, "running");
  EXPECT_EQ(read->started_at_ms, kBaseMs + 10);
  const DeviceIdentity d = H200();
  EXPECT_EQ(read->device.index, d.index);
  EXPECT_EQ(read->device.name, d.name);
  EXPECT_EQ(read->device.uuid, d.uuid);
  EXPECT_EQ(read->device.compute_capability, d.compute_capability);
  EXPECT_EQ(read->device.sm_count, d.sm_count);
  EXPECT_EQ(read->device.driver_version, d.driver_version);
  EXPECT_EQ(read->device.cuda_runtime_version, d.cuda_runtime_version);
  EXPECT_EQ(read->device.cublas_version, d.cublas_version);
  EXPECT_EQ(read->device.memory_bytes, d.memory_bytes);
  EXPECT_EQ(read->device.l2_bytes, d.l2_bytes);
  EXPECT_EQ(read->device.smem_per_block_optin, d.smem_per_block_optin);
  EXPECT_EQ(read->device.smem_per_sm, d.smem_per_sm);

  store_->UpdateRunState(id, "running");
  store_->FinishRun(id, "partial", "2 of 12 failed", kBaseMs + 99);
  read = store_->GetRun(id);
  EXPECT_EQ(read->state, "partial");
  EXPECT_EQ(read->error, "2 of 12 failed");
  EXPECT_EQ(read->finished_at_ms, kBaseMs + 99);
}

TEST_F(StoreTest, CreatedAtDefaultsToNow) {
  RunRecord run;
  run.created_at_ms = 0;
  const auto before = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const int64_t id = store_->CreateRun(run);
  EXPECT_GE(store_->GetRun(id)->created_at_ms, before);
}

TEST_F(StoreTest, UnknownRunsAndStatesAreRefusedClearly) {
  const int64_t id = store_->CreateRun(MakeRun());
  std::string message;
  EXPECT_EQ(CodeOf([&] { store_->FinishRun(999, "succeeded", "", 1); }, &message),
            Error::Code::kNotFound);
  EXPECT_THAT(message, HasSubstr("run 999"));
  EXPECT_EQ(CodeOf([&] { store_->MarkRunStarted(999, H200(), 1); }), Error::Code::kNotFound);
  EXPECT_EQ(CodeOf([&] { store_->UpdateRunState(999, "running"); }), Error::Code::kNotFound);
  EXPECT_EQ(CodeOf([&] { store_->FinishRun(id, "running", "", 1); }, &message),
            Error::Code::kInvalidArgument);
  EXPECT_THAT(message, HasSubstr("'running'"));
  EXPECT_EQ(CodeOf([&] { store_->UpdateRunState(id, "exploded"); }), Error::Code::kInvalidArgument);
  RunRecord bad = MakeRun();
  bad.kind = "sweep";
  EXPECT_EQ(CodeOf([&] { store_->CreateRun(bad); }), Error::Code::kInvalidArgument);

  MeasurementRecord orphan = FullMeasurement(12345);
  EXPECT_EQ(CodeOf([&] { store_->InsertMeasurement(orphan); }, &message), Error::Code::kNotFound);
  EXPECT_THAT(message, HasSubstr("run 12345"));
  VerificationRecord lost;
  lost.run_id = 12345;
  EXPECT_EQ(CodeOf([&] { store_->InsertVerification(lost); }), Error::Code::kNotFound);

  EXPECT_FALSE(store_->GetRun(999).has_value());
  EXPECT_EQ(store_->GetRun(id)->state, "queued");  // nothing half-applied
}

TEST_F(StoreTest, LatestRunIsTheNewest) {
  EXPECT_FALSE(store_->LatestRun().has_value());
  store_->CreateRun(MakeRun());
  const int64_t second = store_->CreateRun(MakeRun({"x"}));
  auto latest = store_->LatestRun();
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->id, second);
  EXPECT_THAT(latest->tags, ElementsAre("x"));
}

TEST_F(StoreTest, RunCountsOkAndFailedByKind) {
  const int64_t ablation = store_->CreateRun(MakeRun());
  for (const char* status : {"ok", "ok", "failed", "skipped"}) {
    MeasurementRecord x = FullMeasurement(ablation);
    x.status = status;
    store_->InsertMeasurement(x);
  }
  RunRecord verify_run = MakeRun();
  verify_run.kind = "verify";
  const int64_t verify = store_->CreateRun(verify_run);
  for (bool passed : {true, false, false}) {
    VerificationRecord v;
    v.run_id = verify;
    v.variant = "abl_L0_R0_bl0_s1_sw1";
    v.passed = passed;
    store_->InsertVerification(v);
  }
  EXPECT_EQ(store_->GetRun(ablation)->ok, 2);
  EXPECT_EQ(store_->GetRun(ablation)->failed, 1);  // skipped is neither
  EXPECT_EQ(store_->GetRun(verify)->ok, 1);
  EXPECT_EQ(store_->GetRun(verify)->failed, 2);
}

// ---------------------------------------------------------------- measurements

TEST_F(StoreTest, MeasurementRoundTripsEveryField) {
  const int64_t run = store_->CreateRun(MakeRun());
  const MeasurementRecord written = FullMeasurement(run);
  const int64_t id = store_->InsertMeasurement(written);

  const auto with = store_->MeasurementsOfRun(run, /*include_samples=*/true);
  ASSERT_EQ(with.size(), 1u);
  EXPECT_EQ(with[0].id, id);
  ExpectSameMeasurement(with[0], written);
  EXPECT_EQ(with[0].sample_ms, written.sample_ms);

  const auto without = store_->MeasurementsOfRun(run, /*include_samples=*/false);
  ASSERT_EQ(without.size(), 1u);
  ExpectSameMeasurement(without[0], written);
  EXPECT_TRUE(without[0].sample_ms.empty());

  MeasurementFilter filter;
  filter.include_samples = true;
  const auto page = store_->QueryMeasurements(filter);
  ASSERT_EQ(page.measurements.size(), 1u);
  ExpectSameMeasurement(page.measurements[0], written);
  EXPECT_EQ(page.measurements[0].sample_ms, written.sample_ms);
  EXPECT_TRUE(page.next_page_token.empty());

  RawDb raw(path_);
  EXPECT_EQ(raw.Text("SELECT throttle_reasons FROM measurements"), "sw_power_cap,hw_slowdown");
}

TEST_F(StoreTest, SamplesAreLittleEndianDoublesAndRoundTripExactly) {
  const int64_t run = store_->CreateRun(MakeRun());
  MeasurementRecord x = FullMeasurement(run);
  x.sample_ms = {1.5,
                 -0.0,
                 std::numeric_limits<double>::denorm_min(),
                 std::numeric_limits<double>::max(),
                 std::numeric_limits<double>::infinity(),
                 std::numeric_limits<double>::quiet_NaN(),
                 0.1 + 0.2};
  const int64_t id = store_->InsertMeasurement(x);

  const auto read = store_->MeasurementsOfRun(run, true);
  ASSERT_EQ(read.size(), 1u);
  ASSERT_EQ(read[0].sample_ms.size(), x.sample_ms.size());
  for (size_t i = 0; i < x.sample_ms.size(); ++i) {
    EXPECT_EQ(std::bit_cast<uint64_t>(read[0].sample_ms[i]),
              std::bit_cast<uint64_t>(x.sample_ms[i]))
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
  MeasurementRecord x = FullMeasurement(run);
  x.status = "failed";
  x.error = "worker died: illegal memory access";
  x.sample_ms.clear();
  x.telemetry = {};
  x.telemetry.note = "NVML not available: libnvidia-ml.so.1 not found";
  store_->InsertMeasurement(x);

  RawDb raw(path_);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM measurement_samples"), 0);
  EXPECT_EQ(raw.Text("SELECT coalesce(power_w_mean, 'null') FROM measurements"), "null");
  EXPECT_EQ(raw.Text("SELECT coalesce(throttled_samples, 'null') FROM measurements"), "null");
  const auto read = store_->MeasurementsOfRun(run, true);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_TRUE(read[0].sample_ms.empty());
  EXPECT_FALSE(read[0].telemetry.available);
  EXPECT_EQ(read[0].telemetry.power_w_mean, 0);
  EXPECT_EQ(read[0].telemetry.note, x.telemetry.note);
  EXPECT_EQ(read[0].error, x.error);
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

TEST_F(StoreTest, VerificationsRoundTrip) {
  RunRecord run = MakeRun();
  run.kind = "verify";
  const int64_t id = store_->CreateRun(run);
  VerificationRecord v;
  v.run_id = id;
  v.variant = "abl_L1_R1_bl0_s3_sw1";
  v.dtype = "fp16";
  v.m = 512;
  v.n = 256;
  v.k = 128;
  v.against = "cpu";
  v.max_abs = 1.5e-3;
  v.max_rel = 2.5e-3;
  v.rel_frobenius = 3.5e-4;
  v.mismatches = 7;
  v.nan_count = 2;
  v.unwritten_count = 1;
  v.tolerance = 1e-2;
  v.passed = false;
  v.error = "7 elements outside tolerance";
  v.created_at_ms = kBaseMs + 5;
  const int64_t vid = store_->InsertVerification(v);
  VerificationRecord second = v;
  second.passed = true;
  second.against = "cublas";
  store_->InsertVerification(second);

  const auto read = store_->VerificationsOfRun(id);
  ASSERT_EQ(read.size(), 2u);
  const VerificationRecord& r = read[0];
  EXPECT_EQ(r.id, vid);
  EXPECT_EQ(r.run_id, id);
  EXPECT_EQ(r.variant, v.variant);
  EXPECT_EQ(r.dtype, v.dtype);
  EXPECT_EQ(r.m, 512);
  EXPECT_EQ(r.n, 256);
  EXPECT_EQ(r.k, 128);
  EXPECT_EQ(r.against, "cpu");
  EXPECT_EQ(r.max_abs, v.max_abs);
  EXPECT_EQ(r.max_rel, v.max_rel);
  EXPECT_EQ(r.rel_frobenius, v.rel_frobenius);
  EXPECT_EQ(r.mismatches, 7);
  EXPECT_EQ(r.nan_count, 2);
  EXPECT_EQ(r.unwritten_count, 1);
  EXPECT_EQ(r.tolerance, v.tolerance);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.error, v.error);
  EXPECT_EQ(r.created_at_ms, kBaseMs + 5);
  EXPECT_TRUE(read[1].passed);
  EXPECT_EQ(read[1].against, "cublas");
  EXPECT_TRUE(store_->VerificationsOfRun(id + 1).empty());
}

// ---------------------------------------------------------------- queries

// A data set across three runs, variants, dtypes, shapes, statuses and times; each filter test
// compares the store's answer with the same predicate applied here.
class QueryTest : public StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    nightly_ = store_->CreateRun(MakeRun({"nightly", "h200"}));
    adhoc_ = store_->CreateRun(MakeRun({"adhoc"}));
    untagged_ = store_->CreateRun(MakeRun());
    const std::vector<std::string> variants = {"abl_L0_R0_bl0_s1_sw1", "abl_L1_R1_bl0_s3_sw1",
                                               "abl_L1_R1_bl1_s3_sw0", "pipe_cp_async",
                                               "cublas_default"};
    const std::vector<std::string> dtypes = {"bf16", "fp16"};
    const std::vector<std::array<int64_t, 3>> shapes = {
        {1024, 1024, 1024}, {4096, 4096, 4096}, {4096, 2048, 1024}};
    const int64_t runs[] = {nightly_, adhoc_, untagged_};
    int i = 0;
    for (const auto& shape : shapes) {
      for (const auto& dtype : dtypes) {
        for (const auto& variant : variants) {
          MeasurementRecord x = FullMeasurement(runs[i % 3]);
          x.sequence = i;
          x.variant = variant;
          x.dtype = dtype;
          x.m = shape[0];
          x.n = shape[1];
          x.k = shape[2];
          x.status = i % 7 == 3 ? "failed" : i % 11 == 5 ? "skipped" : "ok";
          x.created_at_ms = kBaseMs + 1000 * i;
          x.sample_ms = {1.0 + i, 2.0 + i};
          x.id = store_->InsertMeasurement(x);
          all_.push_back(x);
          ++i;
        }
      }
    }
    ASSERT_EQ(all_.size(), 30u);
  }

  // Every page of the query, asserting no id repeats and ids ascend across pages.
  std::vector<int64_t> QueryAll(MeasurementFilter filter, int32_t page_size = 4) {
    filter.page_size = page_size;
    std::vector<int64_t> ids;
    for (int pages = 0; pages < 100; ++pages) {
      const MeasurementPage page = store_->QueryMeasurements(filter);
      EXPECT_LE(static_cast<int32_t>(page.measurements.size()), page_size);
      for (const auto& x : page.measurements) {
        EXPECT_TRUE(ids.empty() || x.id > ids.back()) << "ids out of order or repeated";
        ids.push_back(x.id);
      }
      if (page.next_page_token.empty()) return ids;
      EXPECT_EQ(static_cast<int32_t>(page.measurements.size()), page_size)
          << "a short page that still has a next token";
      filter.page_token = page.next_page_token;
    }
    ADD_FAILURE() << "pagination did not end";
    return ids;
  }

  std::vector<int64_t> Expected(const std::function<bool(const MeasurementRecord&)>& keep) {
    std::vector<int64_t> ids;
    for (const auto& x : all_) {
      if (keep(x)) ids.push_back(x.id);
    }
    return ids;
  }

  int64_t nightly_ = 0, adhoc_ = 0, untagged_ = 0;
  std::vector<MeasurementRecord> all_;
};

TEST_F(QueryTest, NoFilterReturnsEverythingInIdOrder) {
  EXPECT_EQ(QueryAll({}), Expected([](auto&) { return true; }));
}

TEST_F(QueryTest, VariantGlob) {
  MeasurementFilter f;
  f.variant_glob = "abl_*_s3_*";
  const auto expected = Expected([](const MeasurementRecord& x) {
    return x.variant.starts_with("abl_") && x.variant.find("_s3_") != std::string::npos;
  });
  EXPECT_EQ(expected.size(), 12u);
  EXPECT_EQ(QueryAll(f), expected);
  f.variant_glob = "pipe_cp_async";
  EXPECT_EQ(QueryAll(f), Expected([](auto& x) { return x.variant == "pipe_cp_async"; }));
  f.variant_glob = "ABL_*";  // GLOB is case-sensitive, as variant names are
  EXPECT_TRUE(QueryAll(f).empty());
  f.variant_glob = "abl_L[01]_R1_*";
  EXPECT_EQ(QueryAll(f), Expected([](auto& x) { return x.variant.starts_with("abl_L1_R1_"); }));
}

TEST_F(QueryTest, DtypeAndEachShapeDimension) {
  MeasurementFilter f;
  f.dtype = "fp16";
  EXPECT_EQ(QueryAll(f), Expected([](auto& x) { return x.dtype == "fp16"; }));
  f = {};
  f.m = 4096;
  EXPECT_EQ(QueryAll(f), Expected([](auto& x) { return x.m == 4096; }));
  f = {};
  f.n = 2048;
  EXPECT_EQ(QueryAll(f), Expected([](auto& x) { return x.n == 2048; }));
  f = {};
  f.k = 1024;
  EXPECT_EQ(QueryAll(f), Expected([](auto& x) { return x.k == 1024; }));
  f = {};
  f.m = 4096;
  f.n = 4096;
  f.k = 4096;
  f.dtype = "bf16";
  EXPECT_EQ(QueryAll(f), Expected([](auto& x) {
              return x.m == 4096 && x.n == 4096 && x.k == 4096 && x.dtype == "bf16";
            }));
}

TEST_F(QueryTest, RunIdStatusAndTag) {
  MeasurementFilter f;
  f.run_id = adhoc_;
  EXPECT_EQ(QueryAll(f), Expected([&](auto& x) { return x.run_id == adhoc_; }));
  f = {};
  f.status = "failed";
  const auto failed = Expected([](auto& x) { return x.status == "failed"; });
  EXPECT_FALSE(failed.empty());
  EXPECT_EQ(QueryAll(f), failed);
  f.status = "skipped";
  EXPECT_EQ(QueryAll(f), Expected([](auto& x) { return x.status == "skipped"; }));
  f = {};
  f.tag = "h200";
  EXPECT_EQ(QueryAll(f), Expected([&](auto& x) { return x.run_id == nightly_; }));
  f.tag = "adhoc";
  EXPECT_EQ(QueryAll(f), Expected([&](auto& x) { return x.run_id == adhoc_; }));
  f.tag = "nobody-uses-this";
  EXPECT_TRUE(QueryAll(f).empty());
  f.tag = "nightly";
  f.variant_glob = "cublas_*";
  EXPECT_EQ(QueryAll(f), Expected([&](auto& x) {
              return x.run_id == nightly_ && x.variant == "cublas_default";
            }));
}

TEST_F(QueryTest, TimeRangeIsSinceInclusiveUntilExclusive) {
  MeasurementFilter f;
  f.since_ms = kBaseMs + 5000;
  f.until_ms = kBaseMs + 12000;
  const auto expected = Expected([](auto& x) {
    return x.created_at_ms >= kBaseMs + 5000 && x.created_at_ms < kBaseMs + 12000;
  });
  ASSERT_EQ(expected.size(), 7u);  // 5..11
  EXPECT_EQ(QueryAll(f), expected);
  EXPECT_EQ(QueryAll(f).front(), all_[5].id);
  EXPECT_EQ(QueryAll(f).back(), all_[11].id);
  f = {};
  f.since_ms = kBaseMs + 29000;
  EXPECT_EQ(QueryAll(f), std::vector<int64_t>{all_[29].id});
  f = {};
  f.until_ms = kBaseMs + 1000;
  EXPECT_EQ(QueryAll(f), std::vector<int64_t>{all_[0].id});
}

TEST_F(QueryTest, IncludeSamplesOnlyWhenAsked) {
  MeasurementFilter f;
  f.run_id = nightly_;
  f.page_size = 1000;
  for (const auto& x : store_->QueryMeasurements(f).measurements) {
    EXPECT_TRUE(x.sample_ms.empty());
  }
  f.include_samples = true;
  const auto page = store_->QueryMeasurements(f);
  ASSERT_FALSE(page.measurements.empty());
  for (const auto& x : page.measurements) {
    EXPECT_EQ(x.sample_ms, (std::vector<double>{1.0 + x.sequence, 2.0 + x.sequence}));
  }
}

TEST_F(QueryTest, ThreePagesWithoutDuplicatesOrGaps) {
  MeasurementFilter f;
  f.page_size = 12;
  const MeasurementPage first = store_->QueryMeasurements(f);
  ASSERT_EQ(first.measurements.size(), 12u);
  ASSERT_FALSE(first.next_page_token.empty());
  f.page_token = first.next_page_token;
  const MeasurementPage second = store_->QueryMeasurements(f);
  ASSERT_EQ(second.measurements.size(), 12u);
  ASSERT_FALSE(second.next_page_token.empty());
  f.page_token = second.next_page_token;
  const MeasurementPage third = store_->QueryMeasurements(f);
  ASSERT_EQ(third.measurements.size(), 6u);
  EXPECT_TRUE(third.next_page_token.empty());

  std::vector<int64_t> ids;
  for (const auto* page : {&first, &second, &third}) {
    for (const auto& x : page->measurements) ids.push_back(x.id);
  }
  EXPECT_EQ(ids, Expected([](auto&) { return true; }));
  EXPECT_EQ(std::set<int64_t>(ids.begin(), ids.end()).size(), ids.size());

  // A page exactly filled by the last rows says there is no more.
  f = {};
  f.page_size = 30;
  EXPECT_TRUE(store_->QueryMeasurements(f).next_page_token.empty());

  // Rows added after a page was served come on the next page, nothing is skipped.
  f = {};
  f.page_size = 29;
  const MeasurementPage head = store_->QueryMeasurements(f);
  MeasurementRecord late = FullMeasurement(nightly_);
  const int64_t late_id = store_->InsertMeasurement(late);
  f.page_token = head.next_page_token;
  const MeasurementPage tail = store_->QueryMeasurements(f);
  ASSERT_EQ(tail.measurements.size(), 2u);
  EXPECT_EQ(tail.measurements[0].id, all_.back().id);
  EXPECT_EQ(tail.measurements[1].id, late_id);
}

TEST_F(QueryTest, PageSizeDefaultsTo100AndIsCappedAt1000) {
  // 1100 more rows in one raw transaction: through the store that would be 1100 fsyncs.
  {
    RawDb raw(path_);
    raw.Exec(
        "WITH RECURSIVE i(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM i WHERE x < 1100) "
        "INSERT INTO measurements (run_id, sequence, variant, dtype, m, n, k, status, "
        "created_at_ms) SELECT " +
        std::to_string(untagged_) + ", 100 + x, 'simt_naive', 'fp32', 64, 64, 64, 'ok', " +
        std::to_string(kBaseMs) + " + x FROM i");
  }
  MeasurementFilter f;
  MeasurementPage page = store_->QueryMeasurements(f);
  EXPECT_EQ(page.measurements.size(), 100u);
  EXPECT_FALSE(page.next_page_token.empty());
  f.page_size = -5;
  EXPECT_EQ(store_->QueryMeasurements(f).measurements.size(), 100u);
  f.page_size = 1'000'000;
  page = store_->QueryMeasurements(f);
  EXPECT_EQ(page.measurements.size(), 1000u);
  f.page_token = page.next_page_token;
  EXPECT_EQ(store_->QueryMeasurements(f).measurements.size(), 130u);
  EXPECT_EQ(QueryAll({}, 1000).size(), 1130u);
}

TEST_F(QueryTest, BadPageTokensAreRefusedNamingTheToken) {
  MeasurementFilter f;
  std::string message;
  f.page_token = "not-a-token!";
  EXPECT_EQ(CodeOf([&] { store_->QueryMeasurements(f); }, &message), Error::Code::kInvalidArgument);
  EXPECT_THAT(message, HasSubstr("'not-a-token!'"));
  f.page_token = "AAAA";
  EXPECT_EQ(CodeOf([&] { store_->QueryMeasurements(f); }), Error::Code::kInvalidArgument);

  // A good token reused with another filter would silently skip rows: refused.
  f = {};
  f.page_size = 5;
  f.dtype = "bf16";
  const std::string token = store_->QueryMeasurements(f).next_page_token;
  ASSERT_FALSE(token.empty());
  f.dtype = "fp16";
  f.page_token = token;
  EXPECT_EQ(CodeOf([&] { store_->QueryMeasurements(f); }, &message), Error::Code::kInvalidArgument);
  EXPECT_THAT(message, HasSubstr("different filter"));

  // A runs token is not a measurements token.
  RunFilter rf;
  rf.page_size = 1;
  const std::string run_token = store_->ListRuns(rf).next_page_token;
  ASSERT_FALSE(run_token.empty());
  f = {};
  f.page_token = run_token;
  EXPECT_EQ(CodeOf([&] { store_->QueryMeasurements(f); }), Error::Code::kInvalidArgument);
  rf.page_token = "garbage";
  EXPECT_EQ(CodeOf([&] { store_->ListRuns(rf); }, &message), Error::Code::kInvalidArgument);
  EXPECT_THAT(message, HasSubstr("'garbage'"));
}

// ---------------------------------------------------------------- ListRuns

TEST_F(StoreTest, ListRunsPagesNewestFirstAndFilters) {
  std::vector<int64_t> ids;
  for (int i = 0; i < 8; ++i) {
    ids.push_back(store_->CreateRun(
        MakeRun(i % 2 == 0 ? std::vector<std::string>{"nightly"} : std::vector<std::string>{})));
  }
  store_->FinishRun(ids[1], "succeeded", "", kBaseMs);
  store_->FinishRun(ids[4], "succeeded", "", kBaseMs);
  store_->FinishRun(ids[6], "failed", "no GPU", kBaseMs);

  RunFilter f;
  f.page_size = 3;
  std::vector<int64_t> seen;
  std::vector<size_t> sizes;
  while (true) {
    const RunPage page = store_->ListRuns(f);
    sizes.push_back(page.runs.size());
    for (const auto& run : page.runs) seen.push_back(run.id);
    if (page.next_page_token.empty()) break;
    f.page_token = page.next_page_token;
  }
  EXPECT_THAT(sizes, ElementsAre(3, 3, 2));
  EXPECT_EQ(seen, std::vector<int64_t>(ids.rbegin(), ids.rend()));

  f = {};
  f.tag = "nightly";
  std::vector<int64_t> tagged;
  for (const auto& run : store_->ListRuns(f).runs) {
    tagged.push_back(run.id);
    EXPECT_THAT(run.tags, ElementsAre("nightly"));
  }
  EXPECT_THAT(tagged, ElementsAre(ids[6], ids[4], ids[2], ids[0]));

  f = {};
  f.state = "succeeded";
  std::vector<int64_t> succeeded;
  for (const auto& run : store_->ListRuns(f).runs) succeeded.push_back(run.id);
  EXPECT_THAT(succeeded, ElementsAre(ids[4], ids[1]));

  f.tag = "nightly";
  ASSERT_EQ(store_->ListRuns(f).runs.size(), 1u);
  EXPECT_EQ(store_->ListRuns(f).runs[0].id, ids[4]);

  f = {};
  f.state = "bogus";
  EXPECT_EQ(CodeOf([&] { store_->ListRuns(f); }), Error::Code::kInvalidArgument);
}

// ---------------------------------------------------------------- recovery

TEST_F(StoreTest, InterruptedRunsAreMarkedFailedNeverDeleted) {
  const int64_t queued = store_->CreateRun(MakeRun());
  const int64_t running = store_->CreateRun(MakeRun());
  const int64_t done = store_->CreateRun(MakeRun());
  const int64_t running_with_error = store_->CreateRun(MakeRun());
  store_->MarkRunStarted(running, H200(), kBaseMs + 1);
  store_->MarkRunStarted(running_with_error, H200(), kBaseMs + 1);
  store_->InsertMeasurement(FullMeasurement(running));
  store_->FinishRun(done, "succeeded", "", kBaseMs + 2);
  // An error recorded before the crash, with the run still running.
  store_->FinishRun(running_with_error, "failed", "worker died", kBaseMs + 3);
  store_->UpdateRunState(running_with_error, "running");

  EXPECT_THAT(store_->RunsInState("queued"), ElementsAre(queued));
  EXPECT_THAT(store_->RunsInState("running"), ElementsAre(running, running_with_error));

  // As at the next daemon start: a new Store on the same file.
  store_.reset();
  store_ = Store::Open(path_);
  const auto marked = store_->MarkInterruptedRuns(kBaseMs + 500, "daemon restarted");
  EXPECT_THAT(marked, ElementsAre(queued, running, running_with_error));
  EXPECT_TRUE(store_->RunsInState("queued").empty());
  EXPECT_TRUE(store_->RunsInState("running").empty());
  EXPECT_THAT(store_->RunsInState("failed"), ElementsAre(queued, running, running_with_error));

  auto r = store_->GetRun(running);
  EXPECT_EQ(r->state, "failed");
  EXPECT_EQ(r->error, "daemon restarted");
  EXPECT_EQ(r->finished_at_ms, kBaseMs + 500);
  EXPECT_EQ(r->started_at_ms, kBaseMs + 1);
  EXPECT_EQ(r->ok, 1);
  EXPECT_EQ(store_->MeasurementsOfRun(running, false).size(), 1u);
  EXPECT_EQ(store_->GetRun(running_with_error)->error, "worker died; daemon restarted");
  EXPECT_EQ(store_->GetRun(done)->state, "succeeded");
  EXPECT_EQ(store_->GetRun(done)->finished_at_ms, kBaseMs + 2);

  EXPECT_TRUE(store_->MarkInterruptedRuns(kBaseMs + 600, "again").empty());
}

// ---------------------------------------------------------------- concurrency

TEST_F(StoreTest, ReadOnlyReaderInAnotherThreadWhileWriting) {
  const int64_t run = store_->CreateRun(MakeRun({"nightly"}));
  constexpr int kWrites = 150;
  std::atomic<bool> writing{true};
  std::atomic<int> reads{0};
  std::string reader_error;

  std::thread reader([&] {
    try {
      auto reader_store = Store::OpenReadOnly(path_);
      EXPECT_TRUE(reader_store->read_only());
      size_t last = 0;
      MeasurementFilter f;
      f.tag = "nightly";
      f.page_size = 1000;
      do {
        const size_t now = reader_store->QueryMeasurements(f).measurements.size();
        EXPECT_GE(now, last) << "a reader saw rows disappear";
        last = now;
        ASSERT_TRUE(reader_store->GetRun(run).has_value());
        ++reads;
      } while (writing.load());
      EXPECT_EQ(reader_store->QueryMeasurements(f).measurements.size(),
                static_cast<size_t>(kWrites));
      EXPECT_EQ(CodeOf([&] { reader_store->CreateRun(MakeRun()); }), Error::Code::kInvalidArgument);
    } catch (const std::exception& e) {
      reader_error = e.what();
    }
  });
  std::thread writer([&] {
    for (int i = 0; i < kWrites; ++i) {
      MeasurementRecord x = FullMeasurement(run);
      x.sequence = i;
      store_->InsertMeasurement(x);
    }
    writing = false;
  });
  writer.join();
  reader.join();
  EXPECT_EQ(reader_error, "");
  EXPECT_GT(reads.load(), 0);
}

TEST_F(StoreTest, SeveralThreadsShareOneStore) {
  const int64_t run = store_->CreateRun(MakeRun());
  constexpr int kThreads = 4;
  constexpr int kEach = 25;
  std::vector<std::thread> threads;
  std::vector<std::vector<int64_t>> ids(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        MeasurementRecord x = FullMeasurement(run);
        x.sequence = t * kEach + i;
        ids[t].push_back(store_->InsertMeasurement(x));
        MeasurementFilter f;
        f.run_id = run;
        f.page_size = 10;
        store_->QueryMeasurements(f);  // reads interleaved with the other threads' writes
        store_->GetRun(run);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  std::set<int64_t> unique;
  for (const auto& v : ids) unique.insert(v.begin(), v.end());
  EXPECT_EQ(unique.size(), static_cast<size_t>(kThreads * kEach));
  EXPECT_EQ(store_->GetRun(run)->ok, kThreads * kEach);
  EXPECT_EQ(store_->MeasurementsOfRun(run, true).size(), static_cast<size_t>(kThreads * kEach));
}

}  // namespace
}  // namespace ablation::db
