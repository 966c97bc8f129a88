#include "server/core/history/series.h"

#include <gtest/gtest.h>

namespace ablation::core {
namespace {

v1::DeviceIdentity H200() {
  v1::DeviceIdentity d;
  d.set_name("NVIDIA H200");
  d.set_uuid("GPU-1");
  d.set_compute_capability("9.0");
  d.set_vbios_version("96.00.AF.00.01");
  d.set_driver_version("580.95.05");
  d.set_cuda_runtime_version("13.0");
  d.set_cublas_version("13.1.0");
  d.set_power_limit_w(700);
  d.set_ecc_mode("on");
  return d;
}

TEST(HardwareFingerprint, StableAcrossBoardsOfOneSetup) {
  const std::string a = HardwareFingerprint(H200(), "observe");
  EXPECT_EQ(a.size(), 16u);
  v1::DeviceIdentity other = H200();
  other.set_uuid("GPU-2");  // another board, same setup: the same series
  other.set_index(3);
  EXPECT_EQ(HardwareFingerprint(other, "observe"), a);
}

TEST(HardwareFingerprint, EachFieldStartsANewSeries) {
  const std::string base = HardwareFingerprint(H200(), "observe");
  EXPECT_NE(HardwareFingerprint(H200(), "lock sm=1980 mem=max"), base);
  auto changed = [](auto edit) {
    v1::DeviceIdentity d = H200();
    edit(d);
    return HardwareFingerprint(d, "observe");
  };
  EXPECT_NE(changed([](auto& d) { d.set_vbios_version("96.00.AF.00.02"); }), base);
  EXPECT_NE(changed([](auto& d) { d.set_driver_version("580.105.08"); }), base);
  EXPECT_NE(changed([](auto& d) { d.set_cuda_runtime_version("13.1"); }), base);
  EXPECT_NE(changed([](auto& d) { d.set_cublas_version("13.2.0"); }), base);
  EXPECT_NE(changed([](auto& d) { d.set_power_limit_w(600); }), base);
  EXPECT_NE(changed([](auto& d) { d.clear_power_limit_w(); }), base);
  EXPECT_NE(changed([](auto& d) { d.set_ecc_mode("off"); }), base);
  EXPECT_NE(changed([](auto& d) { d.set_name("NVIDIA H100 80GB HBM3"); }), base);
  // No GPU: no fingerprint.
  EXPECT_EQ(HardwareFingerprint(v1::DeviceIdentity(), "observe"), "");
}

TEST(NodeLabels, ParsedSortedAndFormatted) {
  std::map<std::string, std::string> labels = {{"zone", "a"}};
  ASSERT_TRUE(
      ParseNodeLabels(" pool=h200 , zone=b,,topology.kubernetes.io/region=eu", &labels).ok());
  EXPECT_EQ(FormatNodeLabels(labels), "pool=h200,topology.kubernetes.io/region=eu,zone=b");
  EXPECT_EQ(FormatNodeLabels({}), "");
}

TEST(NodeLabels, BadEntriesAreNamed) {
  std::map<std::string, std::string> labels;
  Status st = ParseNodeLabels("pool=h200,nolabel", &labels);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'nolabel' is not key=value"), std::string::npos);
  st = ParseNodeLabels("=x", &labels);
  EXPECT_NE(st.message().find("has no key"), std::string::npos);
  st = ParseNodeLabels("bad key=x", &labels);
  EXPECT_NE(st.message().find("'bad key'"), std::string::npos);
  st = ParseNodeLabels("a=b=c", &labels);
  EXPECT_NE(st.message().find("may not hold '='"), std::string::npos);
}

}  // namespace
}  // namespace ablation::core
