#include "server/core/userkernels/task_builds.h"

namespace ablation::core {

void AddUserCode(const kernels::Variant& variant,
                 google::protobuf::RepeatedPtrField<worker::v1::UserCode>* out) {
  if (!variant.code) return;
  for (const worker::v1::UserCode& c : *out)
    if (c.variant() == variant.name) return;
  worker::v1::UserCode* c = out->Add();
  c->set_variant(variant.name);
  c->set_manifest(variant.code->manifest);
  c->set_cubin(variant.code->cubin());
  c->set_cubin_sha256(variant.code->cubin_sha256);
  c->set_build_id(variant.code->build_id);
}

void AddUserCode(const kernels::Registry* registry, const std::string& name,
                 google::protobuf::RepeatedPtrField<worker::v1::UserCode>* out) {
  if (registry == nullptr || name.empty()) return;
  if (const kernels::Variant* v = registry->Find(name)) AddUserCode(*v, out);
}

}  // namespace ablation::core
