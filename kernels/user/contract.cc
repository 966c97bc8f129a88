// A kernel's own contract, read from its manifest (contract.h; the TOML helpers: toml_read.h).
#include <algorithm>
#include <set>

#include "kernels/user/toml_read.h"

namespace ablation::kernels::user::internal {
namespace {

// A number at `key` of `t` (an integer is taken as a number too).
std::string ReadNumber(const toml::table& t, const std::string& origin, const std::string& prefix,
                       const std::string& key, bool required, double* out) {
  const toml::node* n = t.get(key);
  if (!n) return required ? Err(origin, &t, prefix + key, "missing") : "";
  if (const auto* f = n->as_floating_point()) {
    *out = f->get();
  } else if (const auto* i = n->as_integer()) {
    *out = double(i->get());
  } else {
    return Err(origin, n, prefix + key, "expected a number");
  }
  return "";
}

// The array of tables at `key` ([[tensor]], [[scalar]]), at most `most`; null when absent.
std::string TablesAt(const toml::table& root, const std::string& origin, const std::string& key,
                     int most, const toml::array** out) {
  *out = nullptr;
  const toml::node* n = root.get(key);
  if (!n) return "";
  const auto* arr = n->as_array();
  if (!arr || !arr->is_array_of_tables())
    return Err(origin, n, key, "expected [[" + key + "]] tables");
  if (int(arr->size()) > most)
    return Err(origin, n, key, "more than " + std::to_string(most) + " " + key + "s");
  *out = arr;
  return "";
}

std::string ReadFill(const toml::table& t, const std::string& origin, const std::string& prefix,
                     Fill* out) {
  const toml::node* n = t.get("fill");
  if (!n) return "";
  const toml::table* f = n->as_table();
  if (!f)
    return Err(origin, n, prefix + "fill",
               "expected a table: { kind = \"normal\", mean = 0, std = 1 }, { kind = "
               "\"uniform\", low = -1, high = 1 } or { kind = \"integers\", low = -8, high = 8 }");
  std::string kind = "normal", err;
  if (!(err = ReadString(*f, origin, prefix + "fill.", "kind", false, &kind)).empty()) return err;
  const std::string p = prefix + "fill.";
  if (kind == "normal") {
    out->kind = Fill::Kind::kNormal;
    out->a = 0;
    out->b = 1;
    if (!(err = CheckKeys(*f, origin, p, {"kind", "mean", "std"})).empty()) return err;
    if (!(err = ReadNumber(*f, origin, p, "mean", false, &out->a)).empty()) return err;
    if (!(err = ReadNumber(*f, origin, p, "std", false, &out->b)).empty()) return err;
    if (!(out->b > 0)) return Err(origin, f->get("std"), p + "std", "must be above 0");
    return "";
  }
  if (kind != "uniform" && kind != "integers")
    return Err(origin, f->get("kind"), p + "kind", "'" + kind + "': normal, uniform or integers");
  out->kind = kind == "uniform" ? Fill::Kind::kUniform : Fill::Kind::kIntegers;
  if (!(err = CheckKeys(*f, origin, p, {"kind", "low", "high"})).empty()) return err;
  if (!(err = ReadNumber(*f, origin, p, "low", true, &out->a)).empty()) return err;
  if (!(err = ReadNumber(*f, origin, p, "high", true, &out->b)).empty()) return err;
  if (!(out->b > out->a)) return Err(origin, f->get("high"), p + "high", "must be above low");
  if (out->kind == Fill::Kind::kIntegers &&
      (out->a != double(int64_t(out->a)) || out->b != double(int64_t(out->b))))
    return Err(origin, f, p + "low", "integers are filled between whole numbers");
  return "";
}

std::string ReadTensor(const toml::table& t, const std::string& origin, const std::string& prefix,
                       const ManifestLimits& limits, const std::vector<std::string>& sizes,
                       TensorSpec* out) {
  std::string err;
  if (!(err = CheckKeys(t, origin, prefix, {"name", "dtype", "shape", "role", "fill"})).empty())
    return err;
  if (!(err = ReadString(t, origin, prefix, "name", true, &out->name)).empty()) return err;
  if (!IsIdentifier(out->name, false))
    return Err(origin, t.get("name"), prefix + "name",
               "'" + out->name + "': lower-case letters, digits and '_', a letter first");
  std::string dtype, role = "input";
  if (!(err = ReadString(t, origin, prefix, "dtype", true, &dtype)).empty()) return err;
  const auto parsed = ParseDType(dtype);
  if (!parsed || *parsed == DType::kFP8 || *parsed == DType::kTF32)
    return Err(origin, t.get("dtype"), prefix + "dtype",
               "'" + dtype + "' is not bf16, fp16, fp32 or int8");
  out->dtype = *parsed;
  if (!(err = ReadString(t, origin, prefix, "role", false, &role)).empty()) return err;
  if (role == "input") {
    out->role = TensorRole::kInput;
  } else if (role == "output") {
    out->role = TensorRole::kOutput;
  } else if (role == "inout") {
    out->role = TensorRole::kInOut;
  } else {
    return Err(origin, t.get("role"), prefix + "role", "'" + role + "': input, output or inout");
  }
  const toml::node* shape = t.get("shape");
  if (!shape)
    return Err(origin, &t, prefix + "shape", "missing: its dimensions, [\"rows\", \"cols\"]");
  const auto* dims = shape->as_array();
  if (!dims || dims->empty() || int(dims->size()) > kMaxDims)
    return Err(origin, shape, prefix + "shape",
               "expected 1 to " + std::to_string(kMaxDims) +
                   " dimensions as expressions of the sizes (\"rows\", \"cols / 2\")");
  for (size_t d = 0; d < dims->size(); ++d) {
    const auto* text = dims->get(d)->as_string();
    const std::string key = prefix + "shape[" + std::to_string(d) + "]";
    if (!text) return Err(origin, dims->get(d), key, "expected a string expression of the sizes");
    if (text->get().size() > limits.max_expression_chars)
      return Err(origin, dims->get(d), key,
                 "longer than " + std::to_string(limits.max_expression_chars) + " characters");
    std::unique_ptr<Expression> e;
    if (std::string why = Expression::Parse(text->get(), sizes, &e); !why.empty())
      return Err(origin, dims->get(d), key,
                 "'" + text->get() + "': " + why + " (a dimension is an expression of the sizes)");
    out->shape.push_back(std::move(e));
  }
  if (out->role == TensorRole::kOutput && t.get("fill"))
    return Err(origin, t.get("fill"), prefix + "fill",
               "an output is not filled (it is poisoned before every check)");
  return ReadFill(t, origin, prefix, &out->fill);
}

std::string ReadScalar(const toml::table& t, const std::string& origin, const std::string& prefix,
                       ScalarSpec* out) {
  std::string err, type = "fp32";
  if (!(err = CheckKeys(t, origin, prefix, {"name", "dtype", "value"})).empty()) return err;
  if (!(err = ReadString(t, origin, prefix, "name", true, &out->name)).empty()) return err;
  if (!IsIdentifier(out->name, false))
    return Err(origin, t.get("name"), prefix + "name",
               "'" + out->name + "': lower-case letters, digits and '_', a letter first");
  if (!(err = ReadString(t, origin, prefix, "dtype", false, &type)).empty()) return err;
  if (type == "fp32") {
    out->type = ScalarSpec::Type::kF32;
  } else if (type == "int32") {
    out->type = ScalarSpec::Type::kI32;
  } else if (type == "int64") {
    out->type = ScalarSpec::Type::kI64;
  } else {
    return Err(origin, t.get("dtype"), prefix + "dtype", "'" + type + "': fp32, int32 or int64");
  }
  if (!(err = ReadNumber(t, origin, prefix, "value", true, &out->value)).empty()) return err;
  if (out->type != ScalarSpec::Type::kF32 && out->value != double(int64_t(out->value)))
    return Err(origin, t.get("value"), prefix + "value", "an integer scalar takes a whole number");
  return "";
}

// [contract]'s sizes and their defaults.
std::string ReadSizes(const toml::table& c, const std::string& origin, GeneralContract* out) {
  const toml::node* n = c.get("sizes");
  const auto* arr = n ? n->as_array() : nullptr;
  if (!arr || arr->empty() || int(arr->size()) > kMaxSizes)
    return Err(origin, n ? n : &c, "contract.sizes",
               "expected 1 to " + std::to_string(kMaxSizes) +
                   " names of the problem's sizes ([\"rows\", \"cols\"]: a run gives them as "
                   "--size rows=8192,cols=4096)");
  for (size_t i = 0; i < arr->size(); ++i) {
    const auto* s = arr->get(i)->as_string();
    const std::string key = "contract.sizes[" + std::to_string(i) + "]";
    if (!s || !IsIdentifier(s->get(), false))
      return Err(origin, arr->get(i), key, "a size is named in lower-case letters and digits");
    if (std::count(out->sizes.begin(), out->sizes.end(), s->get()))
      return Err(origin, arr->get(i), key, "'" + s->get() + "' is given twice");
    out->sizes.push_back(s->get());
  }
  if (const toml::node* d = c.get("default_sizes")) {
    const auto* t = d->as_table();
    if (!t) return Err(origin, d, "contract.default_sizes", "expected { rows = 8192, ... }");
    for (const auto& [key, value] : *t) {
      const std::string name(key.str());
      const auto* v = value.as_integer();
      if (!std::count(out->sizes.begin(), out->sizes.end(), name))
        return Err(origin, &value, "contract.default_sizes." + name, "not one of the sizes");
      if (!v || v->get() < 1)
        return Err(origin, &value, "contract.default_sizes." + name,
                   "expected a whole number >= 1");
      out->default_sizes[name] = v->get();
    }
  }
  std::string type = "int64";
  if (std::string err = ReadString(c, origin, "contract.", "size_type", false, &type); !err.empty())
    return err;
  if (type != "int64" && type != "int32")
    return Err(origin, c.get("size_type"), "contract.size_type",
               "'" + type +
                   "': int64 (long long, the default) or int32 (int, as Triton's PTX "
                   "takes them)");
  out->sizes_int32 = type == "int32";
  return "";
}

// [contract] params: every tensor once, sizes and scalars by name.
std::string ReadParams(const toml::table& c, const std::string& origin, GeneralContract* out) {
  const toml::node* n = c.get("params");
  const auto* arr = n ? n->as_array() : nullptr;
  if (!arr || arr->empty())
    return Err(origin, n ? n : &c, "contract.params",
               "expected the entry's parameters in order: [\"x\", \"y\", \"rows\", \"cols\"]");
  std::set<std::string> known;
  for (const TensorSpec& t : out->tensors) known.insert(t.name);
  for (const std::string& s : out->sizes) known.insert(s);
  for (const ScalarSpec& s : out->scalars) known.insert(s.name);
  for (size_t i = 0; i < arr->size(); ++i) {
    const auto* s = arr->get(i)->as_string();
    const std::string key = "contract.params[" + std::to_string(i) + "]";
    if (!s || !known.count(s->get()))
      return Err(origin, arr->get(i), key,
                 (s ? "'" + s->get() + "'" : std::string("this")) +
                     " is not a tensor, size or scalar of the contract");
    if (std::count(out->params.begin(), out->params.end(), s->get()))
      return Err(origin, arr->get(i), key, "'" + s->get() + "' is given twice");
    out->params.push_back(s->get());
  }
  for (const TensorSpec& t : out->tensors)
    if (!std::count(out->params.begin(), out->params.end(), t.name))
      return Err(origin, n, "contract.params",
                 "tensor '" + t.name + "' is not among the entry's parameters");
  return "";
}

// A tensor of the contract named at `key` of a built-in reference, of role `role`, in a float
// dtype the built-in reads and writes.
std::string ReadBoundTensor(const toml::table& r, const std::string& origin, const std::string& key,
                            const GeneralContract& c, TensorRole role, std::string* out) {
  std::string err;
  if (!(err = ReadString(r, origin, "reference.", key, true, out)).empty()) return err;
  for (const TensorSpec& t : c.tensors) {
    if (t.name != *out) continue;
    if (t.role != role)
      return Err(origin, r.get(key), "reference." + key,
                 "tensor '" + *out + "' is not an " +
                     (role == TensorRole::kInput ? "input" : "output") + " of the contract");
    if (t.dtype != DType::kBF16 && t.dtype != DType::kFP16 && t.dtype != DType::kFP32)
      return Err(origin, r.get(key), "reference." + key,
                 "tensor '" + *out + "': a built-in reference reads and writes bf16, fp16 or fp32");
    return "";
  }
  return Err(origin, r.get(key), "reference." + key,
             "'" + *out + "' is not a tensor of the contract");
}

// [reference] builtin = "row_softmax" ...: which one, its tensors and (rms_norm) its eps.
std::string ReadBuiltin(const toml::table& r, const std::string& origin, const GeneralContract& c,
                        ReferenceSpec* out) {
  std::string name, err;
  if (!(err = ReadString(r, origin, "reference.", "builtin", true, &name)).empty()) return err;
  for (BuiltinReference b :
       {BuiltinReference::kRowSoftmax, BuiltinReference::kRmsNorm, BuiltinReference::kRowSum})
    if (BuiltinName(b) == name) out->builtin = b;
  if (out->builtin == BuiltinReference::kNone)
    return Err(origin, r.get("builtin"), "reference.builtin",
               "'" + name + "': row_softmax, rms_norm or row_sum");
  for (const char* key : {"block", "grid", "grid_y", "smem"})
    if (r.get(key))
      return Err(origin, r.get(key), std::string("reference.") + key,
                 "a built-in reference has its own launch");
  const bool norm = out->builtin == BuiltinReference::kRmsNorm;
  for (const char* key : {"weight", "eps"})
    if (!norm && r.get(key))
      return Err(origin, r.get(key), std::string("reference.") + key,
                 "belongs to builtin = \"rms_norm\"");
  if (!(err = ReadBoundTensor(r, origin, "input", c, TensorRole::kInput, &out->input)).empty() ||
      !(err = ReadBoundTensor(r, origin, "output", c, TensorRole::kOutput, &out->output)).empty())
    return err;
  for (const TensorSpec& t : c.tensors)
    if (t.role != TensorRole::kInput && t.name != out->output)
      return Err(origin, r.get("output"), "reference.output",
                 "the built-in reference writes '" + out->output + "' alone; '" + t.name +
                     "' would be checked against nothing");
  if (!norm) return "";
  if (!(err = ReadBoundTensor(r, origin, "weight", c, TensorRole::kInput, &out->weight)).empty())
    return err;
  const toml::node* eps = r.get("eps");
  if (!eps) return Err(origin, &r, "reference.eps", "missing: a number, or the name of a scalar");
  if (const auto* s = eps->as_string()) {
    for (const ScalarSpec& sc : c.scalars)
      if (sc.name == s->get()) {
        out->eps_scalar = sc.name;
        out->eps = sc.value;
      }
    if (out->eps_scalar.empty())
      return Err(origin, eps, "reference.eps",
                 "'" + s->get() + "' is not a scalar of the contract");
  } else if (!(err = ReadNumber(r, origin, "reference.", "eps", true, &out->eps)).empty()) {
    return err;
  }
  if (!(out->eps >= 0) || !(out->eps < 1e30))
    return Err(origin, eps, "reference.eps", "must be finite and not negative");
  return "";
}

std::string ReadTolerance(const toml::table& r, const std::string& origin, Tolerance* tol) {
  std::string err;
  if (const toml::node* b = r.get("bit_identical")) {
    if (!b->is_boolean())
      return Err(origin, b, "reference.bit_identical", "expected true or false");
    tol->bit_identical = *b->value<bool>();
  }
  if (!(err = ReadNumber(r, origin, "reference.", "abs", false, &tol->abs)).empty()) return err;
  if (!(err = ReadNumber(r, origin, "reference.", "rel", false, &tol->rel)).empty()) return err;
  if (tol->abs < 0 || tol->rel < 0 || !(tol->abs < 1e30) || !(tol->rel < 1e30))
    return Err(origin, &r, "reference.abs", "tolerances are finite and not negative");
  if (tol->bit_identical == (tol->abs > 0 || tol->rel > 0))
    return Err(origin, &r, "reference",
               "say how close the outputs must be: abs and/or rel (|out - ref| <= abs + rel * "
               "|ref|), or bit_identical = true");
  return "";
}

std::string ReadReference(const toml::table& root, const std::string& origin,
                          const ManifestLimits& limits, const GeneralContract& c,
                          ReferenceSpec* out) {
  const toml::node* n = root.get("reference");
  if (!n || !n->as_table())
    return Err(origin, &root, "reference",
               "missing: [reference] entry (a kernel of the same source, with the same "
               "parameters, that the kernel is checked against) with its launch, or builtin "
               "(one of the service's), and a tolerance");
  const toml::table& r = *n->as_table();
  std::string err;
  if (!(err = CheckKeys(r, origin, "reference.",
                        {"entry", "block", "grid", "grid_y", "smem", "abs", "rel", "bit_identical",
                         "builtin", "input", "output", "weight", "eps"}))
           .empty())
    return err;
  if (r.get("entry") && r.get("builtin"))
    return Err(origin, r.get("builtin"), "reference.builtin",
               "a reference is an entry of the source or a built-in one, not both");
  if (r.get("builtin")) {
    if (!(err = ReadBuiltin(r, origin, c, out)).empty()) return err;
    return ReadTolerance(r, origin, &out->tolerance);
  }
  for (const char* key : {"input", "output", "weight", "eps"})
    if (r.get(key))
      return Err(origin, r.get(key), std::string("reference.") + key,
                 "binds a built-in reference's tensors: builtin = \"row_softmax\", "
                 "\"rms_norm\" or \"row_sum\"");
  if (!(err = ReadString(r, origin, "reference.", "entry", true, &out->entry)).empty()) return err;
  if (!IsIdentifier(out->entry, false) && !IsIdentifier(out->entry, true))
    return Err(origin, r.get("entry"), "reference.entry", "'" + out->entry + "' is not a C name");
  const std::vector<std::string>& sizes = c.sizes;
  if (!(err = ReadExpression(r, origin, "reference.", "block", true, sizes, limits, &out->block))
           .empty() ||
      !(err = ReadExpression(r, origin, "reference.", "grid", true, sizes, limits, &out->grid_x))
           .empty() ||
      !(err = ReadExpression(r, origin, "reference.", "grid_y", false, sizes, limits, &out->grid_y))
           .empty() ||
      !(err = ReadExpression(r, origin, "reference.", "smem", false, sizes, limits, &out->smem))
           .empty())
    return err;
  return ReadTolerance(r, origin, &out->tolerance);
}

std::string ReadWork(const toml::table& root, const std::string& origin,
                     const ManifestLimits& limits, const std::vector<std::string>& sizes,
                     WorkSpec* out) {
  const toml::node* n = root.get("work");
  if (!n || !n->as_table())
    return Err(origin, &root, "work",
               "missing: [work] ops and bytes as expressions of the sizes (its roofline)");
  const toml::table& w = *n->as_table();
  std::string err, peak = "fp32";
  if (!(err = CheckKeys(w, origin, "work.", {"ops", "bytes", "peak"})).empty()) return err;
  if (!(err = ReadExpression(w, origin, "work.", "ops", true, sizes, limits, &out->ops)).empty() ||
      !(err = ReadExpression(w, origin, "work.", "bytes", true, sizes, limits, &out->bytes))
           .empty())
    return err;
  if (!(err = ReadString(w, origin, "work.", "peak", false, &peak)).empty()) return err;
  if (peak == "fp32") {
    out->peak = OpsPeak::kFp32;
  } else if (peak == "tensor") {
    out->peak = OpsPeak::kTensor;
  } else {
    return Err(origin, w.get("peak"), "work.peak",
               "'" + peak + "': fp32 (CUDA cores' FMA rate) or tensor (the dtype's tensor cores)");
  }
  return "";
}

}  // namespace

std::string ReadGeneralContract(const toml::table& root, const std::string& origin,
                                const ManifestLimits& limits, const std::vector<std::string>& knobs,
                                GeneralContract* out) {
  const toml::table& c = *root.get("contract")->as_table();
  std::string err;
  if (!(err = ReadSizes(c, origin, out)).empty()) return err;
  for (const std::string& k : knobs)
    if (std::count(out->sizes.begin(), out->sizes.end(), k))
      return Err(origin, c.get("sizes"), "contract.sizes", "'" + k + "' is a knob's name too");
  const toml::array* tables = nullptr;
  if (!(err = TablesAt(root, origin, "tensor", kMaxTensors, &tables)).empty()) return err;
  if (!tables)
    return Err(origin, &root, "tensor", "missing: [[tensor]] tables, an input and an output");
  std::set<std::string> names(out->sizes.begin(), out->sizes.end());
  for (size_t i = 0; i < tables->size(); ++i) {
    TensorSpec t;
    const std::string prefix = "tensor[" + std::to_string(i) + "].";
    if (!(err = ReadTensor(*tables->get(i)->as_table(), origin, prefix, limits, out->sizes, &t))
             .empty())
      return err;
    if (!names.insert(t.name).second)
      return Err(origin, tables->get(i), prefix + "name", "'" + t.name + "' is named twice");
    out->tensors.push_back(std::move(t));
  }
  const auto has = [&](bool output) {
    return std::any_of(out->tensors.begin(), out->tensors.end(), [&](const TensorSpec& t) {
      return t.role == TensorRole::kInOut ||
             (output ? t.role == TensorRole::kOutput : t.role == TensorRole::kInput);
    });
  };
  if (!has(false) || !has(true))
    return Err(origin, root.get("tensor"), "tensor",
               "a kernel reads an input and writes an output (role = \"input\", \"output\" or "
               "\"inout\")");
  if (!(err = TablesAt(root, origin, "scalar", kMaxScalars, &tables)).empty()) return err;
  for (size_t i = 0; tables && i < tables->size(); ++i) {
    ScalarSpec s;
    const std::string prefix = "scalar[" + std::to_string(i) + "].";
    if (!(err = ReadScalar(*tables->get(i)->as_table(), origin, prefix, &s)).empty()) return err;
    if (!names.insert(s.name).second)
      return Err(origin, tables->get(i), prefix + "name", "'" + s.name + "' is named twice");
    out->scalars.push_back(std::move(s));
  }
  if (!(err = ReadParams(c, origin, out)).empty()) return err;
  if (!(err = ReadReference(root, origin, limits, *out, &out->reference)).empty()) return err;
  return ReadWork(root, origin, limits, out->sizes, &out->work);
}

}  // namespace ablation::kernels::user::internal

namespace ablation::kernels::user {

std::string BuiltinName(BuiltinReference b) {
  switch (b) {
    case BuiltinReference::kRowSoftmax:
      return "row_softmax";
    case BuiltinReference::kRmsNorm:
      return "rms_norm";
    case BuiltinReference::kRowSum:
      return "row_sum";
    case BuiltinReference::kNone:
      break;
  }
  return "";
}

}  // namespace ablation::kernels::user
