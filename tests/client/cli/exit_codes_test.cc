#include "client/cli/exit_codes.h"

#include <gtest/gtest.h>

namespace ablation::client {
namespace {

namespace v1 = ::ablation::v1;

RunOutcome Succeeded() {
  RunOutcome outcome;
  outcome.finished_event = true;
  outcome.finished_state = v1::RUN_STATE_SUCCEEDED;
  return outcome;
}

TEST(ExitCodesTest, SucceededRunIsZero) { EXPECT_EQ(ExitCodeForRun(Succeeded()), kExitOk); }

TEST(ExitCodesTest, FailedEventIsOne) {
  RunOutcome outcome;
  outcome.failed_event = true;
  EXPECT_EQ(ExitCodeForRun(outcome), kExitFailed);
}

TEST(ExitCodesTest, FailedMeasurementIsOne) {
  RunOutcome outcome = Succeeded();
  outcome.failed_measurements = 1;
  EXPECT_EQ(ExitCodeForRun(outcome), kExitFailed);
}

TEST(ExitCodesTest, PartialOrCancelledRunIsOne) {
  RunOutcome outcome = Succeeded();
  outcome.finished_state = v1::RUN_STATE_PARTIAL;
  EXPECT_EQ(ExitCodeForRun(outcome), kExitFailed);
  outcome.finished_state = v1::RUN_STATE_CANCELLED;
  EXPECT_EQ(ExitCodeForRun(outcome), kExitFailed);
}

TEST(ExitCodesTest, RpcErrorIsTwoAndWinsOverFailures) {
  RunOutcome outcome;
  outcome.code = grpc::StatusCode::INVALID_ARGUMENT;
  EXPECT_EQ(ExitCodeForRun(outcome), kExitUsage);
  outcome.failed_event = true;
  EXPECT_EQ(ExitCodeForRun(outcome), kExitUsage);
}

TEST(ExitCodesTest, StreamWithoutFinalEventIsTwo) {
  EXPECT_EQ(ExitCodeForRun(RunOutcome{}), kExitUsage);
}

TEST(ExitCodesTest, InterruptIs130) {
  RunOutcome outcome;
  outcome.code = grpc::StatusCode::CANCELLED;
  outcome.interrupted = true;
  EXPECT_EQ(ExitCodeForRun(outcome), kExitInterrupted);
}

TEST(ExitCodesTest, StatusMapping) {
  EXPECT_EQ(ExitCodeForStatus(grpc::Status::OK), kExitOk);
  EXPECT_EQ(ExitCodeForStatus(grpc::Status(grpc::StatusCode::NOT_FOUND, "no run 9")), kExitUsage);
  EXPECT_EQ(ExitCodeForStatus(grpc::Status(grpc::StatusCode::UNAVAILABLE, "down")), kExitUsage);
}

TEST(ExitCodesTest, StatusCodeNames) {
  EXPECT_EQ(StatusCodeName(grpc::StatusCode::INVALID_ARGUMENT), "INVALID_ARGUMENT");
  EXPECT_EQ(StatusCodeName(grpc::StatusCode::DEADLINE_EXCEEDED), "DEADLINE_EXCEEDED");
  EXPECT_EQ(StatusCodeName(grpc::StatusCode::UNAUTHENTICATED), "UNAUTHENTICATED");
}

TEST(ExitCodesTest, DescribeRpcErrorNamesCodeAndMessage) {
  grpc::Status status(grpc::StatusCode::INVALID_ARGUMENT,
                      "variants[0]: unknown variant 'L9'; closest: abl_L1_R0_bl0_s1_sw1");
  EXPECT_EQ(DescribeRpcError(status, "h:1"),
            "error: INVALID_ARGUMENT: variants[0]: unknown variant 'L9'; closest: "
            "abl_L1_R0_bl0_s1_sw1");
  std::string unavailable =
      DescribeRpcError(grpc::Status(grpc::StatusCode::UNAVAILABLE, "refused"), "gpu7:50051");
  EXPECT_NE(unavailable.find("error: UNAVAILABLE: refused"), std::string::npos);
  EXPECT_NE(unavailable.find("gpu7:50051"), std::string::npos);
}

TEST(ExitCodesTest, HelpDocumentsEveryCode) {
  std::string_view help = ExitCodesHelp();
  for (std::string_view code : {"  0 ", "  1 ", "  2 ", "  130 "}) {
    EXPECT_NE(help.find(code), std::string_view::npos) << code;
  }
}

}  // namespace
}  // namespace ablation::client
