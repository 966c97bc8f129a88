#include "server/worker/l2_rotation.h"

namespace ablation::worker {

namespace k = ::ablation::kernels;

std::string MakeInputSets(ResidentInputs& inputs, const Ready& r, const k::GemmArgs& base,
                          const protocol::SamplingOptions& o, L2Plan* plan,
                          std::vector<k::GemmArgs>* sets, bool* reused) {
  std::vector<InputSet> pointers;
  const bool nk = r.variant->b_layout == k::BLayout::kNK;
  std::string err = inputs.RotationSets(o.hot_l2, o.flush_l2, nk, plan, &pointers, reused);
  if (!err.empty()) return err;
  sets->clear();
  for (const InputSet& s : pointers) {
    k::GemmArgs args = base;
    args.a = s.a;
    args.b = s.b;
    sets->push_back(args);
  }
  return "";
}

}  // namespace ablation::worker
