// A status's message as gRPC carries it: bounded so that a default client (8 KiB of metadata)
// can read it, cut at a line or character boundary and saying how much was withheld.
#include "server/rpc/grpc_status.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ablation::rpc {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

size_t Encoded(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += c >= 0x20 && c <= 0x7e && c != '%' ? 1 : 3;
  return n;
}

TEST(GrpcStatus, AShortMessageIsUnchanged) {
  const core::Status st(core::Code::kInvalidArgument, "manifest:3: [launch] block: not a number");
  EXPECT_EQ(ToGrpc(st).error_message(), st.message());
  EXPECT_EQ(ToGrpc(st).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST(GrpcStatus, ALongLogIsCutAtALineToFitWhatAClientReads) {
  std::string log;
  for (int i = 0; i < 2000; ++i)
    log += "kernel.cu(" + std::to_string(i) + "): error: identifier \"x\" is undefined\n";
  const std::string cut = ToGrpc(core::Status(core::Code::kInvalidArgument, log)).error_message();
  EXPECT_LE(Encoded(cut), kMaxEncodedMessage);
  EXPECT_GT(Encoded(cut), kMaxEncodedMessage / 2);
  EXPECT_THAT(cut, StartsWith("kernel.cu(0): error"));
  EXPECT_THAT(cut, HasSubstr("is undefined\n["));  // whole lines, then the note
  EXPECT_THAT(cut, EndsWith("more bytes of this message withheld: a gRPC client reads at most "
                            "8 KiB of an error]"));
  const size_t kept = cut.find("\n[") + 1;
  EXPECT_THAT(cut, HasSubstr("[" + std::to_string(log.size() - kept) + " more bytes"));
}

TEST(GrpcStatus, EscapedBytesCountThriceAndNoCharacterIsSplit) {
  std::string text;
  for (int i = 0; i < 3000; ++i) text += "\xc3\xa9%";  // é and %: 9 and 3 encoded bytes
  const std::string cut = BoundedMessage(text, 1000);
  EXPECT_LE(Encoded(cut), 1000u);
  const std::string kept = cut.substr(0, cut.find("\n["));
  EXPECT_EQ(kept.size() % 3, 0u) << "a character split in two";
}

}  // namespace
}  // namespace ablation::rpc
