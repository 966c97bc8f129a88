#include "server/worker/window_samples.h"

#include <cstddef>
#include <limits>

namespace ablation::worker {

void WindowSamples::Add(int64_t g, int member, double ms, double sm_mhz, bool dropped) {
  if (g >= int64_t(ms_.size())) {
    ms_.resize(size_t(g) + 1, 0);
    mhz_.resize(size_t(g) + 1, std::numeric_limits<double>::quiet_NaN());
    have_.resize(size_t(g) + 1, 0);
    member_.resize(size_t(g) + 1, -1);
  }
  ms_[size_t(g)] = ms;
  mhz_[size_t(g)] = sm_mhz;
  member_[size_t(g)] = member;
  have_[size_t(g)] = dropped ? 2 : 1;
  // Cycles complete in order: advance over every one now whole.
  while ((complete_ + 1) * n_ <= int64_t(have_.size())) {
    const int64_t c = complete_;
    bool whole = true, bad = false;
    for (int64_t i = c * n_; i < (c + 1) * n_; ++i) {
      whole = whole && have_[size_t(i)] != 0;
      bad = bad || have_[size_t(i)] == 2;
    }
    if (!whole) break;
    ++complete_;
    if (bad) {
      ++dropped_cycles_;
    } else {
      kept_.push_back(c);
    }
  }
}

void WindowSamples::Member(int m, std::vector<double>* ms, std::vector<double>* mhz) const {
  for (int64_t c : kept_) {
    for (size_t i = size_t(c * n_); i < size_t((c + 1) * n_); ++i) {
      if (member_[i] != m) continue;
      ms->push_back(ms_[i]);
      mhz->push_back(mhz_[i]);
      break;
    }
  }
}

}  // namespace ablation::worker
