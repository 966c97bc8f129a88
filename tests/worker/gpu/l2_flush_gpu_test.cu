// The cold sample's L2 flush on a GPU (server/worker/l2_flush.h): it leaves the L2 cold (a read of
// half an L2 of data after it runs at memory's speed, not at the L2's), and it leaves the read
// nothing to write back (the read is not slower after it than after writes alone, the flush of
// nvbench and Triton, which may leave dirty lines behind). Prints the three medians: what the
// discard is worth on the device. Skips without a device.
#include "server/worker/l2_flush.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/stats.h"
#include "kernels/common/buffers.h"
#include "kernels/testing/gpu_util.h"

namespace ablation::worker {
namespace {

// Reads every 16-byte word of `data` once; the XOR of all of them is written only if it equals a
// value no fill makes, so no load can be dropped and the kernel writes nothing.
__global__ void ReadAll(const uint4* data, size_t words, unsigned* sink) {
  unsigned x = 0;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < words; i += stride) {
    const uint4 v = data[i];
    x ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (x == 0x9e3779b9u) *sink = x;
}

class L2FlushGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = kernels::testing::NoDeviceReason(); !why.empty()) GTEST_SKIP() << why;
    ASSERT_EQ(cudaGetDeviceProperties(&prop_, 0), cudaSuccess);
    ASSERT_GT(prop_.l2CacheSize, 0);
    ASSERT_GE(prop_.major, 8) << "discard.global.L2 needs sm_80 or later";
    ASSERT_EQ(cudaStreamCreate(&stream_), cudaSuccess);
  }
  void TearDown() override {
    if (stream_) cudaStreamDestroy(stream_);
  }

  cudaDeviceProp prop_{};
  cudaStream_t stream_ = nullptr;
};

TEST_F(L2FlushGpu, LeavesTheL2ColdAndNothingToWriteBack) {
  const size_t l2 = size_t(prop_.l2CacheSize);
  const size_t data_bytes = (l2 / 2) & ~size_t(4095);  // fits the L2: hot reads come from it
  kernels::DeviceBuffer data, flush, sink;
  ASSERT_EQ(data.Allocate(data_bytes), "");
  ASSERT_EQ(flush.Allocate(2 * l2), "");  // as the worker's (server/worker/device.cc)
  ASSERT_EQ(sink.Allocate(sizeof(unsigned)), "");
  ASSERT_EQ(cudaMemset(data.data(), 0x5a, data_bytes), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  cudaEvent_t start, stop;
  ASSERT_EQ(cudaEventCreate(&start), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&stop), cudaSuccess);
  const unsigned blocks = unsigned(prop_.multiProcessorCount) * 8;
  const size_t words = data_bytes / sizeof(uint4);
  auto read = [&] {
    ReadAll<<<blocks, 256, 0, stream_>>>(static_cast<const uint4*>(data.data()), words,
                                         static_cast<unsigned*>(sink.data()));
  };
  enum Mode { kHot, kWritesAlone, kFlushed };
  std::vector<double> ms[3];
  unsigned value = 0;
  // Interleaved, so that a drift of the clock or the temperature falls on all three alike.
  for (int rep = 0; rep < 41; ++rep) {
    for (Mode mode : {kHot, kWritesAlone, kFlushed}) {
      ++value;
      if (mode == kHot) read();
      if (mode == kWritesAlone) {
        ASSERT_EQ(cudaMemsetAsync(flush.data(), int(value & 0xffu), flush.bytes(), stream_),
                  cudaSuccess);
      }
      if (mode == kFlushed) {
        ASSERT_EQ(EnqueueL2Flush(stream_, flush.data(), flush.bytes(), value), "");
      }
      ASSERT_EQ(cudaEventRecord(start, stream_), cudaSuccess);
      read();
      ASSERT_EQ(cudaEventRecord(stop, stream_), cudaSuccess);
      ASSERT_EQ(cudaEventSynchronize(stop), cudaSuccess);
      float t = 0;
      ASSERT_EQ(cudaEventElapsedTime(&t, start, stop), cudaSuccess);
      if (rep > 0) ms[mode].push_back(t);  // the first round warms the code and the clocks
    }
  }
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);

  const double hot = common::Median(ms[kHot]), writes = common::Median(ms[kWritesAlone]),
               flushed = common::Median(ms[kFlushed]);
  auto gbs = [&](double t) { return double(data_bytes) / (t * 1e-3) / 1e9; };
  std::printf(
      "[ L2 flush ] %s, L2 %.1f MB, a read of %.1f MB (medians of 40): hot %.2f us (%.0f GB/s), "
      "after writes alone %.2f us (%.0f GB/s), after writes and discard %.2f us (%.0f GB/s)\n",
      prop_.name, l2 / 1e6, data_bytes / 1e6, hot * 1e3, gbs(hot), writes * 1e3, gbs(writes),
      flushed * 1e3, gbs(flushed));
  // Cold: the read comes from memory. Hot it comes from the L2, at well over memory's speed.
  EXPECT_LT(hot, 0.9 * flushed) << "the flushed read is as fast as a hot one: the L2 kept the data";
  // Nothing to write back: not slower than after the writes alone (3% for noise).
  EXPECT_LE(flushed, 1.03 * writes) << "the read after the discard is slower than after the "
                                       "writes alone";
}

}  // namespace
}  // namespace ablation::worker
