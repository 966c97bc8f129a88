#include "kernels/user/contract_plan.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace ablation::kernels::user {
namespace {

constexpr int64_t kMaxSize = int64_t(1) << 40;
constexpr int64_t kAlign = 256;

int64_t AlignUp(int64_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

std::map<std::string, double> Bound(const Sizes& sizes) {
  std::map<std::string, double> v;
  for (const auto& [name, value] : sizes) v[name] = double(value);
  return v;
}

// The tensor's dimensions at `sizes`, or why not.
std::string Dims(const TensorSpec& t, const Sizes& sizes, std::vector<int64_t>* out) {
  out->clear();
  for (size_t d = 0; d < t.shape.size(); ++d) {
    int64_t n = 0;
    if (std::string why = t.shape[d]->EvaluateInteger(Bound(sizes), 1, kMaxSize, &n); !why.empty())
      return "tensor " + t.name + ": dimension " + std::to_string(d) + ": " + why;
    out->push_back(n);
  }
  return "";
}

// IEEE half to float (the host has no half type to lean on).
float HalfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const int exponent = (h >> 10) & 0x1f;
  const uint32_t mantissa = h & 0x3ff;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(float(mantissa), -24);  // zero or subnormal
  } else if (exponent == 31) {
    magnitude = mantissa ? std::nanf("") : INFINITY;
  } else {
    magnitude = std::ldexp(float(mantissa | 0x400), exponent - 25);
  }
  uint32_t bits;
  std::memcpy(&bits, &magnitude, 4);
  bits |= sign;
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

double Element(const std::vector<uint8_t>& data, int64_t i, DType d) {
  const uint8_t* p = data.data() + i * ElementBytes(d);
  switch (d) {
    case DType::kBF16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      const uint32_t bits = uint32_t(h) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case DType::kFP16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return HalfToFloat(h);
    }
    case DType::kINT8:
      return double(int8_t(*p));
    default: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
  }
}

std::string Index(const std::string& name, const std::vector<int64_t>& dims, int64_t flat) {
  std::vector<int64_t> at(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    at[d] = flat % dims[d];
    flat /= dims[d];
  }
  std::string out = name;
  for (int64_t i : at) out += "[" + std::to_string(i) + "]";
  return out;
}

// Where byte `at` of the arena lies, in the user's words: inside a tensor ("input x"), or in the
// canaries around one ("12 bytes after the end of y", "3 bytes before x").
std::string Where(const BufferPlan& plan, int64_t at) {
  std::string nearest;
  int64_t distance = -1;
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const TensorBuffer& t = plan.tensors[i];
    if (at >= t.offset && at < t.offset + t.bytes) return "in its input " + t.name;
    const int64_t after = at - (t.offset + t.bytes), before = t.offset - at;
    const int64_t d = at >= t.offset + t.bytes ? after : before;
    if (distance < 0 || d < distance) {
      distance = d;
      nearest = at >= t.offset + t.bytes
                    ? "at byte " + std::to_string(after + 1) + " past the end of " + t.name
                    : "at byte " + std::to_string(before) + " before " + t.name;
    }
  }
  return nearest;
}

std::string Number(double x) {
  std::ostringstream s;
  s.precision(6);
  s << x;
  return s.str();
}

}  // namespace

std::string ParseSizes(const std::string& text, const GeneralContract& c, Sizes* out) {
  Sizes sizes;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const size_t eq = item.find('=');
    const std::string name = item.substr(0, eq);
    if (eq == std::string::npos || !std::count(c.sizes.begin(), c.sizes.end(), name)) {
      std::string known;
      for (const std::string& s : c.sizes) known += (known.empty() ? "" : ", ") + s;
      return "size '" + item + "': expected NAME=VALUE with NAME one of " + known;
    }
    if (sizes.count(name)) return "size " + name + " is given twice";
    const std::string value = item.substr(eq + 1);
    int64_t n = 0;
    size_t used = 0;
    try {
      n = std::stoll(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != value.size() || n < 1 || n > kMaxSize)
      return "size " + name + " = '" + value + "': expected a whole number from 1 to 2^40";
    sizes[name] = n;
  }
  for (const std::string& s : c.sizes) {
    if (sizes.count(s)) continue;
    auto d = c.default_sizes.find(s);
    if (d == c.default_sizes.end())
      return "size " + s + " is not given and the manifest has no default for it";
    sizes[s] = d->second;
  }
  *out = std::move(sizes);
  return "";
}

