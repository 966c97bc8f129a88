// The chosen algorithms of the library baselines (cublas_<dtype>_best, kernels/cublas/cublas_lt.h)
// as a run sees them: the worker times the heuristic's candidates once per device, library
// version and problem, and every later window launches that choice, which this keeps. The
// measurement step asks it for what to send with a window and hands it what a window chose; the
// run gives it the store.
#pragma once

#include <optional>
#include <string>

#include "ablation/v1/worker.pb.h"
#include "db/store.h"
#include "kernels/common/problem.h"

namespace ablation::core {

class LibraryChoices {
 public:
  virtual ~LibraryChoices() = default;
  /// The choice kept for `variant` at `problem`, if any.
  virtual std::optional<worker::v1::LibraryChoice> Find(const std::string& variant,
                                                        const kernels::Problem& problem) = 0;
  /// What a window chose (the timing behind it kept with it); the first choice for a key stays.
  virtual void Keep(const std::string& variant, const kernels::Problem& problem,
                    const worker::v1::LibraryTuning& tuning) = 0;
};

/// The choices of one device and library version, in the daemon's store.
class StoredLibraryChoices : public LibraryChoices {
 public:
  StoredLibraryChoices(db::Store* store, std::string device_uuid, std::string library_version,
                       int64_t run_id)
      : store_(store),
        uuid_(std::move(device_uuid)),
        version_(std::move(library_version)),
        run_id_(run_id) {}

  std::optional<worker::v1::LibraryChoice> Find(const std::string& variant,
                                                const kernels::Problem& problem) override;
  void Keep(const std::string& variant, const kernels::Problem& problem,
            const worker::v1::LibraryTuning& tuning) override;

 private:
  db::LibraryChoiceRecord Key(const std::string& variant, const kernels::Problem& problem) const;

  db::Store* store_;
  std::string uuid_, version_;
  int64_t run_id_;
};

}  // namespace ablation::core
