#include "kernels/names.h"

namespace ablation::kernels {

std::string AblationVariantName(const AblationConfig& c) {
  std::string name = "abl_L" + std::to_string(c.load_mode) + "_R" + std::to_string(c.read_mode) +
                     "_bl" + std::to_string(c.b_layout) + "_s" + std::to_string(c.stages) + "_sw" +
                     std::to_string(c.swizzle);
  if (c.rb == 1) name += "_rb1";
  return name;
}

std::vector<AblationConfig> AllAblationConfigs() {
  std::vector<AblationConfig> all;
  for (int l = 0; l <= 1; ++l)
    for (int r = 0; r <= 1; ++r)
      for (int b = 0; b <= 1; ++b)
        for (int s = 1; s <= 4; ++s)
          for (int w = 0; w <= 1; ++w)
            for (int rb = 0; rb <= 1; ++rb) all.push_back({l, r, b, s, w, rb});
  return all;
}

}  // namespace ablation::kernels