std::string FormatSizes(const GeneralContract& c, const Sizes& sizes) {
  std::string out;
  for (const std::string& s : c.sizes) {
    auto it = sizes.find(s);
    out +=
        (out.empty() ? "" : ",") + s + "=" + (it == sizes.end() ? "?" : std::to_string(it->second));
  }
  return out;
}

Problem ProblemOfSizes(const GeneralContract& c, DType dtype, const Sizes& sizes) {
  int64_t dims[3] = {1, 1, 1};
  for (size_t i = 0; i < c.sizes.size() && i < 3; ++i) {
    auto it = sizes.find(c.sizes[i]);
    dims[i] = it == sizes.end() ? 1 : it->second;
  }
  return Problem{dims[0], dims[1], dims[2], dtype};
}

std::string SizesOfProblem(const GeneralContract& c, const Problem& p, Sizes* out) {
  const int64_t dims[3] = {p.m, p.n, p.k};
  const char* column[3] = {"M", "N", "K"};
  out->clear();
  for (size_t i = 0; i < 3; ++i) {
    if (i < c.sizes.size()) {
      if (dims[i] < 1 || dims[i] > kMaxSize)
        return c.sizes[i] + " = " + std::to_string(dims[i]) + ": a size is 1 to 2^40";
      (*out)[c.sizes[i]] = dims[i];
    } else if (dims[i] != 1) {
      return std::string("the contract has ") + std::to_string(c.sizes.size()) +
             " sizes; the problem's " + column[i] + " = " + std::to_string(dims[i]) +
             " names none of them (give the sizes with --size)";
    }
  }
  return "";
}

std::string WorkAt(const GeneralContract& c, const Sizes& sizes, double* ops, double* bytes) {
  const auto v = Bound(sizes);
  if (std::string why = c.work.ops->Evaluate(v, ops); !why.empty()) return "work.ops: " + why;
  if (std::string why = c.work.bytes->Evaluate(v, bytes); !why.empty()) return "work.bytes: " + why;
  if (*ops < 0 || *bytes < 0) return "the work model gives a negative amount";
  return "";
}

uint8_t CanaryByte(int64_t i) { return uint8_t(0xA5 ^ (i * 0x3B)); }

std::string PlanBuffers(const GeneralContract& c, const Sizes& sizes, int64_t max_bytes,
                        BufferPlan* out) {
  for (const auto& [name, value] : sizes)
    if (c.sizes_int32 && value > 2147483647)
      return name + " = " + std::to_string(value) +
             ": the entry takes its sizes as int32 (contract.size_type), at most 2147483647";
  BufferPlan plan;
  int64_t at = 0;
  for (const TensorSpec& t : c.tensors) {
    std::vector<int64_t> dims;
    if (std::string why = Dims(t, sizes, &dims); !why.empty()) return why;
    TensorBuffer b;
    b.name = t.name;
    b.elements = 1;
    for (int64_t d : dims) {
      if (b.elements > kMaxSize / d) return "tensor " + t.name + ": more than 2^40 elements";
      b.elements *= d;
    }
    b.bytes = b.elements * ElementBytes(t.dtype);
    at = AlignUp(at + kCanaryBytes);  // the front canary ends where the tensor begins
    b.offset = at;
    at += b.bytes;
    if (at + kCanaryBytes > max_bytes)
      return "the tensors at " + FormatSizes(c, sizes) + " need more than " +
             std::to_string(max_bytes >> 20) + " MiB with their canaries (tensor " + t.name +
             " alone " + std::to_string(b.bytes >> 20) + " MiB)";
    plan.tensors.push_back(std::move(b));
  }
  plan.arena_bytes = AlignUp(at + kCanaryBytes);
  *out = std::move(plan);
  return "";
}

