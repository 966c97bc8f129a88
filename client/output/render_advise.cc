// advise and sass: prose with aligned fields for people, a grid for the other formats.
#include <algorithm>
#include <cctype>
#include <cstdio>

#include "client/output/render.h"

namespace ablation::client {
namespace {

std::string TileLabel(const v1::AdviseRequest& r) {
  return std::to_string(r.bm()) + "x" + std::to_string(r.bn()) + "x" + std::to_string(r.bk()) +
         " " + r.dtype();
}

std::string Hex4(std::int64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04llx", static_cast<long long>(v));
  return buf;
}

}  // namespace

Table AdviceTable(const v1::AdviseRequest& request, const v1::AdviseResponse& r) {
  Table table;
  table.columns = {{"field", "field"}, {"value", "value"}};
  const v1::SmemBudget& s = r.smem();
  const bool contradicted = r.rule_check() == v1::RULE_CHECK_CONTRADICTED;
  // This GPU's answer first where it contradicts the rule of thumb: the measurement outranks it.
  if (contradicted) AddField(table, "answer", "answer", r.lead());
  AddField(table, "tile", "tile", TileLabel(request));
  AddField(table, "arch", "arch", r.arch() + " (" + r.arch_gpus() + ")");
  table.rows.push_back({Cell("compute/load ratio", "ratio"),
                        Cell(FormatFixed(r.ratio(), 1) + " FLOP/byte", FormatExact(r.ratio()))});
  AddField(table, "rule", "rule",
           r.rule() + (contradicted ? " (contradicted by this GPU's measurement)" : ""));
  if (!r.rule_verdict().empty())
    AddField(table, "rule_check", "measured vs rule", r.rule_verdict());
  AddField(table, "rule_reason", "why", r.rule_reason());
  AddField(table, "single_bytes", "single buffer",
           FormatBytes(s.single_bytes()) + " (A " + FormatBytes(s.a_bytes()) + " + B " +
               FormatBytes(s.b_bytes()) + ")");
  AddField(table, "double_bytes", "double buffer", FormatBytes(s.double_bytes()));
  AddField(table, "smem_per_sm", "smem per SM", FormatBytes(s.smem_per_sm()));
  AddField(table, "smem_per_block_max", "smem per block (max)",
           FormatBytes(s.smem_per_block_max()));
  AddField(table, "cliff_bytes", "cliff (2 blocks/SM)", FormatBytes(s.cliff_bytes()));
  AddField(table, "blocks_per_sm_single", "blocks/SM single", Int(s.blocks_per_sm_single()));
  AddField(table, "blocks_per_sm_double", "blocks/SM double", Int(s.blocks_per_sm_double()));
  AddField(table, "smem_verdict", "smem verdict", s.verdict());
  const v1::MeasuredAdvice& m = r.measured();
  AddField(table, "measured", "measured", m.summary());
  if (!m.note().empty()) AddField(table, "measured_note", "note", m.note());
  for (const auto& p : m.points())
    AddField(table, "measured." + p.variant(), p.variant(),
             FormatFixed(p.tflops(), 2) + " TFLOPS at " + FormatShape(p.shape()) + " (run " +
                 Int(p.run_id()) + ")");
  return table;
}

std::string RenderAdvice(const v1::AdviseRequest& request, const v1::AdviseResponse& r) {
  std::string out;
  if (r.rule_check() == v1::RULE_CHECK_CONTRADICTED)
    out = r.lead() + "\nrule (contradicted by the measurement): " + r.rule() + " (expects " +
          r.rule_expects() + ")\n";
  return out + "advice for " + TileLabel(request) + " on " + r.arch() + "\n" +
         RenderText(AdviceTable(request, r));
}

Table SassFamilyTable(const v1::SassResponse& response) {
  Table table;
  table.columns = {{"variant", "variant"},
                   {"dtype", "dtype"},
                   {"verdict", "verdict"},
                   {"compute", "compute/iter", Align::kRight},
                   {"loads", "loads", Align::kRight},
                   {"overlapping_loads", "overlapping", Align::kRight},
                   {"barrier_after_compute", "barrier after"},
                   {"local", "LDL/STL", Align::kRight},
                   {"error", "error"}};
  std::vector<const v1::SassKernel*> kernels = {&response.kernel()};
  for (const auto& k : response.family()) kernels.push_back(&k);
  for (const v1::SassKernel* k : kernels) {
    const bool ok = k->error().empty() && k->loop_found();
    table.rows.push_back(
        {k->variant(), k->dtype(), k->verdict(),
         ok ? Cell(Int(k->compute_per_iteration()) + " " + k->compute_opcode(),
                   Int(k->compute_per_iteration()))
            : Cell(Dash(), ""),
         ok ? Cell(Int(k->loads()) + " " + k->load_opcode(), Int(k->loads())) : Cell(Dash(), ""),
         ok ? Cell(Int(k->overlapping_loads())) : Cell(Dash(), ""),
         ok ? Cell(k->barrier_after_compute() ? "yes" : "no") : Cell(Dash(), ""),
         k->error().empty() ? Cell(Int(k->local_loads() + k->local_stores())) : Cell(Dash(), ""),
         k->error().empty() ? Cell(Dash(), "") : Cell(k->error())});
  }
  return table;
}

std::string RenderSass(const v1::SassResponse& r) {
  const v1::SassKernel& k = r.kernel();
  std::string out = k.variant() + " " + k.dtype() + " " + r.arch() + ": ";
  std::string verdict = k.verdict();
  for (char& c : verdict) c = char(std::toupper(static_cast<unsigned char>(c)));
  out += verdict + "\n";
  out += "  kernel  " + k.symbol() + "\n";
  if (!k.build().empty()) out += "  build   " + k.build() + "\n";
  out += "  from    " + r.binary() + " (" + r.tool() + ")\n";
  if (!k.error().empty()) return out + "  error   " + k.error() + "\n";
  if (!k.loop_found()) return out + "  " + k.summary() + "\n";
  std::size_t width = 0;
  for (const auto& c : k.checks()) width = std::max(width, c.name().size());
  for (const auto& c : k.checks()) {
    out += std::string("  ") + (c.passed() ? "[ok]   " : "[FAIL] ") + c.name() +
           std::string(width - c.name().size() + 2, ' ') + c.detail() + "\n";
  }
  if (!r.family().empty()) {
    out += "\nfamily:\n";
    std::string text = RenderText(SassFamilyTable(r));
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t nl = text.find('\n', start);
      if (nl == std::string::npos) nl = text.size();
      out += "  " + text.substr(start, nl - start) + "\n";
      start = nl + 1;
    }
  }
  out += "\nmain loop " + Hex4(k.loop_start()) + ".." + Hex4(k.loop_end()) + " (" +
         Int(k.loop_instructions()) + " instructions); LOAD> = a load that reaches " +
         k.compute_opcode() + " with no BAR.SYNC between:\n";
  for (const auto& l : k.excerpt()) {
    std::string marker = l.marker();
    marker.resize(std::max<std::size_t>(marker.size(), 6), ' ');
    out += "  " + (l.offset() >= 0 ? Hex4(l.offset()) : std::string("    ")) + "  " + marker +
           "  " + l.text() + "\n";
  }
  return out;
}

}  // namespace ablation::client