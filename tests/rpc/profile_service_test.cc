// The Profile handler in-process over the real core: the status it maps a refusal to, and the
// deferred answer from the GPU's thread (an in-process worker names the kernel; a stand-in ncu
// prints the real H200 output of tests/core/testdata/ncu).
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "server/rpc/service.h"
#include "tests/support/in_process_worker.h"

namespace ablation::rpc {
namespace {

class ProfileServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kernels::RegisterCatalog(registry_);
    dir_ = std::filesystem::temp_directory_path() /
           ("profile_service_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void Start(const std::string& ncu) {
    core::CoreOptions options;
    options.db_path = (dir_ / "results.db").string();
    options.readers = 1;
    options.runs.worker_factory = testing::InProcessWorkers(script_, log_);
    options.profiler.tool = ncu;
    ASSERT_TRUE(core::DaemonCore::Open(options, &registry_, &core_).ok());
    service_ = std::make_unique<AblationService>(core_.get());
    grpc::ServerBuilder builder;
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    stub_ = v1::Ablation::NewStub(server_->InProcessChannel(grpc::ChannelArguments()));
  }
  void TearDown() override {
    if (server_) server_->Shutdown();
    if (core_) core_->Shutdown();
    server_.reset();
    core_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::string FakeNcu(const std::string& fixture) {
    const std::string path = (dir_ / "ncu").string();
    std::ofstream f(path);
    f << "#!/bin/sh\n[ \"$1\" = --version ] && { echo 'Version 2025.3.1.0 (build 1)'; exit 0; }\n"
      << "cat '" << NCU_TESTDATA_DIR << "/" << fixture << "'\n";
    f.close();
    ::chmod(path.c_str(), 0755);
    return path;
  }
  grpc::Status Profile(const v1::ProfileRequest& request, v1::ProfileResponse* response) {
    grpc::ClientContext ctx;
    return stub_->Profile(&ctx, request, response);
  }

  kernels::Registry registry_;
  std::filesystem::path dir_;
  std::shared_ptr<testing::WorkerScript> script_ = std::make_shared<testing::WorkerScript>();
  std::shared_ptr<testing::WorkerLog> log_ = std::make_shared<testing::WorkerLog>();
  std::unique_ptr<core::DaemonCore> core_;
  std::unique_ptr<AblationService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::Ablation::Stub> stub_;
};

TEST_F(ProfileServiceTest, AnswersFromTheGpusThreadWithEveryKernelInOrder) {
  Start(FakeNcu("abl_L1_R1_bl0_s3_sw1.csv"));
  v1::ProfileRequest request;
  request.add_variants("L1_R1_s3");
  request.add_variants("abl_L1_R0_bl0_s3_sw1");
  request.add_metrics("lsu");
  v1::ProfileResponse response;
  const grpc::Status st = Profile(request, &response);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(response.kernels_size(), 2);
  EXPECT_EQ(response.kernels(0).variant(), "abl_L1_R1_bl0_s3_sw1");
  EXPECT_EQ(response.kernels(1).variant(), "abl_L1_R0_bl0_s3_sw1");
  EXPECT_EQ(response.kernels(0).shape().m(), 4096);  // the default shape
  ASSERT_EQ(response.kernels(0).counters_size(), 5);
  EXPECT_EQ(response.kernels(0).counters(1).metric(), "ldmatrix_instructions");
  EXPECT_DOUBLE_EQ(response.kernels(0).counters(1).value(), 16777216);
  EXPECT_EQ(response.tool_version(), "2025.3.1.0");
}

TEST_F(ProfileServiceTest, NoToolIsFailedPreconditionAndBadInputInvalidArgument) {
  Start((dir_ / "no-ncu").string());
  v1::ProfileRequest request;
  request.add_variants("L1_R1_s3");
  v1::ProfileResponse response;
  grpc::Status st = Profile(request, &response);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(st.error_message().find("no Nsight Compute (ncu)"), std::string::npos);
  request.clear_variants();
  st = Profile(request, &response);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("variants: give at least one variant"), std::string::npos);
}

}  // namespace
}  // namespace ablation::rpc