ArgumentBlock PackArguments(const GeneralContract& c, const Sizes& sizes, const BufferPlan& plan,
                            uint64_t device_base) {
  ArgumentBlock block;
  const auto put = [&](const void* value, size_t size) {
    size_t at = (block.bytes.size() + size - 1) / size * size;  // natural alignment
    block.bytes.resize(at + size);
    std::memcpy(block.bytes.data() + at, value, size);
    block.offsets.push_back(at);
  };
  for (const std::string& p : c.params) {
    if (auto s = sizes.find(p); s != sizes.end()) {
      const int64_t v = s->second;
      const int32_t v32 = int32_t(v);  // PlanBuffers refused a size int32 cannot hold
      if (c.sizes_int32) {
        put(&v32, 4);
      } else {
        put(&v, 8);
      }
      continue;
    }
    bool done = false;
    for (size_t i = 0; i < c.tensors.size() && !done; ++i)
      if (c.tensors[i].name == p) {
        const uint64_t ptr = device_base + uint64_t(plan.tensors[i].offset);
        put(&ptr, 8);
        done = true;
      }
    for (const ScalarSpec& s : c.scalars)
      if (!done && s.name == p) {
        if (s.type == ScalarSpec::Type::kF32) {
          const float v = float(s.value);
          put(&v, 4);
        } else if (s.type == ScalarSpec::Type::kI32) {
          const int32_t v = int32_t(s.value);
          put(&v, 4);
        } else {
          const int64_t v = int64_t(s.value);
          put(&v, 8);
        }
        done = true;
      }
  }
  return block;
}

std::string ReferenceName(const GeneralContract& c) {
  return c.reference.builtin == BuiltinReference::kNone
             ? c.reference.entry
             : "the built-in " + BuiltinName(c.reference.builtin);
}

std::vector<size_t> ParameterBytes(const GeneralContract& c) {
  std::vector<size_t> out;
  for (const std::string& p : c.params) {
    size_t bytes = 8;  // a tensor's pointer, an int64 size or scalar
    if (std::count(c.sizes.begin(), c.sizes.end(), p) && c.sizes_int32) bytes = 4;
    for (const ScalarSpec& s : c.scalars)
      if (s.name == p && s.type != ScalarSpec::Type::kI64) bytes = 4;
    out.push_back(bytes);
  }
  return out;
}

std::string CheckEntryParameters(const GeneralContract& c, const std::string& entry,
                                 const std::vector<size_t>& bytes) {
  const std::vector<size_t> want = ParameterBytes(c);
  if (bytes.size() != want.size())
    return "the entry " + entry + " takes " + std::to_string(bytes.size()) +
           " parameters; contract.params names " + std::to_string(want.size());
  for (size_t i = 0; i < want.size(); ++i)
    if (bytes[i] != want[i])
      return "the entry " + entry + "'s parameter " + std::to_string(i) + " ('" + c.params[i] +
             "') is " + std::to_string(bytes[i]) + " bytes; the contract passes " +
             std::to_string(want[i]) +
             (want[i] == 8 && bytes[i] == 4 &&
                      std::count(c.sizes.begin(), c.sizes.end(), c.params[i])
                  ? " (an int32 size: contract.size_type = \"int32\")"
                  : "");
  return "";
}

std::string CheckEntryParameters(const Manifest& m, const std::string& entry,
                                 const std::vector<size_t>& bytes) {
  if (m.general) return CheckEntryParameters(*m.general, entry, bytes);
  if (bytes == kGemmParameterBytes) return "";
  std::string list;
  for (size_t b : bytes) list += (list.empty() ? "" : ", ") + std::to_string(b);
  return "the entry " + entry + " takes " + std::to_string(bytes.size()) +
         " parameters unlike the GEMM contract's (const A*, const B*, C*, int M, int N, int K): "
         "of " +
         (list.empty() ? std::string("none") : list) +
         " bytes, where the contract passes 8, 8, 8, 4, 4, 4";
}

