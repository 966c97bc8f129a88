#include "client/report/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

namespace ablation::client::report {
namespace {

namespace v1 = ::ablation::v1;

using Key = std::tuple<std::string, std::string, std::int64_t, std::int64_t, std::int64_t>;

Key KeyOf(const std::string& variant, const std::string& dtype, const v1::Shape& s) {
  return {variant, dtype, s.m(), s.n(), s.k()};
}

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

bool ShapeLess(const v1::Shape& a, const v1::Shape& b) {
  return std::tuple(a.m(), a.n(), a.k()) < std::tuple(b.m(), b.n(), b.k());
}

// '*' matches any run of characters; enough for the patterns of the tables below.
bool StarMatch(std::string_view pattern, std::string_view text) {
  if (pattern.empty()) return text.empty();
  if (pattern[0] == '*') {
    for (std::size_t i = 0; i <= text.size(); ++i)
      if (StarMatch(pattern.substr(1), text.substr(i))) return true;
    return false;
  }
  return !text.empty() && pattern[0] == text[0] && StarMatch(pattern.substr(1), text.substr(1));
}

std::string Fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

std::string Percent(double fraction, int decimals = 1) {
  return Fixed(fraction * 100, decimals) + "%";
}

std::string SignedPercent(double fraction) {
  std::string text = Fixed(fraction * 100, 1);
  if (fraction >= 0 || text == "-0.0") text = "+" + (text == "-0.0" ? std::string("0.0") : text);
  return text;
}

// A rung of a ladder: which variant, and which earlier rungs its change is measured against (the
// fastest of them that was measured; none: no change).
struct RungSpec {
  std::string label;
  std::string what;
  std::string variant;  // canonical name, or a '*' pattern meaning the fastest measured match
  std::string dtype;
  std::vector<int> previous;
};

class RunIndex {
 public:
  explicit RunIndex(const v1::GetRunResponse& run) {
    for (const v1::Measurement& m : run.measurements()) {
      // A repeated key keeps the successful one (a plan never repeats one, but be safe).
      auto [it, inserted] = by_key_.emplace(KeyOf(m.variant(), m.dtype(), m.shape()), &m);
      if (!inserted && it->second->status() != "ok") it->second = &m;
      all_.push_back(&m);
    }
  }

  const v1::Measurement* Find(const std::string& variant, const std::string& dtype,
                              const v1::Shape& shape) const {
    auto it = by_key_.find(KeyOf(variant, dtype, shape));
    return it == by_key_.end() ? nullptr : it->second;
  }

  // The fastest successful measurement whose name matches `pattern`.
  const v1::Measurement* Best(const std::string& pattern, const std::string& dtype,
                              const v1::Shape& shape) const {
    const v1::Measurement* best = nullptr;
    for (const v1::Measurement* m : all_) {
      if (m->status() != "ok" || m->dtype() != dtype || !SameShape(m->shape(), shape)) continue;
      if (!StarMatch(pattern, m->variant())) continue;
      if (!best || m->tflops() > best->tflops()) best = m;
    }
    return best;
  }

