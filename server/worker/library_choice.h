// The algorithms of the library baselines in the worker (kernels/cublas/cublas_lt.h): which
// cuBLASLt algorithm a cublas_<dtype>_best variant launches at a problem, and the words a row
// gives to what any cuBLAS variant launched. A _best variant takes the daemon's stored choice
// (MeasureTask.library_choices); without one, the worker times every candidate of the heuristic
// once, interleaved round by round so that a clock that moves meanwhile moves them all alike,
// each launch after an L2 flush, and launches the fastest from then on (the reply's
// MemberResult.tuning, which the daemon stores so that every later run launches the same one).
#pragma once

#include <string>

#include "ablation/v1/worker.pb.h"
#include "kernels/registry.h"
#include "server/worker/device.h"
#include "server/worker/resident.h"
#include "server/worker/variant_lookup.h"

namespace ablation::worker {

/// Timed launches of each candidate when choosing (their median decides).
inline constexpr int kTuningLaunches = 15;

/// Gives `r` (a variant whose LaunchesChosenAlgo) its algorithm for its problem: the task's
/// stored choice, else the one this process chose before, else timed now with `args` (the
/// problem's inputs) into *tuning. "" or why there is none (the heuristic has no candidate, every
/// candidate failed).
std::string EnsureChosenAlgo(
    Device& d, Resident& res,
    const google::protobuf::RepeatedPtrField<::ablation::worker::v1::LibraryChoice>* stored,
    const kernels::GemmArgs& args, Ready* r, ::ablation::worker::v1::LibraryTuning* tuning);

/// The algorithm this process holds for `variant` at `problem` (its stored or timed choice), or
/// "" before it has one.
std::string HeldLibraryAlgo(const Resident& res, const std::string& variant,
                            const kernels::Problem& problem);

/// What a cuBLAS variant launches at its problem: the heuristic's first candidate (or
/// cublasGemmEx where cuBLASLt has none), or the chosen one with its place in the heuristic's
/// order. Nothing for other variants.
void DescribeLibraryAlgo(const Ready& r, const kernels::GemmArgs& args,
                         ::ablation::v1::LibraryAlgo* out);

}  // namespace ablation::worker
