// The samples of a measurement window as its batches come back (server/worker/measure.cc): by
// global sample index g, cycle g / members, each cycle's samples in an order of its own. A cycle
// is kept only when every one of its samples came from a batch whose gate opened in time; the
// cycles complete in order. No CUDA and no protobuf: the CPU tests drive it.
#pragma once

#include <cstdint>
#include <vector>

namespace ablation::worker {

class WindowSamples {
 public:
  explicit WindowSamples(int members) : n_(members) {}

  /// Sample g, of member `member`: its time and the SM clock around it (NaN where unusable);
  /// `dropped` when its batch's gate timed out (its whole cycle is then dropped).
  void Add(int64_t g, int member, double ms, double sm_mhz, bool dropped);

  int64_t kept_cycles() const { return int64_t(kept_.size()); }
  int64_t dropped_cycles() const { return dropped_cycles_; }

  /// Member `m`'s samples of the kept cycles, in cycle order: one a cycle, wherever the cycle's
  /// order put it (appended to *ms and *mhz).
  void Member(int m, std::vector<double>* ms, std::vector<double>* mhz) const;

 private:
  int64_t n_;
  std::vector<double> ms_, mhz_;
  std::vector<char> have_;   // 0: not yet, 1: kept, 2: from a dropped batch
  std::vector<int> member_;  // whose sample it is
  int64_t complete_ = 0;     // cycles whose every sample has come back
  std::vector<int64_t> kept_;
  int64_t dropped_cycles_ = 0;
};

}  // namespace ablation::worker
