#include "kernels/registry.h"

#include <algorithm>
#include <stdexcept>

namespace ablation::kernels {

bool Variant::Supports(DType d) const {
  return std::find(dtypes.begin(), dtypes.end(), d) != dtypes.end();
}

std::string Variant::Param(std::string_view key) const {
  for (const auto& [k, value] : params)
    if (k == key) return value.Text();
  return {};
}

std::optional<int64_t> Variant::NumberParam(std::string_view key) const {
  for (const auto& [k, value] : params)
    if (k == key) return value.number();
  return std::nullopt;
}

const void* Variant::KernelAt(const Problem& p) const {
  if (kernel_at) return kernel_at(p);
  return kernel ? kernel(p.dtype) : nullptr;
}

WorkModel Variant::Work(const Problem& p) const {
  if (work) return work(p);
  WorkModel gemm;
  gemm.flops = p.Flops();
  // Its compulsory traffic: A and B read once, C written once (what a kernel that keeps every
  // reuse on chip moves; its bytes per second against the device's bandwidth say how near the
  // memory roof a small or skinny GEMM runs).
  gemm.memory_bytes =
      (double(p.m) * double(p.k) + double(p.k) * double(p.n)) * ElementBytes(p.dtype) +
      double(p.m) * double(p.n) * OutputBytes(p.dtype);
  return gemm;
}

void Registry::Add(Variant v) {
  if (v.name.empty()) throw std::logic_error("kernel registry: a variant without a name");
  if (index_.count(v.name) != 0) {
    throw std::logic_error("kernel registry: duplicate variant name '" + v.name + "'");
  }
  index_.emplace(v.name, variants_.size());
  variants_.push_back(std::move(v));
}

const Variant* Registry::Find(std::string_view canonical_name) const {
  auto it = index_.find(canonical_name);
  return it == index_.end() ? nullptr : &variants_[it->second];
}

Variant* Registry::FindMutable(std::string_view canonical_name) {
  auto it = index_.find(canonical_name);
  return it == index_.end() ? nullptr : &variants_[it->second];
}

}  // namespace ablation::kernels
