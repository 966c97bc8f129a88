// The worker's check of a verification's reference: the daemon always chooses one, so a task
// without one is refused, naming the field, and never given a default.
#include "server/protocol/verify_reference.h"

#include <gtest/gtest.h>

namespace ablation::worker {
namespace {

namespace apb = ::ablation::v1;

v1::VerifyTask Task(apb::Reference reference, const std::string& reference_variant = "") {
  v1::VerifyTask t;
  t.set_variant("abl_L0_R1_bl0_s1_sw1");
  t.set_dtype("bf16");
  t.mutable_shape()->set_m(256);
  t.mutable_shape()->set_n(256);
  t.mutable_shape()->set_k(256);
  t.set_reference(reference);
  t.set_reference_variant(reference_variant);
  return t;
}

TEST(VerifyReference, CpuGpuCublasAndANamedVariantAreAccepted) {
  EXPECT_EQ(protocol::CheckReference(Task(apb::REFERENCE_CPU)), "");
  EXPECT_EQ(protocol::CheckReference(Task(apb::REFERENCE_GPU)), "");
  EXPECT_EQ(protocol::CheckReference(Task(apb::REFERENCE_CUBLAS)), "");
  EXPECT_EQ(protocol::CheckReference(Task(apb::REFERENCE_VARIANT, "abl_L1_R1_bl0_s1_sw1")), "");
}

TEST(VerifyReference, UnspecifiedIsAnErrorEvenForASmallShape) {
  // The worker used to pick the CPU up to 1024^3 itself; that choice is the daemon's now.
  const std::string err = protocol::CheckReference(Task(apb::REFERENCE_UNSPECIFIED));
  EXPECT_EQ(err.rfind("VerifyTask.reference is unspecified", 0), 0u) << err;
  EXPECT_NE(err.find("no default"), std::string::npos) << err;
}

TEST(VerifyReference, AVariantReferenceNeedsItsName) {
  const std::string err = protocol::CheckReference(Task(apb::REFERENCE_VARIANT));
  EXPECT_EQ(err.rfind("VerifyTask.reference_variant is empty", 0), 0u) << err;
}

TEST(VerifyReference, UnknownValueIsAnError) {
  const std::string err = protocol::CheckReference(Task(apb::Reference(42)));
  EXPECT_EQ(err, "VerifyTask.reference has the unknown value 42");
}

apb::Shape Shape(int64_t m, int64_t n, int64_t k) {
  apb::Shape s;
  s.set_m(m);
  s.set_n(n);
  s.set_k(k);
  return s;
}

TEST(VerifyReference, CpuReferenceLimits) {
  EXPECT_EQ(protocol::CpuReferenceRefusal(Shape(2048, 2048, 2048)), "") << "2^33 multiply-adds";
  EXPECT_EQ(protocol::CpuReferenceRefusal(Shape(65, 37, 29)), "");
  const std::string work = protocol::CpuReferenceRefusal(Shape(2048, 2048, 2049));
  EXPECT_EQ(work.rfind("reference: 2048x2048x2049 (M*N*K = 8594128896) is too large", 0), 0u)
      << work;
  // Little work, vast memory: C alone is 2^32 doubles.
  const std::string memory = protocol::CpuReferenceRefusal(Shape(65536, 65536, 2));
  EXPECT_EQ(memory.rfind("reference: 65536x65536x2 needs ", 0), 0u) << memory;
  EXPECT_NE(memory.find("host memory"), std::string::npos) << memory;
}

}  // namespace
}  // namespace ablation::worker
