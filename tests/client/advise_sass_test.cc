// `advise` and `sass` against an in-process fake daemon: arguments, the request sent, what is
// printed, exit codes.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <mutex>
#include <sstream>

#include "ablation/v1/ablation.grpc.pb.h"
#include "client/app.h"
#include "client/cli/exit_codes.h"

namespace ablation::client {
namespace {

class FakeAdvice final : public v1::Ablation::Service {
 public:
  grpc::Status Advise(grpc::ServerContext*, const v1::AdviseRequest* request,
                      v1::AdviseResponse* response) override {
    std::lock_guard lock(mu_);
    advise_ = *request;
    if (request->arch() == "sm_75")
      return {grpc::StatusCode::INVALID_ARGUMENT,
              "arch: unknown architecture 'sm_75'; known: sm_80, sm_86, sm_89, sm_90"};
    if (request->bm() == 128) {  // 64:1 on sm_90, where an H200 measured cp.async +38%
      response->set_rule("pipelining may not pay");
      response->set_rule_reason("ratio 64.0:1 is above 20");
      response->set_arch(request->arch());
      response->set_rule_check(v1::RULE_CHECK_CONTRADICTED);
      response->set_measured_gain(0.38);
      response->set_rule_expects("at most +5%");
      response->set_rule_verdict(
          "contradicted by this GPU's measurement: the rule expects at most +5%, this GPU "
          "measured +38.0%");
      response->set_lead(
          "measured on this GPU: pipe_cpasync_f16_128x128x32 +38.0% over "
          "pipe_baseline_f16_128x128x32 at 4096x4096x4096 (138.00 against 100.00 TFLOPS, run 2): "
          "pipelining pays here");
      response->mutable_measured()->set_measured(true);
      return grpc::Status::OK;
    }
    response->set_ratio(16);
    response->set_element_bytes(2);
    response->set_rule("measure both");
    response->set_rule_reason("ratio 16.0:1 is between 5 and 20");
    response->set_arch(request->arch());
    response->set_arch_gpus("GA102/GA104");
    auto* s = response->mutable_smem();
    s->set_a_bytes(2048);
    s->set_b_bytes(2048);
    s->set_single_bytes(4096);
    s->set_double_bytes(8192);
    s->set_smem_per_sm(102400);
    s->set_smem_per_block_max(101376);
    s->set_cliff_bytes(51200);
    s->set_blocks_per_sm_single(16);
    s->set_blocks_per_sm_double(12);
    s->set_double_fits(true);
    s->set_double_under_cliff(true);
    s->set_verdict("the double buffer (8 KB) stays under the 50 KB cliff");
    auto* m = response->mutable_measured();
    m->set_measured(true);
    m->set_summary("pipe_cpasync_f16_32x32x32 won at 4096x4096x4096 (1.35x the baseline)");
    auto* p = m->add_points();
    p->set_variant("pipe_cpasync_f16_32x32x32");
    p->mutable_shape()->set_m(4096);
    p->mutable_shape()->set_n(4096);
    p->mutable_shape()->set_k(4096);
    p->set_tflops(13.5);
    p->set_run_id(3);
    return grpc::Status::OK;
  }

  grpc::Status InspectSass(grpc::ServerContext*, const v1::SassRequest* request,
                           v1::SassResponse* response) override {
    std::lock_guard lock(mu_);
    sass_ = *request;
    if (request->variant() == "nocuobjdump")
      return {grpc::StatusCode::FAILED_PRECONDITION,
              "no cuobjdump on the daemon's host (looked in PATH, $CUDA_HOME/bin, "
              "/usr/local/cuda/bin); install the CUDA toolkit or set ABLATION_CUOBJDUMP"};
    response->set_tool("/usr/local/cuda/bin/cuobjdump");
    response->set_binary("/opt/ablationd/bin/ablation-worker");
    response->set_arch("sm_90");
    auto* k = response->mutable_kernel();
    k->set_variant(request->variant());
    k->set_dtype(request->dtype().empty() ? "bf16" : request->dtype());
    k->set_symbol("_Z6kernelv");
    k->set_loop_found(true);
    k->set_loop_start(0xb30);
    k->set_loop_end(0x1100);
    k->set_loop_instructions(62);
    k->set_compute_opcode("HMMA");
    k->set_compute_per_iteration(16);
    k->set_load_opcode("LDGSTS");
    k->set_loads(4);
    const bool overlap = request->variant() != "abl_L0_R1_bl0_s1_sw1";
    k->set_overlapping_loads(overlap ? 4 : 0);
    k->set_overlap(overlap);
    k->set_barrier_after_compute(true);
    k->set_verdict(overlap ? "overlap" : "no overlap");
    auto* c = k->add_checks();
    c->set_name("overlap");
    c->set_passed(overlap);
    c->set_detail(overlap ? "4 of 4 LDGSTS reach HMMA with no BAR.SYNC between"
                          : "every LDG is separated from HMMA by a BAR.SYNC");
    c = k->add_checks();
    c->set_name("spills");
    c->set_passed(true);
    c->set_detail("no LDL/STL");
    auto* l = k->add_excerpt();
    l->set_offset(0xcf0);
    l->set_marker("LOAD>");
    l->set_text("LDGSTS.E.BYPASS.LTC128B.128 [R77], [R68.64]");
    l = k->add_excerpt();
    l->set_offset(-1);
    l->set_marker("MMA");
    l->set_text("... 13 more HMMA");
    auto* f = response->add_family();
    f->set_variant("abl_L1_R1_bl0_s1_sw1");
    f->set_dtype(k->dtype());
    f->set_loop_found(true);
    f->set_verdict("no overlap");
    f->set_compute_opcode("HMMA");
    f->set_compute_per_iteration(16);
    return grpc::Status::OK;
  }

