// Shared by the Store's tests: rows with every field set to something distinct (so that a
// swapped column shows), a fixture with a fresh database, and exact comparison of messages.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <google/protobuf/util/message_differencer.h>

#include "db/error.h"
#include "db/store.h"
#include "tests/db/db_test_support.h"

namespace ablation::db::testing {

inline constexpr int64_t kBaseMs = 1'700'000'000'000;

inline v1::DeviceIdentity H200() {
  v1::DeviceIdentity d;
  d.set_index(1);
  d.set_name("NVIDIA H200");
  d.set_uuid("GPU-0f1e2d3c");
  d.set_compute_capability("9.0");
  d.set_sm_count(132);
  d.set_driver_version("560.35.03");
  d.set_cuda_runtime_version("12.6");
  d.set_cublas_version("12.6.4.1");
  d.set_memory_bytes(150'117'613'568);
  d.set_l2_bytes(52'428'800);
  d.set_smem_per_block_optin(232'448);
  d.set_smem_per_sm(233'472);
  return d;
}

// The least CreateRun takes: a state and a kind.
inline v1::Run BareRun(v1::RunKind kind = v1::RUN_KIND_ABLATION) {
  v1::Run run;
  run.set_state(v1::RUN_STATE_QUEUED);
  run.set_kind(kind);
  return run;
}

inline v1::Run MakeRun(std::vector<std::string> tags = {}) {
  v1::Run run = BareRun();
  run.set_daemon_version("0.1.0");
  run.set_git_revision("0123456789ab");
  run.set_request_json(R"({"variants":["abl_*"],"dtype":"bf16"})");
  run.set_requested_by("alice@node7");
  for (std::string& tag : tags) run.add_tags(std::move(tag));
  run.set_created_at_ms(kBaseMs);
  run.set_planned(12);
  run.set_clock_policy("observe");
  return run;
}

// Every field set to something distinct, so a swapped column shows.
inline v1::Measurement FullMeasurement(int64_t run_id) {
  v1::Measurement x;
  x.set_run_id(run_id);
  x.set_sequence(4);
  x.set_variant("abl_L1_R1_bl0_s3_sw1");
  x.set_dtype("bf16");
  x.mutable_shape()->set_m(4096);
  x.mutable_shape()->set_n(2048);
  x.mutable_shape()->set_k(1024);
  x.set_status(v1::MEASUREMENT_STATUS_OK);
  x.set_error("");
  v1::TimingStats& s = *x.mutable_stats();
  s.set_median_ms(1.01);
  s.set_mean_ms(1.02);
  s.set_stddev_ms(0.03);
  s.set_min_ms(0.94);
  s.set_max_ms(1.25);
  s.set_q1_ms(0.99);
  s.set_q3_ms(1.04);
  s.set_samples(5);
  s.set_noise(0.0042);
  s.set_total_seconds(0.61);
  x.set_tflops(170.5);
  x.set_l2(v1::L2_MODE_COLD);
  x.set_clock_policy("lock sm=1980 mem=max");
  x.set_verification_outcome(v1::VERIFICATION_OUTCOME_PASSED);
  x.set_verification("passed");
  v1::Telemetry& t = *x.mutable_telemetry();
  t.set_available(true);
  t.set_unavailable_reason("nvml 12.560");
  t.set_sm_clock_mhz_mean(1975.5);
  t.set_sm_clock_mhz_min(1965);
  t.set_sm_clock_mhz_max(1980);
  t.set_mem_clock_mhz_mean(2619);
  t.set_mem_clock_mhz_min(2618);
  t.set_mem_clock_mhz_max(2620);
  t.set_power_w_mean(512.25);
  t.set_power_w_min(480);
  t.set_power_w_max(600.5);
  t.set_temperature_c_mean(61.5);
  t.set_temperature_c_min(58);
  t.set_temperature_c_max(64);
  t.add_throttle_reasons("sw_power_cap");
  t.add_throttle_reasons("hw_slowdown");
  t.set_throttled_samples(3);
  v1::Occupancy& o = *x.mutable_occupancy();
  o.set_registers_per_thread(168);
  o.set_static_smem_bytes(1024);
  o.set_dynamic_smem_bytes(98304);
  o.set_local_bytes_per_thread(16);
  o.set_max_blocks_per_sm(2);
  o.set_max_warps_per_sm(16);
  o.set_theoretical_occupancy(0.25);
  o.set_limiter("registers");
  o.set_threads_per_block(256);
  for (double ms : {1.01, 0.94, 1.25, 0.99, 1.04}) x.add_sample_ms(ms);
  x.set_created_at_ms(kBaseMs + 1234);
  x.set_bytes_per_second(3.5e12);
  x.set_fragment_loads_per_second(1.25e10);
  return x;
}

// Exact equality of every field, presence included (an optional number read back as 0 instead of
// unset differs), except those named in ignored (e.g. "id", "sample_ms"). Prints the differences.
inline ::testing::AssertionResult SameMessage(const google::protobuf::Message& a,
                                              const google::protobuf::Message& b,
                                              const std::vector<std::string>& ignored = {}) {
  google::protobuf::util::MessageDifferencer differencer;
  for (const std::string& name : ignored) {
    const auto* field = a.GetDescriptor()->FindFieldByName(name);
    if (field == nullptr) return ::testing::AssertionFailure() << "no field " << name;
    differencer.IgnoreField(field);
  }
  std::string differences;
  differencer.ReportDifferencesToString(&differences);
  if (differencer.Compare(a, b)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << differences;
}

// The row as written against the row read back: all but the id the store assigned and the
// samples (compared on their own, when asked for).
inline ::testing::AssertionResult SameMeasurement(const v1::Measurement& read,
                                                  const v1::Measurement& written) {
  return SameMessage(read, written, {"id", "sample_ms"});
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

class StoreTest : public TempDirTest {
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

}  // namespace ablation::db::testing
