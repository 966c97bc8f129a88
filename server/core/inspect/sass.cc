// A SASS listing parsed (cuobjdump or nvdisasm): its functions, each instruction classed, and
// the loops of a function found. The verdict on a function's main loop is in sass_verdict.cc.
#include "server/core/inspect/sass.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

#include "common/text.h"

namespace ablation::core {

namespace {

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::optional<int64_t> ParseHex(std::string_view s) {
  if (StartsWith(s, "0x") || StartsWith(s, "0X")) s.remove_prefix(2);
  if (s.empty() || s.size() > 15) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
            : (c >= 'a' && c <= 'f')                    ? c - 'a' + 10
            : (c >= 'A' && c <= 'F')                    ? c - 'A' + 10
                                                        : -1;
    if (d < 0) return std::nullopt;
    v = v * 16 + d;
  }
  return v;
}

// Parses "/*0870*/   @!P0 LDG.E.128 R72, [R72.64] ;   /* 0x... */" (cuobjdump) or the same
// without the encoding comment (nvdisasm). Returns nullopt for anything else.
std::optional<SassInstruction> ParseInstructionLine(std::string_view line,
                                                    std::string* target_label) {
  line = common::TrimSpace(line);
  if (!StartsWith(line, "/*")) return std::nullopt;
  size_t close = line.find("*/");
  if (close == std::string_view::npos) return std::nullopt;
  std::optional<int64_t> offset = ParseHex(line.substr(2, close - 2));
  if (!offset) return std::nullopt;  // an encoding-only line: "/* 0x000fe2... */"
  std::string_view rest = common::TrimSpace(line.substr(close + 2));
  size_t semi = rest.find(';');
  if (semi == std::string_view::npos) return std::nullopt;
  rest = common::TrimSpace(rest.substr(0, semi));
  if (rest.empty()) return std::nullopt;
  // nvdisasm may put a "{" / "}" around dual-issue pairs on older archs.
  while (!rest.empty() && (rest.front() == '{' || rest.front() == '}'))
    rest = common::TrimSpace(rest.substr(1));

  SassInstruction ins;
  ins.offset = *offset;
  if (rest.front() == '@') {
    size_t sp = rest.find_first_of(" \t");
    if (sp == std::string_view::npos) return std::nullopt;
    ins.predicate = std::string(rest.substr(0, sp));
    rest = common::TrimSpace(rest.substr(sp));
  }
  size_t sp = rest.find_first_of(" \t");
  ins.opcode = std::string(rest.substr(0, sp));
  ins.operands =
      sp == std::string_view::npos ? "" : std::string(common::TrimSpace(rest.substr(sp)));
  // The mnemonic is upper case; modifiers may hold lower case (HGMMA.64x256x16.F32.BF16).
  const size_t dot = ins.opcode.find('.');
  for (size_t i = 0; i < ins.opcode.size(); ++i) {
    const auto c = static_cast<unsigned char>(ins.opcode[i]);
    const bool in_mnemonic = dot == std::string::npos || i < dot;
    if (!((in_mnemonic ? std::isupper(c) : std::isalpha(c)) || std::isdigit(c) || c == '.' ||
          c == '_'))
      return std::nullopt;
  }
  ins.mnemonic = ins.opcode.substr(0, ins.opcode.find('.'));
  // "@!PT" never executes: ptxas's padding (@!PT LDS RZ, [RZ]), not a real load or store.
  ins.cls = ins.predicate == "@!PT" ? SassClass::kOther : ClassifyOpcode(ins.opcode);
  ins.text = (ins.predicate.empty() ? "" : ins.predicate + " ") + ins.opcode +
             (ins.operands.empty() ? "" : " " + ins.operands);
  if (ins.cls == SassClass::kBranch) {
    // The target is the last operand: "0xb30" (cuobjdump) or "`(.L_x_3)" (nvdisasm).
    std::string_view ops = ins.operands;
    size_t comma = ops.rfind(',');
    std::string_view last =
        common::TrimSpace(comma == std::string_view::npos ? ops : ops.substr(comma + 1));
    if (auto t = ParseHex(last)) {
      ins.target = *t;
    } else {
      size_t open = last.find('(');
      size_t end = last.find(')');
      if (open != std::string_view::npos && end != std::string_view::npos && end > open)
        *target_label = std::string(last.substr(open + 1, end - open - 1));
    }
  }
  return ins;
}

}  // namespace

// Words of an enum by a switch rather than a table: the compiler names any value left out
// (-Wswitch). Such switches look alike across the core; what they map differs.
std::string_view ToString(SassClass c) {
  switch (c) {
    case SassClass::kOther:
      return "other";
    case SassClass::kGlobalLoad:
      return "global load";
    case SassClass::kSharedStore:
      return "shared store";
    case SassClass::kSharedLoad:
      return "shared load";
    case SassClass::kTensorCore:
      return "tensor core";
    case SassClass::kFfma:
      return "ffma";
    case SassClass::kBarrier:
      return "barrier";
    case SassClass::kAsyncWait:
      return "async wait";
    case SassClass::kLocal:
      return "local memory";
    case SassClass::kBranch:
      return "branch";
    case SassClass::kExit:
      return "exit";
  }
  return "?";
}

