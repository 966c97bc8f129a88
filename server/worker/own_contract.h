// A user kernel of its own contract (kernels/user/contract.h) in the worker: its tensors in one
// device arena, each between canary bytes, inputs filled on the device from a seed, outputs
// poisoned; the timed launches of its entry on the timing arena (fresh inputs per batch through
// Refresh), and its verification: the entry and the reference entry on two arenas of the same
// values, then every output compared within the manifest's tolerance and every byte the entry
// must not write (inputs, canaries, the gaps between buffers) checked against what was there.
#pragma once

#include <memory>
#include <string>

#include "kernels/registry.h"
#include "kernels/user/contract_plan.h"
#include "kernels/user/manifest.h"

namespace ablation::worker {

/// The largest arena verified: its bytes are held three times on the host (before, the entry's,
/// the reference's).
inline constexpr int64_t kMaxVerifiedArenaBytes = int64_t(8) << 30;

/// A failed check in the user's words: its detail, then how many output elements were outside
/// the tolerance ("y[3][17] = 0.25, the reference 0.5 (tolerance 0.006) (12 of 4096 output
/// elements outside the tolerance)").
std::string OwnCheckText(const kernels::OwnCheck& check);

class OwnKernel {
 public:
  /// `entry` and `reference`: the build's cudaKernel_t of the two entries.
  OwnKernel(std::shared_ptr<const kernels::user::Manifest> manifest, kernels::user::KnobSet knobs,
            const void* entry, const void* reference);
  ~OwnKernel();
  OwnKernel(const OwnKernel&) = delete;
  OwnKernel& operator=(const OwnKernel&) = delete;

  /// One launch at args.problem on args.stream, on the two timing arenas in turn (made and
  /// filled at the first launch of a problem). "" or what failed.
  std::string Launch(const kernels::GemmArgs& args);
  /// Fresh values into the timing arena's inputs, enqueued on `stream`.
  std::string Refresh(uint64_t seed, void* stream);
  /// The entry against the reference at `p` on inputs from `seed`. "" and *out, or why it could
  /// not be checked (the reference's own failures start "reference: ").
  std::string Verify(const kernels::Problem& p, void* stream, uint64_t seed,
                     kernels::OwnCheck* out);

  /// Behind a batch of timed launches on `stream` (one per window: measure.cc): the timing
  /// arena as the last launch left it kept aside, and the reference run on a copy of the same
  /// inputs (nothing for a contract
  /// with an inout tensor, whose value after many launches no single reference launch gives).
  std::string EnqueueTimedCheck(void* stream);
  /// Waits for the check enqueued last and compares: the outputs within the tolerance, the
  /// canaries as written. "" with *out (passed where no check was enqueued), or why not.
  std::string JudgeTimedCheck(kernels::OwnCheck* out);

  struct Arena;

 private:
  /// The arena's sizes, buffers, launches and argument block, allocated; nothing written.
  std::string Layout(const kernels::Problem& p, Arena* out);
  std::string Poison(Arena& a, void* stream);
  std::string Prepare(const kernels::Problem& p, uint64_t seed, void* stream, Arena* out);
  std::string FillInputs(Arena& a, uint64_t seed, void* stream);
  std::string LaunchOn(const Arena& a, bool reference, void* stream);

  std::shared_ptr<const kernels::user::Manifest> manifest_;
  kernels::user::KnobSet knobs_;
  const void* entry_;
  const void* reference_;
  int smem_opt_in_[2] = {48 * 1024, 48 * 1024};  // the entry's, the reference's
  std::unique_ptr<Arena> timing_[2];             // the timed launches', in turn (from two seeds)
  int last_ = 1;                                 // the arena of the last timed launch
  std::unique_ptr<Arena> kept_, checked_;  // a timed launch's arena, and the reference's on it
  void* check_done_ = nullptr;             // cudaEvent_t after the check's work
  bool checking_ = false;                  // a check is enqueued and not judged yet
};

}  // namespace ablation::worker
