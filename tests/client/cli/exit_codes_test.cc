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

TEST(ExitCodesTest, RpcErrorWinsOverFailures) {
  RunOutcome outcome;
  outcome.code = grpc::StatusCode::INVALID_ARGUMENT;
  EXPECT_EQ(ExitCodeForRun(outcome), kExitDataError);
  outcome.failed_event = true;
  EXPECT_EQ(ExitCodeForRun(outcome), kExitDataError);
  outcome.code = grpc::StatusCode::FAILED_PRECONDITION;  // no GPU
  EXPECT_EQ(ExitCodeForRun(outcome), kExitUnavailable);
}

TEST(ExitCodesTest, StreamWithoutFinalEventIsATemporaryFailure) {
  EXPECT_EQ(ExitCodeForRun(RunOutcome{}), kExitTempFail);
}

TEST(ExitCodesTest, InterruptIs130) {
  RunOutcome outcome;
  outcome.code = grpc::StatusCode::CANCELLED;
  outcome.interrupted = true;
  EXPECT_EQ(ExitCodeForRun(outcome), kExitInterrupted);
}

TEST(ExitCodesTest, TheNumbersAreSysexits) {
  EXPECT_EQ(kExitUsage, 64);         // EX_USAGE
  EXPECT_EQ(kExitDataError, 65);     // EX_DATAERR
  EXPECT_EQ(kExitUnavailable, 69);   // EX_UNAVAILABLE
  EXPECT_EQ(kExitSoftware, 70);      // EX_SOFTWARE
  EXPECT_EQ(kExitCantCreate, 73);    // EX_CANTCREAT
  EXPECT_EQ(kExitTempFail, 75);      // EX_TEMPFAIL
  EXPECT_EQ(kExitNoPermission, 77);  // EX_NOPERM
  EXPECT_EQ(kExitInterrupted, 130);  // 128 + SIGINT
}

TEST(ExitCodesTest, StatusMapping) {
  using grpc::StatusCode;
  EXPECT_EQ(ExitCodeForStatus(grpc::Status::OK), kExitOk);
  const std::pair<StatusCode, int> kExpected[] = {
      {StatusCode::INVALID_ARGUMENT, kExitDataError},
      {StatusCode::NOT_FOUND, kExitDataError},
      {StatusCode::OUT_OF_RANGE, kExitDataError},
      {StatusCode::ALREADY_EXISTS, kExitDataError},
      {StatusCode::UNAVAILABLE, kExitUnavailable},
      {StatusCode::FAILED_PRECONDITION, kExitUnavailable},
      {StatusCode::UNIMPLEMENTED, kExitUnavailable},
      {StatusCode::RESOURCE_EXHAUSTED, kExitTempFail},
      {StatusCode::DEADLINE_EXCEEDED, kExitTempFail},
      {StatusCode::ABORTED, kExitTempFail},
      {StatusCode::CANCELLED, kExitTempFail},
      {StatusCode::PERMISSION_DENIED, kExitNoPermission},
      {StatusCode::UNAUTHENTICATED, kExitNoPermission},
      {StatusCode::INTERNAL, kExitSoftware},
      {StatusCode::UNKNOWN, kExitSoftware},
      {StatusCode::DATA_LOSS, kExitSoftware}};
  for (const auto& [code, exit] : kExpected)
    EXPECT_EQ(ExitCodeForStatus(grpc::Status(code, "x")), exit) << StatusCodeName(code);
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
  for (std::string_view code :
       {"  0 ", "  1 ", "  64 ", "  65 ", "  69 ", "  70 ", "  73 ", "  75 ", "  77 ", "  130 "}) {
    EXPECT_NE(help.find(code), std::string_view::npos) << code;
  }
}

}  // namespace
}  // namespace ablation::client