  // 4096^3 when the run has it, else its most frequent shape.
  v1::Shape ReferenceShape() const {
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

  // The dtype of the ablation ladders: bf16, unless the run measured the family in fp16 only.
  std::string AblationDType() const {
    bool bf16 = false, fp16 = false;
    for (const v1::Measurement* m : all_) {
      if (m->variant().rfind("abl_", 0) != 0) continue;
      bf16 |= m->dtype() == "bf16";
      fp16 |= m->dtype() == "fp16";
    }
    return fp16 && !bf16 ? "fp16" : "bf16";
  }

  const std::vector<const v1::Measurement*>& all() const { return all_; }

 private:
  std::map<Key, const v1::Measurement*> by_key_;
  std::vector<const v1::Measurement*> all_;
};

std::vector<double> Samples(const v1::Measurement& m) {
  return std::vector<double>(m.sample_ms().begin(), m.sample_ms().end());
}

ReportRow RowFor(const RunIndex& index, const std::string& label, const std::string& what,
                 const std::string& variant, const std::string& dtype, const v1::Shape& shape,
                 const v1::Measurement** found) {
  ReportRow row;
  row.label = label;
  row.what = what;
  row.variant = variant;
  row.dtype = dtype;
  row.shape = shape;
  row.cublas_variant = "cublas_" + dtype;
  const v1::Measurement* m = variant.find('*') != std::string::npos
                                 ? index.Best(variant, dtype, shape)
                                 : index.Find(variant, dtype, shape);
  *found = m;
  if (!m) {
    row.status = "missing";
    return row;
  }
  row.variant = m->variant();
  row.status = m->status() == "ok" ? "ok" : (m->status().empty() ? "failed" : m->status());
  row.error = m->error();
  if (row.status != "ok") return row;
  row.tflops = m->tflops();
  row.median_ms = m->stats().median_ms();
  row.samples = m->stats().samples();
  const v1::Measurement* cublas = index.Find(row.cublas_variant, dtype, shape);
  if (cublas && cublas->status() == "ok" && cublas->tflops() > 0)
    row.cublas_share = m->tflops() / cublas->tflops();
  return row;
}

void SetChange(const std::string& table_id, ReportRow& row, const v1::Measurement& self,
               const ReportRow& prev_row, const v1::Measurement& prev) {
  row.vs = prev_row.label;
  row.vs_variant = prev_row.variant;
  const std::vector<double> a = Samples(prev), b = Samples(self);
  if (a.size() >= 2 && b.size() >= 2) {
    const std::string key = table_id + "|" + row.variant + "|" + prev.variant() + "|" + row.dtype +
                            "|" + ShapeText(row.shape);
    row.change = SpeedChange(a, b, SeedFor(key));
  } else {
    row.change = SpeedChangeFromMedians(prev.stats().median_ms(), self.stats().median_ms());
  }
}

// Rows of a ladder at one shape: specs in order, each compared with the fastest measured of its
// previous rungs.
std::vector<ReportRow> Ladder(const std::string& table_id, const RunIndex& index,
                              const std::vector<RungSpec>& specs, const v1::Shape& shape) {
  std::vector<ReportRow> rows;
  std::vector<const v1::Measurement*> found;
  for (const RungSpec& spec : specs) {
    const v1::Measurement* m = nullptr;
    rows.push_back(RowFor(index, spec.label, spec.what, spec.variant, spec.dtype, shape, &m));
    found.push_back(m);
  }
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (!rows[i].measured()) continue;
    int best = -1;
    for (int p : specs[i].previous) {
      if (!rows[p].measured()) continue;
      if (best < 0 || rows[p].tflops > rows[best].tflops) best = p;
    }
    if (best >= 0) SetChange(table_id, rows[i], *found[i], rows[best], *found[best]);
  }
  return rows;
}

ReportRow CublasRow(const RunIndex& index, const std::string& dtype, const v1::Shape& shape) {
  const v1::Measurement* m = nullptr;
  return RowFor(index, "cuBLAS", "cuBLAS " + dtype + " (reference)", "cublas_" + dtype, dtype,
                shape, &m);
}

std::vector<RungSpec> LadderBSpecs(const std::string& dt) {
  return {
      {"B0", "sync load, 1 stage", "abl_L0_R1_bl0_s1_sw1", dt, {}},
      {"B1", "cp.async, 1 stage", "abl_L1_R1_bl0_s1_sw1", dt, {0}},
      {"B2", "sync load, double buffer (2 stages)", "abl_L0_R1_bl0_s2_sw1", dt, {0}},
      {"B3", "cp.async, double buffer (2 stages)", "abl_L1_R1_bl0_s2_sw1", dt, {2}},
      {"B4", "cp.async, 3 stages", "abl_L1_R1_bl0_s3_sw1", dt, {3}},
      {"B5", "cp.async, 4 stages", "abl_L1_R1_bl0_s4_sw1", dt, {4}},
      {"B6", "+ register double buffer", "abl_L1_R1_bl0_s4_sw1_rb1", dt, {5}},
  };
}

ReportTable ArchTable(const RunIndex& index, const v1::Shape& shape) {
  ReportTable t;
  t.id = "arch";
  t.title = "Architecture: SIMT vs TF32 tensor cores vs cuBLAS";
  t.scope = "fp32 / tf32 / bf16, " + ShapeText(shape);
  const std::string abl = index.AblationDType();
  const std::vector<RungSpec> specs = {
      {"S1", "SIMT: tiling", "simt_tiling", "fp32", {}},
      {"S2", "SIMT: + A transposed into smem", "simt_at", "fp32", {0}},
      {"S3", "SIMT: + swizzle (no bank conflicts)", "simt_at_swizzle", "fp32", {1}},
      {"S4", "SIMT: + coalesced write-back", "simt_at_swizzle_rw", "fp32", {2}},
      {"S5", "SIMT: + double buffer", "simt_at_swizzle_dbf_rw", "fp32", {3}},
      {"cuBLAS fp32", "cuBLAS FP32 (SIMT reference)", "cublas_fp32", "fp32", {}},
      {"T1", "TF32 mma: sync load, swizzle, double buffer", "tf32_sync_swizzle_dbf", "tf32", {4}},
      {"T2", "TF32 mma: cp.async, swizzle, double buffer", "tf32_cpasync_swizzle_dbf", "tf32", {6}},
      {"cuBLAS tf32", "cuBLAS TF32 (tensor cores)", "cublas_tf32", "tf32", {5}},
      {"best " + abl, "fastest ablation variant (" + abl + " mma)", "abl_*", abl, {}},
      {"cuBLAS " + abl, "cuBLAS " + abl, "cublas_" + abl, abl, {}},
  };
  t.rows = Ladder(t.id, index, specs, shape);
  t.notes = {
      "Both sides must be optimised implementations: the SIMT ladder with tiling, swizzle, double "
      "buffer and coalesced writes against tensor-core kernels, never bare SIMT against tuned "
      "tensor cores.",
      "This table answers whether tensor cores are worth it. SIMT rows stay out of the ldmatrix / "
      "cp.async ladders: their several-fold architectural gap would be credited to ldmatrix.",
      "T1 is compared with the best SIMT rung (S5), the architectural step; cuBLAS TF32 with "
      "cuBLAS FP32.",
      "TF32 tensor-core throughput is about half of FP16/BF16: compare TF32 rows with cuBLAS TF32, "
      "not with the bf16 rows.",
  };
  return t;
}

ReportTable LadderATable(const RunIndex& index, const v1::Shape& shape) {
  ReportTable t;
  t.id = "ladder_a";
  t.title = "Ladder A: smem -> registers, ld.shared vs ldmatrix";
  const std::string dt = index.AblationDType();
  t.scope = dt + ", " + ShapeText(shape) + "; fixed: cp.async, 3 stages, swizzle";
  const std::vector<RungSpec> specs = {
      {"A1", "ld.shared, B as [k][n]", "abl_L1_R0_bl0_s3_sw1", dt, {}},
      {"A2", "ld.shared, B as [n][k]", "abl_L1_R0_bl1_s3_sw1", dt, {0}},
      {"A3", "ldmatrix", "abl_L1_R1_bl0_s3_sw1", dt, {0, 1}},
  };
  t.rows = Ladder(t.id, index, specs, shape);
  t.rows.push_back(CublasRow(index, dt, shape));
  t.notes = {
      "A3 is compared with the faster of A1 / A2: ld.shared gets its most favourable B layout, so "
      "a layout difference is not credited to ldmatrix.",
      "ldmatrix saves load instructions and address arithmetic, not bandwidth: the bytes moved are "
      "the same. ldmatrix.x4 is one warp-wide instruction (32 lanes give row addresses, the "
      "hardware gathers, transposes and broadcasts); ld.shared is per lane.",
      "When the kernel is bound by mma throughput or DRAM the difference can vanish from "
      "wall-clock "
      "time (pitfall 2): look at the smem->register micro-benchmark and the ncu LSU counters "
      "before concluding ldmatrix does not help.",
  };
  return t;
}

ReportTable LadderBTable(const RunIndex& index, const v1::Shape& shape) {
  ReportTable t;
  t.id = "ladder_b";
  t.title = "Ladder B: global -> smem, sync load vs cp.async, stages";
  const std::string dt = index.AblationDType();
  t.scope = dt + ", " + ShapeText(shape) + "; fixed: ldmatrix, B as [k][n], swizzle";
  t.rows = Ladder(t.id, index, LadderBSpecs(dt), shape);
  t.rows.push_back(CublasRow(index, dt, shape));
  t.notes = {
      "Double buffering and cp.async are added one step at a time (B0->B2 adds the second buffer, "
      "B2->B3 swaps in cp.async), so each increment can be attributed.",
      "Single-buffer cp.async (B1 against B0) is expected to be flat or slightly slower. That is "
      "normal, not a failed experiment: cp.async pays only when a second buffer lets the copy "
      "overlap the mma (pitfall 1).",
      "Multistage needs cp.async.wait_group<STAGES-2>; wait_group 0 would degrade it to a single "
      "buffer. 4 stages use more shared memory and can lower occupancy.",
  };
  return t;
}

ReportTable ShapesTable(const RunIndex& index) {
  ReportTable t;
  t.id = "shapes";
  t.title = "Shape sensitivity: ladder B across shapes (TFLOPS)";
  const std::string dt = index.AblationDType();
  t.scope = dt + "; K in {256, 512, 1024, 4096, 8192} x M = N in {512, 4096}";
  std::vector<RungSpec> specs = LadderBSpecs(dt);
  std::vector<v1::Shape> shapes;
  for (std::int64_t mn : {512, 4096})
    for (std::int64_t k : {256, 512, 1024, 4096, 8192}) shapes.push_back(MakeShape(mn, mn, k));
  // Shapes of the run at which it measured these variants are shown too.
  for (const v1::Measurement* m : index.all()) {
    if (m->dtype() != dt) continue;
    bool ours = m->variant() == "cublas_" + dt;
    for (const RungSpec& s : specs) ours |= s.variant == m->variant();
    if (!ours) continue;
    if (std::none_of(shapes.begin(), shapes.end(),
                     [&](const v1::Shape& s) { return SameShape(s, m->shape()); }))
      shapes.push_back(m->shape());
  }
  std::sort(shapes.begin(), shapes.end(), ShapeLess);
  t.column_shapes = shapes;
  for (const RungSpec& s : specs) {
    t.row_keys.push_back(s.variant);
    t.row_labels.push_back(s.label);
  }
  t.row_keys.push_back("cublas_" + dt);
  t.row_labels.push_back("cuBLAS");
  // Row-major by variant: every shape of B0, then of B1, ...
  std::vector<std::vector<ReportRow>> by_shape;
  for (const v1::Shape& shape : shapes) {
    std::vector<ReportRow> rows = Ladder(t.id, index, specs, shape);
    rows.push_back(CublasRow(index, dt, shape));
    by_shape.push_back(std::move(rows));
  }
  for (std::size_t r = 0; r < t.row_keys.size(); ++r)
    for (std::size_t c = 0; c < shapes.size(); ++c) t.rows.push_back(by_shape[c][r]);
  t.notes = {
      "Small K (M = N = 4096, K = 256) is latency-bound: cp.async and multistage pipelining gain "
      "most there. Large K (8192) is compute-bound: mma throughput hides the data movement and "
      "the rungs converge.",
      "Small problems are largely served from L2 (cp.async.cg reads through L2), which is why K "
      "must be swept rather than one shape measured (pitfall 3).",
  };
  return t;
}

struct PipeName {
  std::string kind;  // baseline | ldg | cpasync
  std::string dt;    // f16 | i8 | f32
  std::string tile;  // BMxBNxBK
};

std::optional<PipeName> ParsePipe(const std::string& name) {
  // pipe_{baseline|ldg|cpasync}_{f16|i8|f32}_{BMxBNxBK}
  if (name.rfind("pipe_", 0) != 0) return std::nullopt;
  std::vector<std::string> parts;
  std::string part;
  for (char c : name.substr(5) + "_") {
    if (c == '_') {
      parts.push_back(part);
      part.clear();
    } else {
      part += c;
    }
  }
  if (parts.size() != 3) return std::nullopt;
  if (parts[0] != "baseline" && parts[0] != "ldg" && parts[0] != "cpasync") return std::nullopt;
  if (parts[1] != "f16" && parts[1] != "i8" && parts[1] != "f32") return std::nullopt;
  return PipeName{parts[0], parts[1], parts[2]};
}

std::string PipeDType(const std::string& dt) {
  return dt == "f16" ? "fp16" : dt == "i8" ? "int8" : "fp32";
}

ReportTable PipeliningTable(const RunIndex& index, const v1::Shape& shape) {
  ReportTable t;
  t.id = "pipelining";
  t.title = "Pipelining: baseline vs LDG-register vs cp.async double buffer";
  t.scope = "per dtype and tile, " + ShapeText(shape) + "; speedup against the baseline";
  std::map<std::string, std::set<std::string>> tiles;  // dt -> tiles measured
  for (const v1::Measurement* m : index.all()) {
    auto p = ParsePipe(m->variant());
    if (p && SameShape(m->shape(), shape)) tiles[p->dt].insert(p->tile);
  }
  for (const std::string dt : {"f16", "i8", "f32"}) {
    const std::string dtype = PipeDType(dt);
    std::vector<std::string> dt_tiles(tiles[dt].begin(), tiles[dt].end());
    if (dt_tiles.empty()) dt_tiles.push_back("*");  // nothing measured: the family's pattern
    for (const std::string& tile : dt_tiles) {
      const std::string suffix = "_" + dt + "_" + tile;
      const std::string tile_text = tile == "*" ? "" : ", tile " + tile;
      const std::vector<RungSpec> specs = {
          {"baseline",
           dtype + tile_text + ": load, sync, compute, sync",
           "pipe_baseline" + suffix,
           dtype,
           {}},
          {"LDG",
           dtype + tile_text + ": LDG to registers, double buffer",
           "pipe_ldg" + suffix,
           dtype,
           {0}},
          {"cp.async",
           dtype + tile_text + ": cp.async (LDGSTS), double buffer",
           "pipe_cpasync" + suffix,
           dtype,
           {0}},
      };
      std::vector<ReportRow> rows = Ladder(t.id, index, specs, shape);
      // A pattern that matched nothing keeps the pattern as its name: the row is missing.
      t.rows.insert(t.rows.end(), rows.begin(), rows.end());
    }
    t.rows.push_back(CublasRow(index, dtype, shape));
  }
  t.notes = {
      "Speedup = pipelined TFLOPS / baseline TFLOPS (the change column, against the baseline).",
      "Expected gain by the compute/load ratio of a tile, 2*BM*BN*BK / ((BM*BK + BK*BN) * "
      "sizeof(T)): below 5:1 cp.async +15-35% (IGEMM 4096^3 on GA104: LDG +18%, cp.async +35%); "
      "5-20:1 +5-15%; above 20:1 0-5% or a regression.",
      "A regression points at extra BAR.SYNC or register spills in the SASS, at doubling the "
      "shared memory across the occupancy cliff, or at too few k-tiles (K/BK >= 4) to amortise "
      "the prologue and epilogue.",
      "INT8 rows are TOPS; tolerances differ per dtype (INT8 IMMA abs 0.5, FP16 HMMA 1e-2, FP32 "
      "FFMA 1e-3), so verify before comparing.",
  };
  return t;
}

ReportTable AllTable(const RunIndex& index) {
  ReportTable t;
  t.id = "all";
  t.title = "All measurements of the run";
  t.scope = "in run order; share against the cuBLAS of the same dtype and shape";
  for (const v1::Measurement* m : index.all()) {
    const v1::Measurement* found = nullptr;
    ReportRow row = RowFor(index, std::to_string(m->sequence()), "", m->variant(), m->dtype(),
                           m->shape(), &found);
    if (found != m) {  // a repeated key: describe this one
      row.status = m->status();
      row.error = m->error();
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string PresetHint(const std::string& table_id) {
  if (table_id == "arch") return "arch";
  if (table_id == "ladder_a") return "ladder-a";
  if (table_id == "ladder_b") return "ladder-b";
  if (table_id == "shapes") return "shapes";
  if (table_id == "pipelining") return "pipelining";
  return "";
}

// ---------------------------------------------------------------- text pieces

std::string TflopsText(const ReportRow& r) {
  if (r.status == "missing") return "missing";
  if (r.status != "ok") return r.status;
  return Fixed(r.tflops, 1);
}

std::string ShareText(const ReportRow& r) {
  if (!r.measured()) return "-";
  if (!r.cublas_share) return "no " + r.cublas_variant;
  return Percent(*r.cublas_share);
}

std::string ChangeText(const ReportRow& r) {
  if (!r.change) return "-";
  return FormatChange(*r.change);
}

std::string NoiseMark(const ReportRow& r) {
  return r.change && r.change->within_noise() ? "≈" : "";
}

std::string Exact(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
}

std::string CsvField(const std::string& value) {
  if (value.find_first_of(",\"\r\n") == std::string::npos) return value;
  std::string out = "\"";
  for (char c : value) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string MdCell(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '|') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out;
}

std::string RunSummary(const v1::Run& run) {
  std::string text = "run " + std::to_string(run.id()) + " (" + run.state() + ")";
  if (!run.device().name().empty()) text += " on " + run.device().name();
  if (!run.device().compute_capability().empty())
    text += ", sm " + run.device().compute_capability();
  if (!run.device().driver_version().empty()) text += ", driver " + run.device().driver_version();
  if (!run.device().cublas_version().empty()) text += ", cuBLAS " + run.device().cublas_version();
  if (!run.clock_policy().empty()) text += "; clocks " + run.clock_policy();
  if (run.tags_size() > 0) {
    text += "; tags";
    for (const auto& tag : run.tags()) text += " " + tag;
  }
  return text;
}

}  // namespace

int ReportTable::measured() const {
  return int(
      std::count_if(rows.begin(), rows.end(), [](const ReportRow& r) { return r.measured(); }));
}

std::string ShapeText(const v1::Shape& s) {
  return std::to_string(s.m()) + "x" + std::to_string(s.n()) + "x" + std::to_string(s.k());
}

std::string FormatChange(const Change& c) {
  std::string text = SignedPercent(c.estimate) + "%";
  if (c.has_interval) text += " [" + SignedPercent(c.low) + ", " + SignedPercent(c.high) + "]";
  return text;
}

std::string HtmlEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
          out += buffer;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

Report BuildReport(const v1::GetRunResponse& run) {
  Report report;
  report.run = run.run();
  RunIndex index(run);
  const v1::Shape shape = index.ReferenceShape();
  report.tables.push_back(ArchTable(index, shape));
  report.tables.push_back(LadderATable(index, shape));
  report.tables.push_back(LadderBTable(index, shape));
  report.tables.push_back(ShapesTable(index));
  report.tables.push_back(PipeliningTable(index, shape));
  report.tables.push_back(AllTable(index));
  return report;
}

// ---------------------------------------------------------------- markdown

namespace {

std::string MdRowTable(const ReportTable& t) {
  std::string md =
      "| rung | what | variant | dtype | TFLOPS | share of cuBLAS | vs | change [95% CI] | noise "
      "|\n"
      "| --- | --- | --- | --- | ---: | ---: | --- | ---: | :---: |\n";
  for (const ReportRow& r : t.rows) {
    md += "| " + MdCell(r.label) + " | " + MdCell(r.what) + " | `" + MdCell(r.variant) + "` | " +
          r.dtype + " | " + TflopsText(r) + " | " + ShareText(r) + " | " +
          (r.vs.empty() ? "-" : MdCell(r.vs)) + " | " + ChangeText(r) + " | " + NoiseMark(r) +
          " |\n";
  }
  return md;
}

std::string MdAllTable(const ReportTable& t) {
  std::string md =
      "| # | variant | dtype | shape | TFLOPS | share of cuBLAS | status |\n"
      "| ---: | --- | --- | --- | ---: | ---: | --- |\n";
  for (const ReportRow& r : t.rows) {
    md += "| " + r.label + " | `" + MdCell(r.variant) + "` | " + r.dtype + " | " +
          ShapeText(r.shape) + " | " + TflopsText(r) + " | " + ShareText(r) + " | " +
          MdCell(r.status + (r.error.empty() ? "" : ": " + r.error)) + " |\n";
  }
  return md;
}

std::string MdShapesTable(const ReportTable& t) {
  const std::size_t columns = t.column_shapes.size();
  auto header = [&](const std::string& first) {
    std::string md = "| " + first + " |";
    for (const auto& s : t.column_shapes) md += " " + ShapeText(s) + " |";
    md += "\n| --- |";
    for (std::size_t c = 0; c < columns; ++c) md += " ---: |";
    return md + "\n";
  };
  std::string md = "TFLOPS (share of cuBLAS):\n\n" + header("rung");
  for (std::size_t r = 0; r < t.row_keys.size(); ++r) {
    md += "| " + t.row_labels[r] + " `" + t.row_keys[r] + "` |";
    for (std::size_t c = 0; c < columns; ++c) {
      const ReportRow& row = t.rows[r * columns + c];
      std::string cell = TflopsText(row);
      if (row.measured() && row.cublas_share && row.label != "cuBLAS")
        cell += " (" + Percent(*row.cublas_share, 0) + ")";
      md += " " + cell + " |";
    }
    md += "\n";
  }
  md += "\nChange against the previous rung at the same shape (≈: within noise):\n\n" +
        header("rung");
  for (std::size_t r = 0; r < t.row_keys.size(); ++r) {
    if (t.row_labels[r] == "cuBLAS" || t.row_labels[r] == "B0") continue;
    std::string vs;
    for (std::size_t c = 0; c < columns && vs.empty(); ++c) vs = t.rows[r * columns + c].vs;
    md += "| " + t.row_labels[r] + (vs.empty() ? "" : " vs " + vs) + " |";
    for (std::size_t c = 0; c < columns; ++c) {
      const ReportRow& row = t.rows[r * columns + c];
      std::string cell = row.change ? SignedPercent(row.change->estimate) + "%" : "-";
      if (row.change && row.change->within_noise()) cell += " ≈";
      md += " " + cell + " |";
    }
    md += "\n";
  }
  return md;
}

}  // namespace

std::string RenderReportMarkdown(const Report& report) {
  std::string md =
      "# Ablation report: run " + std::to_string(report.run.id()) + "\n\n" +
      RunSummary(report.run) + "\n\n" +
      "Change: speed against the previous rung, median(previous) / median(this) - 1, "
      "with a 95% bootstrap interval from the raw samples (" +
      std::to_string(kBootstrapResamples) +
      " resamples, fixed seed); ≈ marks an interval that contains 0 (within noise). "
      "Share: TFLOPS / TFLOPS of the cuBLAS of the same dtype and shape in this run.\n";
  int number = 0;
  for (const ReportTable& t : report.tables) {
    md += "\n## " + std::to_string(++number) + ". " + t.title + "\n\n_" + t.scope + "_\n\n";
    if (t.measured() == 0 && !t.rows.empty() && t.id != "all") {
      md += "Not measured in this run: all " + std::to_string(t.rows.size()) +
            " rows missing (`ablation-client sweep --preset " + PresetHint(t.id) +
            "` measures them).\n";
      continue;
    }
    if (t.id == "shapes") {
      md += MdShapesTable(t);
    } else if (t.id == "all") {
      md += t.rows.empty() ? "No measurements.\n" : MdAllTable(t);
    } else {
      md += MdRowTable(t);
    }
    if (!t.notes.empty()) {
      md += "\nReading notes:\n\n";
      for (const std::string& note : t.notes) md += "- " + note + "\n";
    }
  }
  return md;
}

// ---------------------------------------------------------------- CSV and JSON

std::string RenderReportCsv(const Report& report) {
  std::string csv =
      "table,label,what,variant,dtype,m,n,k,status,tflops,median_ms,samples,cublas_variant,"
      "cublas_share,vs,vs_variant,change,change_ci_low,change_ci_high,within_noise,error\r\n";
  for (const ReportTable& t : report.tables) {
    for (const ReportRow& r : t.rows) {
      std::vector<std::string> f = {
          t.id,
          r.label,
          r.what,
          r.variant,
          r.dtype,
          std::to_string(r.shape.m()),
          std::to_string(r.shape.n()),
          std::to_string(r.shape.k()),
          r.status,
          r.measured() ? Exact(r.tflops) : "",
          r.measured() ? Exact(r.median_ms) : "",
          r.measured() ? std::to_string(r.samples) : "",
          r.cublas_variant,
          r.cublas_share ? Exact(*r.cublas_share) : "",
          r.vs,
          r.vs_variant,
          r.change ? Exact(r.change->estimate) : "",
          r.change && r.change->has_interval ? Exact(r.change->low) : "",
          r.change && r.change->has_interval ? Exact(r.change->high) : "",
          r.change && r.change->has_interval ? (r.change->within_noise() ? "true" : "false") : "",
          r.error};
      for (std::size_t i = 0; i < f.size(); ++i) csv += (i ? "," : "") + CsvField(f[i]);
      csv += "\r\n";
    }
  }
  return csv;
}

std::string RenderReportJson(const Report& report) {
  auto number = [](bool present, double v) { return present ? Exact(v) : std::string("null"); };
  const v1::Run& run = report.run;
  std::string json = "{\n  \"run\": {\"id\": " + std::to_string(run.id()) +
                     ", \"state\": " + JsonString(run.state()) +
                     ", \"device\": " + JsonString(run.device().name()) +
                     ", \"compute_capability\": " + JsonString(run.device().compute_capability()) +
                     ", \"clock_policy\": " + JsonString(run.clock_policy()) + ", \"tags\": [";
  for (int i = 0; i < run.tags_size(); ++i) json += (i ? ", " : "") + JsonString(run.tags(i));
  json +=
      "]},\n  \"method\": {\"change\": \"median(previous)/median(this)-1\", "
      "\"interval\": \"95% percentile bootstrap\", \"resamples\": " +
      std::to_string(kBootstrapResamples) + "},\n  \"tables\": [";
  for (std::size_t ti = 0; ti < report.tables.size(); ++ti) {
    const ReportTable& t = report.tables[ti];
    json += std::string(ti ? "," : "") + "\n    {\"id\": " + JsonString(t.id) +
            ", \"title\": " + JsonString(t.title) + ", \"scope\": " + JsonString(t.scope) +
            ", \"measured\": " + std::to_string(t.measured()) + ",\n     \"notes\": [";
    for (std::size_t i = 0; i < t.notes.size(); ++i)
      json += (i ? ", " : "") + JsonString(t.notes[i]);
    json += "],\n     \"rows\": [";
    for (std::size_t ri = 0; ri < t.rows.size(); ++ri) {
      const ReportRow& r = t.rows[ri];
      const bool ci = r.change && r.change->has_interval;
      json +=
          std::string(ri ? "," : "") + "\n      {\"label\": " + JsonString(r.label) +
          ", \"what\": " + JsonString(r.what) + ", \"variant\": " + JsonString(r.variant) +
          ", \"dtype\": " + JsonString(r.dtype) + ", \"shape\": " + JsonString(ShapeText(r.shape)) +
          ", \"status\": " + JsonString(r.status) +
          ", \"tflops\": " + number(r.measured(), r.tflops) +
          ", \"median_ms\": " + number(r.measured(), r.median_ms) +
          ", \"samples\": " + number(r.measured(), r.samples) +
          ", \"cublas_variant\": " + JsonString(r.cublas_variant) +
          ", \"cublas_share\": " + number(r.cublas_share.has_value(), r.cublas_share.value_or(0)) +
          ", \"vs\": " + (r.vs.empty() ? "null" : JsonString(r.vs)) +
          ", \"change\": " + number(r.change.has_value(), r.change ? r.change->estimate : 0) +
          ", \"change_ci\": " +
          (ci ? "[" + Exact(r.change->low) + ", " + Exact(r.change->high) + "]" : "null") +
          ", \"within_noise\": " + (ci ? (r.change->within_noise() ? "true" : "false") : "null") +
          ", \"error\": " + JsonString(r.error) + "}";
    }
    json += "]}";
  }
  json += "\n  ]\n}\n";
  return json;
}

}  // namespace ablation::client::report
