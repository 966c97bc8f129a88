#include "client/report/run_index.h"

#include <algorithm>

namespace ablation::client::report {
namespace {

// The family ListVariants gives cuBLAS entries (kernels/registry.h).
constexpr const char* kCublasFamily = "cublas";

bool Has(const std::vector<std::pair<std::string, std::string>>& keys, const v1::Measurement& m) {
  return std::find(keys.begin(), keys.end(), std::pair(m.variant(), m.dtype())) != keys.end();
}

}  // namespace

v1::Shape MakeShape(std::int64_t m, std::int64_t n, std::int64_t k) {
  v1::Shape s;
  s.set_m(m);
  s.set_n(n);
  s.set_k(k);
  return s;
}

bool SameShape(const v1::Shape& a, const v1::Shape& b) {
  return a.m() == b.m() && a.n() == b.n() && a.k() == b.k();
}

RunIndex::RunIndex(const v1::GetRunResponse& run, const std::vector<v1::Variant>& variants) {
  for (const v1::Measurement& m : run.measurements()) {
    // A repeated key keeps the successful one (a plan never repeats one, but be safe).
    const Key key{m.variant(), m.dtype(), m.shape().m(), m.shape().n(), m.shape().k()};
    auto [it, inserted] = by_key_.emplace(key, &m);
    if (!inserted && it->second->status() != v1::MEASUREMENT_STATUS_OK) it->second = &m;
    all_.push_back(&m);
  }
  for (const v1::Variant& v : variants) {
    variants_.emplace(v.name(), &v);
    if (v.family() == kCublasFamily) cublas_.push_back(&v);
  }
}

const v1::Measurement* RunIndex::Find(const std::string& variant, const std::string& dtype,
                                      const v1::Shape& s) const {
  auto it = by_key_.find(Key{variant, dtype, s.m(), s.n(), s.k()});
  return it == by_key_.end() ? nullptr : it->second;
}

const v1::Measurement* RunIndex::Fastest(const std::vector<std::string>& variants,
                                         const std::string& dtype, const v1::Shape& shape) const {
  const v1::Measurement* best = nullptr;
  for (const v1::Measurement* m : all_) {
    if (m->status() != v1::MEASUREMENT_STATUS_OK || m->dtype() != dtype ||
        !SameShape(m->shape(), shape))
      continue;
    if (std::find(variants.begin(), variants.end(), m->variant()) == variants.end()) continue;
    if (!best || m->tflops() > best->tflops()) best = m;
  }
  return best;
}

int RunIndex::Count(const std::vector<std::pair<std::string, std::string>>& keys) const {
  return int(std::count_if(all_.begin(), all_.end(),
                           [&](const v1::Measurement* m) { return Has(keys, *m); }));
}

std::vector<v1::Shape> RunIndex::ShapesOf(
    const std::vector<std::pair<std::string, std::string>>& keys) const {
  std::vector<v1::Shape> shapes;
  for (const v1::Measurement* m : all_) {
    if (!Has(keys, *m)) continue;
    if (std::none_of(shapes.begin(), shapes.end(),
                     [&](const v1::Shape& s) { return SameShape(s, m->shape()); }))
      shapes.push_back(m->shape());
  }
  return shapes;
}

v1::Shape RunIndex::ReferenceShape() const {
  const v1::Shape preferred = MakeShape(4096, 4096, 4096);
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, int> counts;
  for (const v1::Measurement* m : all_) {
    if (SameShape(m->shape(), preferred)) return preferred;
    ++counts[{m->shape().m(), m->shape().n(), m->shape().k()}];
  }
  if (counts.empty()) return preferred;
  auto best = std::max_element(counts.begin(), counts.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  return MakeShape(std::get<0>(best->first), std::get<1>(best->first), std::get<2>(best->first));
}

std::string RunIndex::Tile(const std::string& variant) const {
  auto it = variants_.find(variant);
  if (it == variants_.end()) return "";
  const v1::Variant& v = *it->second;
  if (v.tile_m() <= 0 || v.tile_n() <= 0 || v.tile_k() <= 0) return "";
  return std::to_string(v.tile_m()) + "x" + std::to_string(v.tile_n()) + "x" +
         std::to_string(v.tile_k());
}

std::string RunIndex::Cublas(const std::string& dtype) const {
  for (const v1::Variant* v : cublas_)
    if (std::find(v->dtypes().begin(), v->dtypes().end(), dtype) != v->dtypes().end())
      return v->name();
  return "";
}

}  // namespace ablation::client::report