SassClass ClassifyOpcode(std::string_view opcode) {
  std::string_view m = opcode.substr(0, opcode.find('.'));
  if (m == "LDG" || m == "LDGSTS" || m == "UTMALDG" || m == "UBLKCP") return SassClass::kGlobalLoad;
  if (m == "STS") return SassClass::kSharedStore;
  if (m == "LDS" || m == "LDSM") return SassClass::kSharedLoad;
  if (m == "HMMA" || m == "IMMA" || m == "HGMMA" || m == "IGMMA" || m == "QGMMA" || m == "DMMA" ||
      m == "BMMA")
    return SassClass::kTensorCore;
  if (m == "FFMA") return SassClass::kFfma;
  // BAR.SYNC, BAR.RED make every thread wait; BAR.ARV only arrives.
  if (m == "BAR" && opcode.find(".ARV") == std::string_view::npos) return SassClass::kBarrier;
  if (m == "LDGDEPBAR" || m == "DEPBAR") return SassClass::kAsyncWait;
  if (m == "LDL" || m == "STL") return SassClass::kLocal;
  if (m == "BRA" || m == "JMP") return SassClass::kBranch;
  if (m == "EXIT" || m == "RET") return SassClass::kExit;
  return SassClass::kOther;
}

std::vector<SassFunction> ParseSass(std::string_view listing) {
  std::vector<SassFunction> functions;
  std::string arch;
  // Per function: labels (nvdisasm) and the branches that named one.
  std::map<std::string, int64_t> labels;
  std::vector<std::pair<size_t, std::string>> pending;
  std::string pending_label;
  auto finish = [&] {
    if (functions.empty()) return;
    auto& f = functions.back();
    for (const auto& [index, label] : pending) {
      auto it = labels.find(label);
      if (it != labels.end()) f.instructions[index].target = it->second;
    }
    // A block barrier followed by EXIT is a way out (a warp-specialised kernel's end), never a
    // barrier between a load and the next compute; ptxas may place it inside a loop's address
    // range (the spin of an mbarrier wait branches back from after it).
    for (size_t i = 0; i + 1 < f.instructions.size(); ++i) {
      if (f.instructions[i].cls == SassClass::kBarrier &&
          f.instructions[i + 1].cls == SassClass::kExit)
        f.instructions[i].cls = SassClass::kOther;
    }
    labels.clear();
    pending.clear();
  };
  auto start = [&](std::string name) {
    finish();
    SassFunction f;
    f.name = std::move(name);
    f.arch = arch;
    functions.push_back(std::move(f));
  };

  size_t pos = 0;
  std::vector<std::string> unplaced_labels;
  while (pos <= listing.size()) {
    size_t nl = listing.find('\n', pos);
    std::string_view line =
        listing.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? listing.size() + 1 : nl + 1;
    std::string_view t = common::TrimSpace(line);
    if (t.empty()) continue;

    if (StartsWith(t, "code for ")) {  // cuobjdump: "code for sm_90"
      arch = std::string(common::TrimSpace(t.substr(9)));
      continue;
    }
    if (StartsWith(t, "Function : ")) {  // cuobjdump
      start(std::string(common::TrimSpace(t.substr(11))));
      continue;
    }
    if (StartsWith(t, ".section") && t.find(".text.") != std::string_view::npos) {  // nvdisasm
      size_t b = t.find(".text.") + 6;
      size_t e = t.find_first_of(", \t", b);
      start(std::string(t.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b)));
      continue;
    }
    if (t.back() == ':' && t.find(' ') == std::string_view::npos) {  // nvdisasm label ".L_x_3:"
      unplaced_labels.emplace_back(t.substr(0, t.size() - 1));
      continue;
    }
    std::string target_label;
    auto ins = ParseInstructionLine(t, &target_label);
    if (!ins) continue;
    if (functions.empty()) start("");
    auto& f = functions.back();
    for (auto& l : unplaced_labels) labels[l] = ins->offset;
    unplaced_labels.clear();
    if (!target_label.empty()) pending.emplace_back(f.instructions.size(), target_label);
    f.instructions.push_back(std::move(*ins));
  }
  finish();
  return functions;
}

std::vector<SassLoop> FindLoops(const SassFunction& f) {
  std::map<int64_t, size_t> index_of;
  for (size_t i = 0; i < f.instructions.size(); ++i) index_of[f.instructions[i].offset] = i;
  std::vector<SassLoop> loops;
  for (size_t i = 0; i < f.instructions.size(); ++i) {
    const auto& ins = f.instructions[i];
    if (ins.cls != SassClass::kBranch || ins.target < 0 || ins.target > ins.offset) continue;
    auto it = index_of.find(ins.target);
    if (it == index_of.end()) continue;
    // "BRA 0x1f30" at 0x1f30 is the trap after EXIT, not a loop.
    if (it->second == i) continue;
    SassLoop loop;
    loop.head = it->second;
    loop.tail = i;
    for (size_t j = loop.head; j <= loop.tail; ++j) {
      loop.tensor += f.instructions[j].cls == SassClass::kTensorCore;
      loop.ffma += f.instructions[j].cls == SassClass::kFfma;
    }
    loops.push_back(loop);
  }
  std::sort(loops.begin(), loops.end(), [](const SassLoop& a, const SassLoop& b) {
    return a.head != b.head ? a.head < b.head : a.tail > b.tail;
  });
  return loops;
}

}  // namespace ablation::core
