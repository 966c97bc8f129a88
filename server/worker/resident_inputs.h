// The inputs a worker keeps on its device from one task to the next, so that consecutive tasks on
// one problem pay for its allocation and random fill once: A, the logical K x N B, its N x K
// transpose, the outputs, and per B layout the copies of A and B the L2 rotation reads. An entry
// is keyed by the problem (dtype, M, N, K) and the seed: the same seed gives the same values
// (FillRandom is a function of seed and index), so a reused input holds bit for bit what a fresh
// fill would. What a B layout or a reference output adds is made the first time a task wants it.
//
// Bounded: before anything is allocated, the entries other than the one a task uses are evicted,
// least recently used first, while all together would pass kResidentMemoryShare of the device's
// memory; and all of them are, whenever the problem's own inputs or its rotation would not fit
// beside them, so that the cache never changes what fits nor turns a rotation into a flush. The
// owner clears it after any failed task, a failed verification, and when the daemon asks
// (ReleaseTask: the end of a run, before a profile). No CUDA here: the device work goes through
// InputOps (cuda_input_ops.h on the device, a fake in the CPU tests).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/common/problem.h"
#include "server/worker/sample_plan.h"

namespace ablation::worker {

/// Input seeds derived from a task's seed: A and the logical K x N B get different streams of
/// random values, and every variant (and reference) sees the same logical inputs for one seed.
struct InputSeeds {
  uint64_t a;
  uint64_t b;
};
InputSeeds SeedsFor(uint64_t seed);

/// Share of the device's memory the resident inputs may hold beyond the problem in use.
inline constexpr double kResidentMemoryShare = 0.25;
/// Headroom left free when checking that a problem fits: cuBLAS and the kernels' launchers may
/// allocate a little themselves, and the driver needs some for the launch itself.
inline constexpr size_t kMemoryHeadroomBytes = 256u << 20;
/// cudaMalloc's own alignment: the rotation's copies are aligned as cudaMalloc'd inputs are, so
/// every kernel's alignment checks (16-byte vectors, cp.async) see them alike.
inline constexpr size_t kInputAlign = 256;

/// One device allocation, freed when destroyed.
class DeviceBlock {
 public:
  virtual ~DeviceBlock() = default;
  virtual void* data() const = 0;
  virtual size_t bytes() const = 0;
};

/// The device work the resident inputs need, in stream order. Each returns "" or the error text.
class InputOps {
 public:
  virtual ~InputOps() = default;
  virtual std::string MemoryInfo(size_t* free_bytes, size_t* total_bytes) = 0;
  /// A failed allocation is not yet the task's failure (the caller may evict and retry): the
  /// error is cleared and returned as is.
  virtual std::string Allocate(size_t bytes, std::unique_ptr<DeviceBlock>* out) = 0;
  virtual std::string Fill(void* dst, size_t count, kernels::DType dtype, uint64_t seed) = 0;
  virtual std::string Transpose(const void* src, void* dst, int64_t rows, int64_t cols,
                                kernels::DType dtype) = 0;
  virtual std::string Poison(void* dst, size_t count, kernels::DType dtype) = 0;
  /// Waits for the enqueued work; `what` names the step in the error.
  virtual std::string Synchronize(const std::string& what) = 0;
  /// Reports a failed step as the worker reports a device error (and finds out whether the
  /// context is still usable); returns the text.
  virtual std::string Failed(const std::string& what) = 0;
};

struct InputRequest {
  kernels::Problem problem;
  uint64_t seed = 0;
  bool need_nk = false;  ///< B as N x K too
  int outputs = 1;       ///< 2: a reference variant's output too
  /// Write the values from the seed again even when they are resident: a verification checks
  /// inputs that nothing run before it can have touched.
  bool refill = false;
};

/// The device addresses of a problem's inputs and outputs (nullptr where not asked for).
struct ProblemInputs {
  void* a = nullptr;
  void* b_kn = nullptr;
  void* b_nk = nullptr;
  void* c = nullptr;
  void* c_ref = nullptr;
  bool reused = false;  ///< nothing was allocated or filled for this request
};

/// One set the L2 rotation's samples read: A and B in the variant's layout.
struct InputSet {
  const void* a = nullptr;
  const void* b = nullptr;
};

class ResidentInputs {
 public:
  ResidentInputs(InputOps& ops, double l2_bytes);
  ~ResidentInputs();
  ResidentInputs(const ResidentInputs&) = delete;
  ResidentInputs& operator=(const ResidentInputs&) = delete;