std::string PtxEntryParameterBytes(const std::string& ptx, const std::string& entry,
                                   std::vector<size_t>* out) {
  out->clear();
  // `.entry NAME(` with the name whole: the next character after it is a space or '('.
  size_t at = 0;
  for (;;) {
    at = ptx.find(".entry", at);
    if (at == std::string::npos) return "the PTX has no .entry " + entry;
    size_t name = ptx.find_first_not_of(" \t\r\n", at + 6);
    at += 6;
    if (name == std::string::npos || ptx.compare(name, entry.size(), entry) != 0) continue;
    const size_t after = name + entry.size();
    if (after < ptx.size() && (std::isalnum(static_cast<unsigned char>(ptx[after])) ||
                               ptx[after] == '_' || ptx[after] == '$'))
      continue;
    at = after;
    break;
  }
  const size_t open = ptx.find_first_not_of(" \t\r\n", at);
  if (open == std::string::npos || ptx[open] != '(') return "";  // .entry NAME with no parameters
  const size_t close = ptx.find(')', open);
  if (close == std::string::npos) return "the PTX's .entry " + entry + " has no ')'";
  std::istringstream list(ptx.substr(open + 1, close - open - 1));
  std::string param;
  while (std::getline(list, param, ',')) {
    std::istringstream words(param);
    std::string w;
    size_t bytes = 0;
    while (words >> w) {
      if (w == ".u64" || w == ".s64" || w == ".b64" || w == ".f64") bytes = 8;
      if (w == ".u32" || w == ".s32" || w == ".b32" || w == ".f32") bytes = 4;
      if (w == ".u16" || w == ".s16" || w == ".b16" || w == ".f16" || w == ".bf16") bytes = 2;
      if (w == ".u8" || w == ".s8" || w == ".b8") bytes = 1;
      if (const size_t b = w.find('['); b != std::string::npos && w.back() == ']')
        bytes *= size_t(std::strtoull(w.c_str() + b + 1, nullptr, 10));
    }
    if (bytes == 0) return "the PTX's .entry " + entry + " has a parameter of no known type";
    out->push_back(bytes);
  }
  return "";
}

std::string PlanBuiltinReference(const GeneralContract& c, const Sizes& sizes, BuiltinPlan* out) {
  const ReferenceSpec& r = c.reference;
  BuiltinPlan b;
  std::vector<int64_t> in, o, w;
  for (size_t i = 0; i < c.tensors.size(); ++i) {
    const std::string& name = c.tensors[i].name;
    std::vector<int64_t>* dims = name == r.input    ? &in
                                 : name == r.output ? &o
                                 : name == r.weight ? &w
                                                    : nullptr;
    if (!dims) continue;
    (name == r.input ? b.input : name == r.output ? b.output : b.weight) = int(i);
    if (std::string why = Dims(c.tensors[i], sizes, dims); !why.empty()) return why;
  }
  if (b.input < 0 || b.output < 0 || (r.builtin == BuiltinReference::kRmsNorm && b.weight < 0))
    return "the built-in reference's tensors are not the contract's";
  b.cols = in.back();
  b.rows = 1;
  for (size_t d = 0; d + 1 < in.size(); ++d) b.rows *= in[d];
  const auto count = [](const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  };
  const std::string at = " at " + FormatSizes(c, sizes);
  if (r.builtin == BuiltinReference::kRowSum) {
    if (count(o) != b.rows)
      return "row_sum writes one value per row of " + r.input + " (" + std::to_string(b.rows) +
             "); " + r.output + " holds " + std::to_string(count(o)) + at;
  } else if (o != in) {
    return BuiltinName(r.builtin) + " writes " + r.output + " in the shape of " + r.input +
           "; they differ" + at;
  }
  if (r.builtin == BuiltinReference::kRmsNorm && count(w) != b.cols)
    return "rms_norm's weight " + r.weight + " holds one value per column of " + r.input + " (" +
           std::to_string(b.cols) + "); it holds " + std::to_string(count(w)) + at;
  *out = b;
  return "";
}

std::string PlanReference(const GeneralContract& c, const Sizes& sizes, LaunchGeometry* out) {
  const auto v = Bound(sizes);
  const ReferenceSpec& r = c.reference;
  LaunchGeometry g;
  if (r.builtin != BuiltinReference::kNone) {
    BuiltinPlan b;
    if (std::string why = PlanBuiltinReference(c, sizes, &b); !why.empty()) return why;
    *out = g;
    return "";
  }
  std::string why;
  if (!(why = r.block->EvaluateInteger(v, 1, 1024, &g.block)).empty())
    return "reference block: " + why;
  if (!(why = r.grid_x->EvaluateInteger(v, 1, 2147483647, &g.grid_x)).empty())
    return "reference grid: " + why;
  if (r.grid_y && !(why = r.grid_y->EvaluateInteger(v, 1, 65535, &g.grid_y)).empty())
    return "reference grid_y: " + why;
  if (r.smem && !(why = r.smem->EvaluateInteger(v, 0, 227 * 1024, &g.smem_bytes)).empty())
    return "reference smem: " + why;
  *out = g;
  return "";
}

