#include "server/protocol/framing.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "ablation/v1/worker.pb.h"

namespace ablation::worker {
namespace {

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    r = fds[0];
    w = fds[1];
  }
  ~Pipe() {
    CloseWrite();
    if (r >= 0) ::close(r);
  }
  void CloseWrite() {
    if (w >= 0) ::close(w);
    w = -1;
  }
  void Raw(const std::string& s) { ASSERT_EQ(::write(w, s.data(), s.size()), ssize_t(s.size())); }
};

std::string Header(uint32_t len) {
  return std::string{char(len & 0xff), char((len >> 8) & 0xff), char((len >> 16) & 0xff),
                     char((len >> 24) & 0xff)};
}

TEST(Ipc, SeveralMessagesRoundTripThenEof) {
  Pipe p;
  v1::WorkerReply hello;
  hello.mutable_hello()->set_device_present(false);
  hello.mutable_hello()->set_no_device_reason("no CUDA device: test");
  hello.mutable_hello()->set_pid(42);
  v1::WorkerReply measure;
  measure.mutable_measure()->set_task_id(7);
  measure.mutable_measure()->set_ok(true);
  // Large enough that the pipe's buffer fills: the writer must run on its own thread.
  auto* member = measure.mutable_measure()->add_members();
  for (int i = 0; i < 50000; ++i) member->add_sample_ms(0.001 * i);
  member->mutable_occupancy()->set_limiter("registers");
  v1::WorkerReply empty;  // zero-length body
  v1::WorkerReply verify;
  verify.mutable_verify()->set_variant("abl_L0_R1_bl0_s1_sw1");
  verify.mutable_verify()->set_passed(true);

  const std::vector<v1::WorkerReply> sent = {hello, measure, empty, verify};
  std::thread writer([&] {
    for (const auto& m : sent) EXPECT_EQ(protocol::WriteMessage(p.w, m), "");
    p.CloseWrite();
  });
  for (const auto& want : sent) {
    v1::WorkerReply got;
    std::string err;
    ASSERT_EQ(protocol::ReadMessage(p.r, &got, &err), protocol::ReadStatus::kOk) << err;
    EXPECT_EQ(got.SerializeAsString(), want.SerializeAsString());
  }
  writer.join();
  v1::WorkerReply after;
  std::string err;
  EXPECT_EQ(protocol::ReadMessage(p.r, &after, &err), protocol::ReadStatus::kEof);
}

TEST(Ipc, TruncatedHeaderIsAnError) {
  Pipe p;
  p.Raw(std::string("\x05\x00", 2));
  p.CloseWrite();
  v1::WorkerRequest m;
  std::string err;
  EXPECT_EQ(protocol::ReadMessage(p.r, &m, &err), protocol::ReadStatus::kError);
  EXPECT_EQ(err, "truncated frame header");
}

TEST(Ipc, TruncatedBodyIsAnError) {
  Pipe p;
  p.Raw(Header(100) + std::string(10, 'x'));
  p.CloseWrite();
  v1::WorkerRequest m;
  std::string err;
  EXPECT_EQ(protocol::ReadMessage(p.r, &m, &err), protocol::ReadStatus::kError);
  EXPECT_EQ(err, "truncated frame body");
}

TEST(Ipc, OversizedLengthIsRefusedBeforeAllocating) {
  Pipe p;
  p.Raw(Header(0xffffffffu));
  v1::WorkerRequest m;
  std::string err;
  EXPECT_EQ(protocol::ReadMessage(p.r, &m, &err), protocol::ReadStatus::kError);
  EXPECT_EQ(err, "frame too large: 4294967295");
}

TEST(Ipc, OversizedMessageIsNotWritten) {
  Pipe p;
  v1::WorkerReply big;
  big.mutable_hello()->set_no_device_reason(std::string(protocol::kMaxMessageBytes + 1, 'x'));
  std::string err = protocol::WriteMessage(p.w, big);
  EXPECT_NE(err.find("message too large"), std::string::npos) << err;
}

TEST(Ipc, MalformedBodyIsAnError) {
  Pipe p;
  // Tag 0 (field number 0) is never valid protobuf.
  p.Raw(Header(2) + std::string("\x00\x01", 2));
  v1::WorkerRequest m;
  std::string err;
  EXPECT_EQ(protocol::ReadMessage(p.r, &m, &err), protocol::ReadStatus::kError);
  EXPECT_EQ(err, "malformed message");
}

TEST(Ipc, ClosedReaderIsAWriteError) {
  Pipe p;
  ::close(p.r);
  p.r = -1;
  signal(SIGPIPE, SIG_IGN);
  v1::WorkerRequest m;
  m.mutable_measure()->add_variants("x");
  std::string err = protocol::WriteMessage(p.w, m);
  EXPECT_NE(err.find("write:"), std::string::npos) << err;
}

}  // namespace
}  // namespace ablation::worker
