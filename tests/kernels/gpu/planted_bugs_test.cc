// Verify catches classic pipelining bugs (test-only variants, tests/kernels/gpu/planted_bugs.cu)
// through the worker's own verification path, and passes the same kernel without the bug.
#include <gtest/gtest.h>

#include "server/worker/worker.h"

namespace ablation::testing {
void RegisterPlantedBugs(kernels::Registry& r);
namespace {

constexpr v1::Reference kReferences[] = {v1::REFERENCE_CPU, v1::REFERENCE_CUBLAS};

class PlantedBugs : public ::testing::Test {
 protected:
  void SetUp() override {
    hello_ = worker_.Open(0);
    if (!hello_.device_present()) GTEST_SKIP() << hello_.no_device_reason();
  }
  v1::VerifyResult Verify(const std::string& variant, int64_t m, int64_t n, int64_t k,
                          v1::Reference reference) {
    worker::v1::VerifyTask task;
    task.set_task_id(1);
    task.set_variant(variant);
    task.set_dtype("bf16");
    task.mutable_shape()->set_m(m);
    task.mutable_shape()->set_n(n);
    task.mutable_shape()->set_k(k);
    task.set_reference(reference);
    task.set_seed(20261130);
    return worker_.Verify(task);
  }
  worker::Worker worker_{&RegisterPlantedBugs};
  worker::v1::Hello hello_;
};

TEST_F(PlantedBugs, ControlPasses) {
  for (auto reference : kReferences) {
    auto r = Verify("testbug_control", 512, 512, 1024, reference);
    EXPECT_TRUE(r.passed()) << v1::Reference_Name(reference) << ": " << r.error() << " rel "
                            << r.rel_frobenius_error();
  }
}

TEST_F(PlantedBugs, ForgottenEpilogueIsCaught) {
  for (auto reference : kReferences) {
    const std::string& name = v1::Reference_Name(reference);
    auto r = Verify("testbug_forgot_epilogue", 512, 512, 1024, reference);
    EXPECT_FALSE(r.passed()) << name;
    EXPECT_GT(r.mismatches(), 0) << name;
    EXPECT_GT(r.rel_frobenius_error(), 0.05) << name << ": one K tile of 32 is missing";
  }
}

TEST_F(PlantedBugs, MissingBarrierIsCaught) {
  // A race: repeat on fresh inputs; a checker that sees it must fail it every time it shows, and
  // it must show at least once in a few tries at this size.
  int caught = 0;
  for (int i = 0; i < 4; ++i) {
    auto r = Verify("testbug_missing_barrier", 1024, 1024, 2048, v1::REFERENCE_CUBLAS);
    caught += !r.passed();
  }
  EXPECT_GT(caught, 0) << "the missing barrier never corrupted the output, or Verify missed it";
}

}  // namespace
}  // namespace ablation::testing