  std::mutex mu_;
  v1::AdviseRequest advise_;
  v1::SassRequest sass_;
};

class AdviseSassTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }
  void TearDown() override { server_->Shutdown(); }

  int Run(std::vector<std::string> args) {
    args.insert(args.begin(),
                {"ablation-client", "--server", "127.0.0.1:" + std::to_string(port_)});
    std::ostringstream out, err;
    int code = RunApp(args, out, err, nullptr);
    out_ = out.str();
    err_ = err.str();
    return code;
  }

  FakeAdvice service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::string out_, err_;
};

TEST_F(AdviseSassTest, AdvisePrintsRuleBudgetAndMeasuredAnswer) {
  ASSERT_EQ(Run({"advise", "--bm", "32", "--bn", "32", "--bk", "32", "--dtype", "fp16", "--arch",
                 "sm_86"}),
            kExitOk)
      << err_;
  EXPECT_EQ(service_.advise_.bm(), 32);
  EXPECT_EQ(service_.advise_.bk(), 32);
  EXPECT_EQ(service_.advise_.dtype(), "fp16");
  EXPECT_EQ(service_.advise_.arch(), "sm_86");
  EXPECT_NE(out_.find("advice for 32x32x32 fp16 on sm_86"), std::string::npos) << out_;
  EXPECT_NE(out_.find("16.0 FLOP/byte"), std::string::npos) << out_;
  EXPECT_NE(out_.find("measure both"), std::string::npos) << out_;
  EXPECT_NE(out_.find("stays under the 50 KB cliff"), std::string::npos) << out_;
  EXPECT_NE(out_.find("pipe_cpasync_f16_32x32x32 won at 4096x4096x4096"), std::string::npos)
      << out_;
  EXPECT_NE(out_.find("13.50 TFLOPS"), std::string::npos) << out_;
}

TEST_F(AdviseSassTest, AMeasurementThatContradictsTheRuleLeads) {
  ASSERT_EQ(Run({"advise", "--bm", "128", "--bn", "128", "--bk", "32", "--dtype", "fp16", "--arch",
                 "sm_90"}),
            kExitOk)
      << err_;
  // The first line is this GPU's answer, the rule after it, marked as contradicted.
  EXPECT_EQ(out_.substr(0, out_.find('\n')),
            "measured on this GPU: pipe_cpasync_f16_128x128x32 +38.0% over "
            "pipe_baseline_f16_128x128x32 at 4096x4096x4096 (138.00 against 100.00 TFLOPS, run 2): "
            "pipelining pays here");
  const std::size_t second = out_.find('\n') + 1;
  EXPECT_EQ(out_.substr(second, out_.find('\n', second) - second),
            "rule (contradicted by the measurement): pipelining may not pay (expects at most +5%)");
  EXPECT_NE(out_.find("pipelining may not pay (contradicted by this GPU's measurement)"),
            std::string::npos)
      << out_;
  // Other formats: the answer is the first field.
  ASSERT_EQ(Run({"--format", "csv", "advise", "--bm", "128", "--bn", "128", "--bk", "32", "--dtype",
                 "fp16", "--arch", "sm_90"}),
            kExitOk);
  const std::size_t first_row = out_.find('\n') + 1;
  EXPECT_EQ(out_.compare(first_row, 7, "answer,"), 0) << out_;
}

