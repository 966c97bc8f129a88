#include "server/worker/library_choice.h"

#include <vector>

#include "common/stats.h"
#include "kernels/cublas/cublas_lt.h"
#include "kernels/cublas/lt_names.h"
#include "server/worker/diagnostics.h"
#include "server/worker/launch.h"

namespace ablation::worker {

namespace k = ::ablation::kernels;
namespace apb = ::ablation::v1;
namespace wpb = ::ablation::worker::v1;

namespace {

std::string Key(const std::string& variant, const k::Problem& p) {
  return variant + " " + std::string(k::ToString(p.dtype)) + " " + std::to_string(p.m) + "x" +
         std::to_string(p.n) + "x" + std::to_string(p.k);
}

std::string Key(const Ready& r) { return Key(r.variant->name, r.problem); }

void FillAlgo(const k::LtAlgoConfig& c, apb::LibraryAlgo* out) {
  out->set_library_algo_id(c.algo_id);
  out->set_library_tile(k::LtTileName(c.tile));
  out->set_library_stages(k::LtStagesName(c.stages));
  out->set_library_split_k(c.split_k);
  out->set_library_reduction(int32_t(c.reduction));
  out->set_library_swizzle(int32_t(c.swizzle));
  out->set_library_custom(int32_t(c.custom));
  out->set_library_cluster(k::LtClusterName(c.cluster));
  out->set_library_config(c.Describe());
}

/// Events around each candidate's timed launch, made once per tuning.
class CandidateEvents {
 public:
  ~CandidateEvents() {
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
  }
  std::string Make(Device& d, size_t n) {
    events_.resize(2 * n, nullptr);
    for (cudaEvent_t& e : events_)
      if (std::string err = d.Check(cudaEventCreate(&e), "creating the tuning's events");
          !err.empty())
        return err;
    return "";
  }
  cudaEvent_t start(size_t i) const { return events_[2 * i]; }
  cudaEvent_t stop(size_t i) const { return events_[2 * i + 1]; }

