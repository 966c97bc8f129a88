#include "server/core/inspect/sass.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <optional>

namespace ablation::core {

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

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

std::string Hex(int64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%04llx", static_cast<long long>(v));
  return buf;
}

bool IsCompute(SassClass c, bool tensor) {
  return tensor ? c == SassClass::kTensorCore : c == SassClass::kFfma;
}

// Parses "/*0870*/   @!P0 LDG.E.128 R72, [R72.64] ;   /* 0x... */" (cuobjdump) or the same
// without the encoding comment (nvdisasm). Returns nullopt for anything else.
std::optional<SassInstruction> ParseInstructionLine(std::string_view line,
                                                    std::string* target_label) {
  line = Trim(line);
  if (!StartsWith(line, "/*")) return std::nullopt;
  size_t close = line.find("*/");
  if (close == std::string_view::npos) return std::nullopt;
  std::optional<int64_t> offset = ParseHex(line.substr(2, close - 2));
  if (!offset) return std::nullopt;  // an encoding-only line: "/* 0x000fe2... */"
  std::string_view rest = Trim(line.substr(close + 2));
  size_t semi = rest.find(';');
  if (semi == std::string_view::npos) return std::nullopt;
  rest = Trim(rest.substr(0, semi));
  if (rest.empty()) return std::nullopt;
  // nvdisasm may put a "{" / "}" around dual-issue pairs on older archs.
  while (!rest.empty() && (rest.front() == '{' || rest.front() == '}')) rest = Trim(rest.substr(1));

  SassInstruction ins;
  ins.offset = *offset;
  if (rest.front() == '@') {
    size_t sp = rest.find_first_of(" \t");
    if (sp == std::string_view::npos) return std::nullopt;
    ins.predicate = std::string(rest.substr(0, sp));
    rest = Trim(rest.substr(sp));
  }
  size_t sp = rest.find_first_of(" \t");
  ins.opcode = std::string(rest.substr(0, sp));
  ins.operands = sp == std::string_view::npos ? "" : std::string(Trim(rest.substr(sp)));
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
    std::string_view last = Trim(comma == std::string_view::npos ? ops : ops.substr(comma + 1));
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
    std::string_view t = Trim(line);
    if (t.empty()) continue;

    if (StartsWith(t, "code for ")) {  // cuobjdump: "code for sm_90"
      arch = std::string(Trim(t.substr(9)));
      continue;
    }
    if (StartsWith(t, "Function : ")) {  // cuobjdump
      start(std::string(Trim(t.substr(11))));
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

namespace {

// The verdict on one function, step by step: its main loop found (most compute; on a tie the
// larger loop, the K-tile loop around an inner k-step loop), its body counted, each global load
// walked to the next compute (a barrier between them: the load does not overlap), the barriers
// after the compute and before each refill, and the excerpt of the loop as `sass` prints it.
class LoopInspector {
 public:
  explicit LoopInspector(const SassFunction& f) : ins_(f.instructions), loops_(FindLoops(f)) {
    tensor_ = std::any_of(ins_.begin(), ins_.end(),
                          [](const SassInstruction& i) { return i.cls == SassClass::kTensorCore; });
  }

  SassVerdict Inspect() {
    for (const auto& i : ins_) {
      v_.local_loads += i.mnemonic == "LDL";
      v_.local_stores += i.mnemonic == "STL";
    }
    if (!FindMain()) return v_;
    CountBody();
    FindOverlaps();
    FindBarriers();
    Excerpt();
    return v_;
  }

 private:
  struct Walk {
    size_t compute = SIZE_MAX;
    size_t barrier = SIZE_MAX;
  };

  int Count(const SassLoop& l) const { return tensor_ ? l.tensor : l.ffma; }
  bool Compute(size_t j) const { return IsCompute(ins_[j].cls, tensor_); }
  bool Inner(const SassLoop& l) const { return &l != main_ && l.head >= head_ && l.tail <= tail_; }

  bool FindMain() {
    for (const auto& l : loops_) {
      if (Count(l) == 0) continue;
      if (!main_ || Count(l) > Count(*main_) ||
          (Count(l) == Count(*main_) && l.tail - l.head > main_->tail - main_->head))
        main_ = &l;
    }
    if (!main_) return false;
    head_ = main_->head;
    tail_ = main_->tail;
    n_ = tail_ - head_ + 1;
    v_.loop_found = true;
    v_.loop_start = ins_[head_].offset;
    v_.loop_end = ins_[tail_].offset;
    v_.loop_instructions = int(n_);
    v_.compute_per_iteration = Count(*main_);
    return true;
  }

  // The body's compute (its most frequent opcode; in inner loops), loads and local accesses.
  void CountBody() {
    std::vector<bool> inner(ins_.size(), false);
    for (const auto& l : loops_)
      if (Inner(l))
        for (size_t j = l.head; j <= l.tail; ++j) inner[j] = true;
    std::map<std::string, int> compute_ops;
    bool ldg = false, ldgsts = false;
    std::string other_load;
    for (size_t j = head_; j <= tail_; ++j) {
      const auto& i = ins_[j];
      if (Compute(j)) {
        ++compute_ops[i.mnemonic];
        if (inner[j]) ++v_.compute_in_inner_loops;
      }
      if (i.cls == SassClass::kGlobalLoad) {
        ++v_.loads;
        if (i.mnemonic == "LDG")
          ldg = true;
        else if (i.mnemonic == "LDGSTS")
          ldgsts = true;
        else
          other_load = i.mnemonic;
      }
      if (i.cls == SassClass::kLocal) ++v_.local_in_loop;
    }
    for (const auto& [op, c] : compute_ops)
      if (v_.compute_opcode.empty() || c > compute_ops[v_.compute_opcode]) v_.compute_opcode = op;
    v_.load_opcode = ldg && ldgsts ? "LDG+LDGSTS" : ldg ? "LDG" : ldgsts ? "LDGSTS" : other_load;
  }

  // Walks the loop body cyclically (the back branch leads to the head) from `from`, stopping at
  // the first compute instruction; reports it and the first barrier met before it.
  Walk WalkFrom(size_t from) const {
    Walk w;
    for (size_t step = 1; step <= n_; ++step) {
      size_t j = head_ + (from - head_ + step) % n_;
      if (Compute(j)) {
        w.compute = j;
        break;
      }
      if (ins_[j].cls == SassClass::kBarrier && w.barrier == SIZE_MAX) w.barrier = j;
    }
    return w;
  }

  void FindOverlaps() {
    overlaps_.assign(ins_.size(), false);
    for (size_t j = head_; j <= tail_; ++j) {
      if (ins_[j].cls != SassClass::kGlobalLoad) continue;
      const Walk w = WalkFrom(j);
      if (w.compute == SIZE_MAX) continue;
      if (w.barrier == SIZE_MAX) {
        overlaps_[j] = true;
        ++v_.overlapping_loads;
        if (v_.first_overlap_load < 0) {
          v_.first_overlap_load = ins_[j].offset;
          v_.overlap_compute = ins_[w.compute].offset;
        }
      } else if (v_.blocking_barrier < 0) {
        v_.blocking_barrier = ins_[w.barrier].offset;
      }
    }
    v_.overlap = v_.overlapping_loads > 0;
  }

  // A barrier after the last compute, and before each refill (from the refill back around the
  // loop, a barrier must come before any shared load).
  void FindBarriers() {
    size_t last_compute = head_;
    for (size_t j = head_; j <= tail_; ++j)
      if (Compute(j)) last_compute = j;
    const Walk after = WalkFrom(last_compute);
    if (after.barrier != SIZE_MAX) {
      v_.barrier_after_compute = true;
      v_.barrier_after = ins_[after.barrier].offset;
    }
    bool any_refill = false, refills_fenced = true;
    for (size_t j = head_; j <= tail_ && refills_fenced; ++j) {
      if (ins_[j].mnemonic != "LDGSTS" && ins_[j].cls != SassClass::kSharedStore) continue;
      any_refill = true;
      bool fenced = false;
      for (size_t step = 1; step < n_; ++step) {
        const size_t b = head_ + (j - head_ + n_ - step) % n_;
        if (ins_[b].cls == SassClass::kBarrier) {
          fenced = true;
          if (v_.refill_barrier < 0) v_.refill_barrier = ins_[b].offset;
          break;
        }
        if (ins_[b].cls == SassClass::kSharedLoad) break;
      }
      refills_fenced = fenced;
    }
    v_.barrier_before_refill = any_refill && refills_fenced;
    if (!v_.barrier_before_refill) v_.refill_barrier = -1;
  }

  // The excerpt's marker of instruction j: a switch over the classes, alike in shape to their
  // words (ToString above) and with markers of its own.
  std::string Marker(size_t j) const {
    const auto& i = ins_[j];
    switch (i.cls) {
      case SassClass::kGlobalLoad:
        return overlaps_[j] ? "LOAD>" : "LOAD";
      case SassClass::kTensorCore:
        return "MMA";
      case SassClass::kFfma:
        return tensor_ ? "" : "FFMA";
      case SassClass::kBarrier:
        return "BAR";
      case SassClass::kAsyncWait:
        return "WAIT";
      case SassClass::kSharedStore:
        return "STS";
      case SassClass::kSharedLoad:
        return "LDS";
      case SassClass::kLocal:
        return "LOCAL!";
      case SassClass::kBranch:
        if (j == tail_) return "LOOP^";
        if (std::count(inner_tails_.begin(), inner_tails_.end(), i.offset)) return "LOOP^";
        return "";
      default:
        break;
    }
    if (std::count(inner_heads_.begin(), inner_heads_.end(), i.offset)) return "LOOP";
    return "";
  }

  // Every marked instruction; runs of compute or unmarked ones shortened.
  void Excerpt() {
    for (const auto& l : loops_) {
      if (!Inner(l)) continue;
      inner_heads_.push_back(ins_[l.head].offset);
      inner_tails_.push_back(ins_[l.tail].offset);
    }
    constexpr size_t kKeepRun = 4;  // runs longer than this keep their first 2 and last 1 lines
    size_t j = head_;
    while (j <= tail_) {
      const std::string m = Marker(j);
      const bool foldable = m.empty() || m == "MMA" || m == "FFMA" || m == "LDS";
      size_t end = j;
      while (foldable && end + 1 <= tail_ && Marker(end + 1) == m) ++end;
      const size_t len = end - j + 1;
      if (foldable && len > kKeepRun) {
        for (size_t k = j; k < j + 2; ++k) v_.excerpt.push_back({ins_[k].offset, m, ins_[k].text});
        const std::string what = m.empty() ? "other instructions" : ins_[j].mnemonic;
        v_.excerpt.push_back({-1, m, "... " + std::to_string(len - 3) + " more " + what});
        v_.excerpt.push_back({ins_[end].offset, m, ins_[end].text});
      } else {
        for (size_t k = j; k <= end; ++k)
          v_.excerpt.push_back({ins_[k].offset, Marker(k), ins_[k].text});
      }
      j = end + 1;
    }
  }

  const std::vector<SassInstruction>& ins_;
  const std::vector<SassLoop> loops_;
  bool tensor_ = false;
  const SassLoop* main_ = nullptr;
  size_t head_ = 0, tail_ = 0, n_ = 0;
  std::vector<bool> overlaps_;
  std::vector<int64_t> inner_heads_, inner_tails_;
  SassVerdict v_;
};

}  // namespace

SassVerdict InspectFunction(const SassFunction& f) { return LoopInspector(f).Inspect(); }

std::string DescribeVerdict(const SassVerdict& v) {
  if (!v.loop_found) return "no loop with tensor-core or FFMA instructions found";
  std::string s = v.overlap ? "overlap" : "no overlap";
  s += ": main loop " + Hex(v.loop_start) + ".." + Hex(v.loop_end) + ", " +
       std::to_string(v.compute_per_iteration) + " " + v.compute_opcode + ", " +
       std::to_string(v.loads) + " " + (v.load_opcode.empty() ? "loads" : v.load_opcode);
  if (v.overlap)
    s += "; " + std::to_string(v.overlapping_loads) + " reach " + v.compute_opcode +
         " with no BAR.SYNC between (first at " + Hex(v.first_overlap_load) + ")";
  else if (v.blocking_barrier >= 0)
    s += "; BAR.SYNC at " + Hex(v.blocking_barrier) + " separates them from " + v.compute_opcode;
  s += v.barrier_after_compute ? "; barrier after compute at " + Hex(v.barrier_after)
                               : "; no barrier after compute";
  if (v.local_loads + v.local_stores > 0)
    s += "; local memory: " + std::to_string(v.local_loads) + " LDL, " +
         std::to_string(v.local_stores) + " STL";
  return s;
}

}  // namespace ablation::core