TEST_F(AdviseSassTest, AdviseJsonKeepsFields) {
  ASSERT_EQ(Run({"--format", "json", "advise", "--bm", "32", "--bn", "32", "--bk", "32", "--dtype",
                 "fp16", "--arch", "sm_86"}),
            kExitOk);
  EXPECT_NE(out_.find("\"rule\":\"measure both\""), std::string::npos) << out_;
  EXPECT_NE(out_.find("\"cliff_bytes\":51200"), std::string::npos) << out_;
}

TEST_F(AdviseSassTest, AdviseRefusesBadTileBeforeCalling) {
  EXPECT_EQ(Run({"advise", "--bm", "0", "--bn", "32", "--bk", "32", "--dtype", "fp16", "--arch",
                 "sm_86"}),
            kExitUsage);
  EXPECT_NE(err_.find("--bm"), std::string::npos) << err_;
  EXPECT_EQ(Run({"advise", "--bm", "32", "--bn", "32", "--dtype", "fp16", "--arch", "sm_86"}),
            kExitUsage);
  EXPECT_NE(err_.find("--bk"), std::string::npos) << err_;
}

TEST_F(AdviseSassTest, AdviseReportsTheDaemonsFieldError) {
  EXPECT_EQ(Run({"advise", "--bm", "32", "--bn", "32", "--bk", "32", "--dtype", "fp16", "--arch",
                 "sm_75"}),
            kExitDataError);
  EXPECT_NE(err_.find("INVALID_ARGUMENT"), std::string::npos) << err_;
  EXPECT_NE(err_.find("arch: unknown architecture 'sm_75'"), std::string::npos) << err_;
}

TEST_F(AdviseSassTest, SassPrintsVerdictChecksAndExcerpt) {
  ASSERT_EQ(Run({"sass", "abl_L1_R1_bl0_s3_sw1", "--dtype", "fp16"}), kExitOk) << err_;
  EXPECT_EQ(service_.sass_.variant(), "abl_L1_R1_bl0_s3_sw1");
  EXPECT_EQ(service_.sass_.dtype(), "fp16");
  EXPECT_NE(out_.find("abl_L1_R1_bl0_s3_sw1 fp16 sm_90: OVERLAP"), std::string::npos) << out_;
  EXPECT_NE(out_.find("[ok]   overlap"), std::string::npos) << out_;
  EXPECT_NE(out_.find("0cf0  LOAD>   LDGSTS.E.BYPASS.LTC128B.128 [R77], [R68.64]"),
            std::string::npos)
      << out_;
  EXPECT_NE(out_.find("... 13 more HMMA"), std::string::npos) << out_;
  EXPECT_NE(out_.find("abl_L1_R1_bl0_s1_sw1"), std::string::npos) << out_;  // the family table
}

TEST_F(AdviseSassTest, SassExitsOneWhenACheckFails) {
  EXPECT_EQ(Run({"sass", "abl_L0_R1_bl0_s1_sw1"}), kExitFailed);
  EXPECT_NE(out_.find("NO OVERLAP"), std::string::npos) << out_;
  EXPECT_NE(out_.find("[FAIL] overlap"), std::string::npos) << out_;
}

TEST_F(AdviseSassTest, SassSaysPlainlyWhenTheToolIsMissing) {
  EXPECT_EQ(Run({"sass", "nocuobjdump"}), kExitUnavailable);
  EXPECT_NE(err_.find("FAILED_PRECONDITION"), std::string::npos) << err_;
  EXPECT_NE(err_.find("no cuobjdump"), std::string::npos) << err_;
}

TEST_F(AdviseSassTest, SassNeedsAVariant) {
  EXPECT_EQ(Run({"sass"}), kExitUsage);
  EXPECT_NE(err_.find("variant"), std::string::npos) << err_;
}

TEST_F(AdviseSassTest, SassCsvIsTheFamilyTable) {
  ASSERT_EQ(Run({"--format", "csv", "sass", "abl_L1_R1_bl0_s3_sw1"}), kExitOk);
  EXPECT_EQ(out_.rfind("variant,dtype,verdict,compute", 0), 0u) << out_;
  EXPECT_NE(out_.find("abl_L1_R1_bl0_s1_sw1,bf16,no overlap,16"), std::string::npos) << out_;
}

}  // namespace
}  // namespace ablation::client
