#include "server/worker/variant_lookup.h"

#include <optional>

#include "server/worker/diagnostics.h"

namespace ablation::worker {

namespace k = ::ablation::kernels;

std::string Resolve(const k::Registry& registry, const std::string& name,
                    const std::string& dtype_name, const ::ablation::v1::Shape& shape, Ready* out) {
  const k::Variant* v = registry.Find(name);
  if (v == nullptr) return "unknown variant \"" + name + "\"";
  std::optional<k::DType> dtype = k::ParseDType(dtype_name);
  if (!dtype) return "unknown dtype \"" + dtype_name + "\"";
  if (!v->Supports(*dtype)) {
    return "variant " + name + " does not support dtype " + dtype_name;
  }
  if (shape.m() <= 0 || shape.n() <= 0 || shape.k() <= 0) {
    return "invalid shape " + ShapeText(shape) + ": m, n and k must be positive";
  }
  k::Problem p{shape.m(), shape.n(), shape.k(), *dtype};
  if (v->can_implement) {
    std::string why = v->can_implement(p);
    if (!why.empty()) {
      return "variant " + name + " cannot run " + dtype_name + " " + ShapeText(shape) + ": " + why;
    }
  }
  if (v->launch == nullptr) return "variant " + name + " has no launcher in this build";
  out->variant = v;
  out->problem = p;
  return "";
}

}  // namespace ablation::worker
