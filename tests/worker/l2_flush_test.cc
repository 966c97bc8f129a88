// The L2 flush's refusals that need no device: a buffer the discard cannot cover line by line is
// named, and a buffer too small to hold a line asks for nothing (no CUDA call is made on either).
#include "server/worker/l2_flush.h"

#include <gtest/gtest.h>

#include <string>

namespace ablation::worker {
namespace {

bool Names(const std::string& error, const std::string& what) {
  return error.find(what) != std::string::npos;
}

TEST(L2Flush, AMisalignedBufferIsRefusedByName) {
  alignas(256) static char host[512];
  EXPECT_TRUE(Names(EnqueueL2Discard(nullptr, host + 64, 256), "not 128-byte aligned"));
  EXPECT_TRUE(Names(EnqueueL2Flush(nullptr, host + 8, 256, 1), "not 128-byte aligned"))
      << "the alignment is checked before the writes are enqueued";
}

TEST(L2Flush, NoBufferOrLessThanALineAsksForNothing) {
  alignas(256) static char host[512];
  EXPECT_EQ(EnqueueL2Discard(nullptr, nullptr, 1 << 20), "");
  EXPECT_EQ(EnqueueL2Discard(nullptr, host, 127), "");
}

}  // namespace
}  // namespace ablation::worker