 private:
  std::vector<cudaEvent_t> events_;
};

/// One launch of candidate i, timed when `timed` (after an L2 flush, between its events). A
/// candidate the heuristic offered may still refuse the launch: its error is recorded in
/// *refused and it is left out; only a CUDA error that ends the process is returned.
std::string LaunchCandidate(Device& d, const Ready& r, const CandidateEvents& ev, size_t i,
                            bool timed, const k::GemmArgs& args, std::string* refused) {
  std::string err;
  if (timed) {
    err = d.FlushL2("flushing the L2 before a candidate");
    if (err.empty()) err = d.Check(cudaEventRecord(ev.start(i), d.stream), "recording an event");
    if (!err.empty()) return err;
  }
  if (std::string e = LaunchChecked(d, r, args); !e.empty()) {
    *refused = e;
    return d.fatal ? e : "";
  }
  return timed ? d.Check(cudaEventRecord(ev.stop(i), d.stream), "recording an event") : "";
}

/// Each candidate once per round, in the heuristic's order, two untimed rounds first (module
/// loading, a kernel's first use); per candidate the median of its rounds.
std::string TimeCandidates(Device& d, const Ready& r, const std::vector<k::LtCandidate>& candidates,
                           k::GemmArgs args, wpb::LibraryTuning* out) {
  const size_t n = candidates.size();
  CandidateEvents ev;
  if (std::string e = ev.Make(d, n); !e.empty()) return e;
  std::vector<std::vector<double>> ms(n);
  std::vector<std::string> refused(n);
  for (int round = -2; round < kTuningLaunches; ++round) {
    for (size_t i = 0; i < n; ++i) {
      if (!refused[i].empty()) continue;
      args.library_algo = candidates[i].algo.data();
      if (std::string e = LaunchCandidate(d, r, ev, i, round >= 0, args, &refused[i]); !e.empty())
        return e;
    }
    if (std::string e = d.Check(cudaStreamSynchronize(d.stream), "timing the candidates");
        !e.empty())
      return e;
    for (size_t i = 0; i < n && round >= 0; ++i) {
      float t = 0;
      if (!refused[i].empty()) continue;
      if (std::string e = d.Check(cudaEventElapsedTime(&t, ev.start(i), ev.stop(i)),
                                  "reading a candidate's time");
          !e.empty())
        return e;
      ms[i].push_back(double(t));
    }
  }
  out->set_launches(kTuningLaunches);
  int chosen = -1;
  for (size_t i = 0; i < n; ++i) {
    wpb::LibraryTuning::Candidate* c = out->add_candidates();
    FillAlgo(candidates[i].config, c->mutable_algo());
    c->mutable_algo()->set_library_rank(int32_t(i));
    c->set_algo_data(candidates[i].algo);
    if (!refused[i].empty()) {
      c->set_error(refused[i]);
      continue;
    }
    c->set_median_ms(common::Median(ms[i]));
    if (chosen < 0 || c->median_ms() < out->candidates(chosen).median_ms()) chosen = int(i);
  }
  if (chosen < 0) return r.variant->name + ": every candidate of the heuristic failed to launch";
  out->set_chosen(chosen);
  return "";
}

}  // namespace

std::string EnsureChosenAlgo(Device& d, Resident& res,
                             const google::protobuf::RepeatedPtrField<wpb::LibraryChoice>* stored,
                             const k::GemmArgs& args, Ready* r, wpb::LibraryTuning* tuning) {
  const std::string key = Key(*r);
  if (stored) {
    for (const wpb::LibraryChoice& c : *stored) {
      if (c.variant() != r->variant->name) continue;
      if (c.algo().size() != k::kLtAlgoBytes)
        return r->variant->name + ": the stored algorithm has " + std::to_string(c.algo().size()) +
               " bytes, not " + std::to_string(k::kLtAlgoBytes);
      r->library_algo = std::make_shared<const std::string>(c.algo());
      res.library_algos[key] = r->library_algo;
      return "";
    }
  }
  if (auto it = res.library_algos.find(key); it != res.library_algos.end()) {
    r->library_algo = it->second;
    return "";
  }
  std::vector<k::LtCandidate> candidates;
  if (std::string why = k::LtCandidates(args, &candidates); !why.empty())
    return r->variant->name + ": " + why;
  wpb::LibraryTuning local;
  wpb::LibraryTuning* out = tuning ? tuning : &local;
  out->Clear();
  if (std::string e = TimeCandidates(d, *r, candidates, args, out); !e.empty()) return e;
  r->library_algo = std::make_shared<const std::string>(out->candidates(out->chosen()).algo_data());
  res.library_algos[key] = r->library_algo;
  Log("%s: chose the heuristic's candidate %d of %d (%s): %.4f ms against %.4f ms for its first",
      key.c_str(), out->chosen(), out->candidates_size(),
      out->candidates(out->chosen()).algo().library_config().c_str(),
      out->candidates(out->chosen()).median_ms(), out->candidates(0).median_ms());
  return "";
}

std::string HeldLibraryAlgo(const Resident& res, const std::string& variant,
                            const k::Problem& problem) {
  auto it = res.library_algos.find(Key(variant, problem));
  return it == res.library_algos.end() || !it->second ? "" : *it->second;
}

void DescribeLibraryAlgo(const Ready& r, const k::GemmArgs& args, apb::LibraryAlgo* out) {
  if (r.variant->family != "cublas") return;
  std::vector<k::LtCandidate> candidates;
  const std::string none = k::LtCandidates(args, &candidates);
  if (!k::LaunchesChosenAlgo(*r.variant)) {
    if (candidates.empty()) {
      out->set_library_pick("heuristic (cublasGemmEx: " + none + ")");
      return;
    }
    FillAlgo(candidates.front().config, out);
    out->set_library_pick("heuristic");
    out->set_library_rank(0);
    out->set_library_candidates(int32_t(candidates.size()));
    return;
  }
  if (!r.library_algo) return;
  FillAlgo(k::LtConfigOf(*r.library_algo), out);
  out->set_library_candidates(int32_t(candidates.size()));
  out->set_library_pick("best of " + std::to_string(candidates.size()) + " timed");
  for (size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].algo == *r.library_algo) out->set_library_rank(int32_t(i));
}

}  // namespace ablation::worker
