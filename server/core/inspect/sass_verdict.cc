// The verdict on one function of a SASS listing: its main loop found, its loads walked to the
// compute they feed, its barriers (InspectFunction), and the verdict in words (DescribeVerdict).
// Parsing the listing and finding its loops are in sass.cc.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "server/core/inspect/sass.h"

namespace ablation::core {

namespace {

bool IsCompute(SassClass c, bool tensor) {
  return tensor ? c == SassClass::kTensorCore : c == SassClass::kFfma;
}

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

std::string HexOffset(int64_t offset) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%04llx", static_cast<long long>(offset));
  return buf;
}

SassVerdict InspectFunction(const SassFunction& f) { return LoopInspector(f).Inspect(); }

std::string DescribeVerdict(const SassVerdict& v) {
  if (!v.loop_found) return "no loop with tensor-core or FFMA instructions found";
  std::string s = v.overlap ? "overlap" : "no overlap";
  s += ": main loop " + HexOffset(v.loop_start) + ".." + HexOffset(v.loop_end) + ", " +
       std::to_string(v.compute_per_iteration) + " " + v.compute_opcode + ", " +
       std::to_string(v.loads) + " " + (v.load_opcode.empty() ? "loads" : v.load_opcode);
  if (v.overlap)
    s += "; " + std::to_string(v.overlapping_loads) + " reach " + v.compute_opcode +
         " with no BAR.SYNC between (first at " + HexOffset(v.first_overlap_load) + ")";
  else if (v.blocking_barrier >= 0)
    s += "; BAR.SYNC at " + HexOffset(v.blocking_barrier) + " separates them from " +
         v.compute_opcode;
  s += v.barrier_after_compute ? "; barrier after compute at " + HexOffset(v.barrier_after)
                               : "; no barrier after compute";
  if (v.local_loads + v.local_stores > 0)
    s += "; local memory: " + std::to_string(v.local_loads) + " LDL, " +
         std::to_string(v.local_stores) + " STL";
  return s;
}

}  // namespace ablation::core
