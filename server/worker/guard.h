// The checks of a guarded window: one that times a user variant, code the service did not write
// and whose figures must not be gamed. Before every batch the window's inputs get fresh values
// (ResidentInputs::Refresh, from the task's seed and the batch's number), so that no launch can
// pass off a result kept from an earlier one; in every batch one timed launch of each user
// variant, chosen at random, has its output copied right after its end event and compared on the
// device with cuBLAS on the same inputs (outside every timed interval); a launch that disagrees
// fails the window, naming the variant, and nothing of it is timed. Before the samples the same
// check runs once on the seed's inputs, synchronously, so that the check path itself is known to
// work before the timed batches rely on it.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/common/buffers.h"
#include "kernels/registry.h"
#include "server/worker/device.h"
#include "server/worker/resident_inputs.h"
#include "server/worker/sample_batch.h"
#include "server/worker/sample_plan.h"
#include "server/worker/variant_lookup.h"

namespace ablation::worker {

class WindowGuard {
 public:
  WindowGuard() = default;
  ~WindowGuard();
  WindowGuard(const WindowGuard&) = delete;
  WindowGuard& operator=(const WindowGuard&) = delete;

  /// Sets the guard up for a window whose members include user variants (Variant::code): the
  /// reference (cublas_<dtype>), the copy of the checked output, its reference output and the
  /// sums. Inactive (and "") for a window of built-in variants only. An error means the window
  /// cannot be guarded and must not be timed.
  std::string Open(Device& d, const kernels::Registry& registry,
                   const std::vector<WindowMember>& members, const ProblemInputs& in, uint64_t seed,
                   uint64_t task_id);
  bool active() const { return active_; }

  /// Once before the samples: each user variant launched on its first set, checked, waited for.
  std::string PreCheck(Device& d, const std::vector<WindowMember>& members, int* failed_member);

  /// Before the batch of samples first .. first + who.size() - 1 goes in `slot`: the inputs get
  /// the batch's fresh values (enqueued ahead of the batch's gate), and the sample to check of
  /// each user variant in the batch is drawn.
  std::string BeforeBatch(ResidentInputs& inputs, const std::vector<WindowMember>& members,
                          int64_t batch, int slot, int64_t first, const std::vector<int>& who);
  /// EnqueueBatch's after_sample for `slot`: enqueues the check of sample s where it was drawn.
  std::string AfterSample(Device& d, const std::vector<WindowMember>& members, int slot, int s);
  /// After the batch in `slot` was collected: "" when every checked launch agreed with cuBLAS,
  /// else why not, *failed_member naming whose launch it was.
  std::string Judge(const std::vector<WindowMember>& members, int slot, int* failed_member);

  /// Timed launches of members[m] whose output was checked (and agreed).
  int checked(int m) const { return m < int(checked_.size()) ? checked_[size_t(m)] : 0; }

 private:
  struct Pending {
    int member = -1;
    int sample = -1;  ///< in the batch
    int64_t g = 0;    ///< in the window
    int sums = -1;    ///< index of its sums (3 doubles) in sums_host_
  };
  /// The B the reference reads for member m's sample g (its set's, or the base inputs' in
  /// cuBLAS's layout where the layouts differ and g reads the base set); null: not checkable.
  const void* ReferenceB(const WindowMember& m, int64_t g) const;
  std::string EnqueueCheck(Device& d, const WindowMember& m, int64_t g, int sums);
  std::string Verdict(const WindowMember& m, int64_t g, int sums) const;

  bool active_ = false;
  Ready cublas_;
  kernels::Problem problem_;
  ProblemInputs base_;
  double tolerance_ = 0;
  kernels::DeviceBuffer out_copy_, ref_out_, sums_;
  double* sums_host_ = nullptr;  // pinned: kBatchSlots * members * 3, and one more set for PreCheck
  int members_ = 0;
  std::vector<std::vector<Pending>> pending_;  // by slot
  std::vector<int> checked_;                   // by member
  uint64_t seed_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace ablation::worker