std::string CompareOutput(const TensorSpec& spec, const Sizes& sizes, DType dtype,
                          const std::vector<uint8_t>& out, const std::vector<uint8_t>& ref,
                          const Tolerance& tolerance, OutputStats* stats) {
  std::vector<int64_t> dims;
  if (std::string why = Dims(spec, sizes, &dims); !why.empty()) return why;
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  const int64_t bytes = n * ElementBytes(dtype);
  if (int64_t(out.size()) != bytes || int64_t(ref.size()) != bytes)
    return spec.name + ": " + std::to_string(out.size()) + " and " + std::to_string(ref.size()) +
           " bytes to compare, not " + std::to_string(bytes);
  std::string first;
  const int64_t w = ElementBytes(dtype);
  for (int64_t i = 0; i < n; ++i) {
    const double o = Element(out, i, dtype), r = Element(ref, i, dtype);
    const double allowed = tolerance.abs + tolerance.rel * std::fabs(r);
    const bool ok = tolerance.bit_identical
                        ? std::memcmp(out.data() + i * w, ref.data() + i * w, size_t(w)) == 0
                        : std::fabs(o - r) <= allowed;  // NaN fails
    if (stats) {
      ++stats->elements;
      const double abs_error = std::fabs(o - r);
      if (std::isnan(abs_error) || abs_error > stats->max_abs_error)
        stats->max_abs_error = std::isnan(abs_error) ? INFINITY : abs_error;
      if (r != 0 && abs_error / std::fabs(r) > stats->max_rel_error)
        stats->max_rel_error = abs_error / std::fabs(r);
      stats->mismatches += ok ? 0 : 1;
    }
    if (ok || !first.empty()) continue;
    first = Index(spec.name, dims, i) + " = " + Number(o) + ", the reference " + Number(r) +
            (tolerance.bit_identical ? " (bit for bit)" : " (tolerance " + Number(allowed) + ")");
    if (!stats) return first;
  }
  return first;
}

std::string ComputeRoofline(const GeneralContract& c, const Sizes& sizes, double seconds,
                            double peak_ops_per_second, double bandwidth_bytes_per_second,
                            Roofline* out) {
  if (!(seconds > 0)) return "a launch of no time has no figures";
  Roofline r;
  if (std::string why = WorkAt(c, sizes, &r.ops, &r.bytes); !why.empty()) return why;
  r.ops_per_second = r.ops / seconds;
  r.bytes_per_second = r.bytes / seconds;
  r.intensity = r.bytes > 0 ? r.ops / r.bytes : 0;
  r.compute_share = peak_ops_per_second > 0 ? r.ops_per_second / peak_ops_per_second : 0;
  r.memory_share =
      bandwidth_bytes_per_second > 0 ? r.bytes_per_second / bandwidth_bytes_per_second : 0;
  // The roof the kernel's intensity puts under it: the ridge point is peak / bandwidth.
  const double ridge =
      bandwidth_bytes_per_second > 0 ? peak_ops_per_second / bandwidth_bytes_per_second : 0;
  r.bound = r.intensity < ridge ? "memory" : "compute";
  *out = r;
  return "";
}

std::string ForeignWrites(const GeneralContract& c, const BufferPlan& plan,
                          const std::vector<uint8_t>& before, const std::vector<uint8_t>& after) {
  int64_t changed = 0, first = -1;
  int64_t at = 0;
  const auto scan = [&](int64_t from, int64_t to) {
    for (int64_t i = from; i < to; ++i)
      if (before[size_t(i)] != after[size_t(i)]) {
        if (first < 0) first = i;
        ++changed;
      }
  };
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const TensorBuffer& t = plan.tensors[i];
    if (c.tensors[i].role == TensorRole::kInput) continue;
    scan(at, t.offset);
    at = t.offset + t.bytes;
  }
  scan(at, plan.arena_bytes);
  if (changed == 0) return "";
  return "a write outside its outputs: " + std::to_string(changed) + " bytes changed, the first " +
         Where(plan, first);
}

int64_t Unwritten(const std::vector<uint8_t>& bytes, int width) {
  int64_t n = 0;
  for (size_t i = 0; i + size_t(width) <= bytes.size(); i += size_t(width)) {
    bool poison = true;
    for (int b = 0; b < width && poison; ++b) poison = bytes[i + size_t(b)] == 0xFF;
    n += poison ? 1 : 0;
  }
  return n;
}

}  // namespace ablation::kernels::user
