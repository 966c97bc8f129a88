// What the report looks up in a run: its measurements by variant, dtype and shape, and what the
// daemon's variant list says of a variant (its tile, and which variant is the cuBLAS of a dtype).
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "ablation/v1/ablation.pb.h"

namespace ablation::client::report {

namespace v1 = ::ablation::v1;

class RunIndex {
 public:
  RunIndex(const v1::GetRunResponse& run, const std::vector<v1::Variant>& variants);

  // The measurement of a variant in a dtype at a shape; of a repeated one, the successful one.
  const v1::Measurement* Find(const std::string& variant, const std::string& dtype,
                              const v1::Shape& shape) const;
  // The fastest successful measurement of any of `variants` (the first of equals).
  const v1::Measurement* Fastest(const std::vector<std::string>& variants, const std::string& dtype,
                                 const v1::Shape& shape) const;
  // The measurements of the run (any status) that are of a (variant, dtype) in `keys`.
  int Count(const std::vector<std::pair<std::string, std::string>>& keys) const;
  // The shapes at which the run measured a (variant, dtype) of `keys`.
  std::vector<v1::Shape> ShapesOf(
      const std::vector<std::pair<std::string, std::string>>& keys) const;
  // 4096^3 when the run has it, else its most frequent shape.
  v1::Shape ReferenceShape() const;

  // "128x128x32", the variant's tile as the daemon lists it; "" for one without (cuBLAS).
  std::string Tile(const std::string& variant) const;
  // The variant of the cuBLAS family that takes `dtype`, the first listed; "" if none.
  std::string Cublas(const std::string& dtype) const;

  const std::vector<const v1::Measurement*>& all() const { return all_; }

 private:
  using Key = std::tuple<std::string, std::string, std::int64_t, std::int64_t, std::int64_t>;
  std::map<Key, const v1::Measurement*> by_key_;
  std::vector<const v1::Measurement*> all_;
  std::map<std::string, const v1::Variant*> variants_;
  std::vector<const v1::Variant*> cublas_;
};

v1::Shape MakeShape(std::int64_t m, std::int64_t n, std::int64_t k);
bool SameShape(const v1::Shape& a, const v1::Shape& b);

}  // namespace ablation::client::report