  /// The inputs of `request`, resident from an earlier task or made now, and the problem becomes
  /// the current one. Made: checked to fit in free memory (A + B (+ B^T) + outputs + headroom),
  /// allocated, A and B filled from SeedsFor(seed), B transposed when need_nk, synchronised.
  /// Always: the outputs poisoned (NaN), so that whatever a variant does not write shows.
  std::string Prepare(const InputRequest& request, ProblemInputs* out);

  /// The L2 plan (PlanL2) of the current problem for a variant with B in layout `nk`, and the
  /// sets its samples rotate through: sets[0] the problem's own inputs, then, for a rotation, the
  /// copies, each filled from the same seeds (B^T by Transpose of the logical B). Copies that do
  /// not fit, or cannot be allocated, make the plan the flush; plan->note says why. *reused:
  /// the copies were resident (always true where none are needed).
  std::string RotationSets(bool hot_l2, bool flush_l2, bool nk, L2Plan* plan,
                           std::vector<InputSet>* sets, bool* reused);

  /// Writes new values over every input of the current problem, in the stream, without waiting:
  /// A, B (and B^T, filled on its own rather than transposed) and every rotation copy, from
  /// SeedsFor(seed). A guarded window (a user variant's) calls it before each batch, so that no
  /// launch can reuse a result computed for earlier values. The entry then no longer holds its
  /// seed's values: the next Prepare of it writes them again (and its copies').
  std::string Refresh(uint64_t seed);

  /// Frees everything. The next Prepare makes its inputs again.
  void Clear();

  size_t bytes() const;     ///< device memory held
  size_t problems() const;  ///< entries held
  uint64_t fills() const;   ///< FillRandom calls so far (tests: what was made again)
  uint64_t allocations() const;

 private:
  struct Entry;
  Entry* Find(const kernels::Problem& p, uint64_t seed);
  /// Evicts least recently used entries other than `keep` while bytes() + more would pass
  /// kResidentMemoryShare of `total`; true when it evicted any.
  bool EvictForBudget(const Entry* keep, size_t more, size_t total);
  void EvictOthers(const Entry* keep);
  /// Allocates, evicting the other entries and trying again once if that fails.
  std::string Allocate(const Entry* keep, size_t bytes, std::unique_ptr<DeviceBlock>* out);
  /// Checks that `need` more bytes fit in `free_bytes` (evicting the others and asking again
  /// where they would not); the "does not fit" error names the problem's parts.
  std::string CheckFits(const Entry* keep, const kernels::Problem& p, bool need_nk, int outputs,
                        size_t need, size_t free_bytes, size_t total_bytes);
  /// A new entry for `request`, allocated and filled (*made points at it as soon as it exists).
  std::string Make(const InputRequest& request, Entry** made);
  /// Adds what a resident entry lacks for `request` (B^T, the reference's output) and refills it
  /// when asked; *made: something was enqueued that the caller must wait for.
  std::string Extend(Entry& e, const InputRequest& request, bool* made);

  InputOps& ops_;
  double l2_bytes_;
  std::vector<std::unique_ptr<Entry>> entries_;
  Entry* current_ = nullptr;
  uint64_t clock_ = 0;
  uint64_t fills_ = 0, allocations_ = 0;
};

}  // namespace ablation::worker
