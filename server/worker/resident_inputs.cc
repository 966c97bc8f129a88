#include "server/worker/resident_inputs.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace ablation::worker {

namespace k = ::ablation::kernels;

namespace {

size_t AlignUp(size_t bytes) { return (bytes + kInputAlign - 1) / kInputAlign * kInputAlign; }

double MiB(double bytes) { return bytes / double(1u << 20); }

/// The byte sizes of a problem's parts.
struct Sizes {
  size_t a, b, c;
  explicit Sizes(const k::Problem& p)
      : a(size_t(p.m * p.k) * size_t(k::ElementBytes(p.dtype))),
        b(size_t(p.k * p.n) * size_t(k::ElementBytes(p.dtype))),
        c(size_t(p.m * p.n) * size_t(k::OutputBytes(p.dtype))) {}
  /// One set of the L2 rotation: A then B, each 256-byte aligned.
  size_t stride() const { return AlignUp(a) + AlignUp(b); }
};

size_t BytesOf(const std::unique_ptr<DeviceBlock>& b) { return b ? b->bytes() : 0; }

}  // namespace

InputSeeds SeedsFor(uint64_t seed) {
  // Different constants so A and B never share a random stream even when seed is 0.
  return {seed ^ 0x243f6a8885a308d3ull, seed ^ 0x9e3779b97f4a7c15ull};
}

struct ResidentInputs::Entry {
  k::Problem problem;
  uint64_t seed = 0;
  std::unique_ptr<DeviceBlock> a, b_kn, b_nk, c, c_ref;
  struct Rotation {
    std::unique_ptr<DeviceBlock> copies;  // every set but the first, A then B, aligned
    int64_t sets = 0;                     // including the first
  };
  Rotation rotation[2];    // by B layout: [0] K x N, [1] N x K
  uint64_t used = 0;       // ResidentInputs::clock_ at the last use
  bool refreshed = false;  // Refresh wrote other values than the seed's: Prepare writes them again

  size_t bytes() const {
    return BytesOf(a) + BytesOf(b_kn) + BytesOf(b_nk) + BytesOf(c) + BytesOf(c_ref) +
           BytesOf(rotation[0].copies) + BytesOf(rotation[1].copies);
  }
};

ResidentInputs::ResidentInputs(InputOps& ops, double l2_bytes) : ops_(ops), l2_bytes_(l2_bytes) {}
ResidentInputs::~ResidentInputs() = default;

size_t ResidentInputs::bytes() const {
  size_t total = 0;
  for (const auto& e : entries_) total += e->bytes();
  return total;
}
size_t ResidentInputs::problems() const { return entries_.size(); }
uint64_t ResidentInputs::fills() const { return fills_; }
uint64_t ResidentInputs::allocations() const { return allocations_; }

void ResidentInputs::Clear() {
  entries_.clear();
  current_ = nullptr;
}

ResidentInputs::Entry* ResidentInputs::Find(const k::Problem& p, uint64_t seed) {
  for (const auto& e : entries_) {
    const k::Problem& q = e->problem;
    if (e->seed == seed && q.dtype == p.dtype && q.m == p.m && q.n == p.n && q.k == p.k) {
      return e.get();
    }
  }
  return nullptr;
}

void ResidentInputs::EvictOthers(const Entry* keep) {
  std::erase_if(entries_, [&](const std::unique_ptr<Entry>& e) { return e.get() != keep; });
  if (current_ != keep) current_ = nullptr;
}

bool ResidentInputs::EvictForBudget(const Entry* keep, size_t more, size_t total) {
  const double budget = kResidentMemoryShare * double(total);
  bool evicted = false;
  while (double(bytes() + more) > budget) {
    auto victim = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->get() == keep) continue;
      if (victim == entries_.end() || (*it)->used < (*victim)->used) victim = it;
    }
    if (victim == entries_.end()) break;  // only `keep` left: it may exceed the share alone
    if (victim->get() == current_) current_ = nullptr;
    entries_.erase(victim);
    evicted = true;
  }
  return evicted;
}

std::string ResidentInputs::Allocate(const Entry* keep, size_t bytes,
                                     std::unique_ptr<DeviceBlock>* out) {
  ++allocations_;
  std::string err = ops_.Allocate(bytes, out);
  if (err.empty() || entries_.size() <= (keep ? 1u : 0u)) return err;
  // Fragmented or short of memory: what the other problems hold is given back first.
  EvictOthers(keep);
  ++allocations_;
  return ops_.Allocate(bytes, out);
}

// Asked before allocating, so that a problem that cannot fit is refused with the numbers rather
// than failing half-way with an allocation error.
std::string ResidentInputs::CheckFits(const Entry* keep, const k::Problem& p, bool need_nk,
                                      int outputs, size_t need, size_t free_bytes,
                                      size_t total_bytes) {
  std::string err;
  if (double(need) + double(kMemoryHeadroomBytes) <= double(free_bytes)) return "";
  if (entries_.size() > (keep ? 1u : 0u)) {
    EvictOthers(keep);
    if (!(err = ops_.MemoryInfo(&free_bytes, &total_bytes)).empty()) return err;
    if (double(need) + double(kMemoryHeadroomBytes) <= double(free_bytes)) return "";
  }
  const Sizes s(p);
  const double a = double(s.a), b = double(s.b) * (need_nk ? 2 : 1),
               c = double(s.c) * double(outputs);
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "problem does not fit in device memory: %s %" PRId64 "x%" PRId64 "x%" PRId64
                " needs %.1f MiB (A %.1f, B %.1f, C %.1f) plus %.0f MiB headroom; %.1f MiB free "
                "of %.1f MiB",
                std::string(k::ToString(p.dtype)).c_str(), p.m, p.n, p.k, MiB(a + b + c), MiB(a),
                MiB(b), MiB(c), MiB(kMemoryHeadroomBytes), MiB(double(free_bytes)),
                MiB(double(total_bytes)));
  return buf;
}

// What a resident entry lacks for this request (B^T, the reference's output) is made; `*made`
// tells whether anything was enqueued that the caller must wait for.
std::string ResidentInputs::Extend(Entry& e, const InputRequest& req, bool* made) {
  const k::Problem& p = req.problem;
  const Sizes s(p);
  const InputSeeds seeds = SeedsFor(req.seed);
  std::string err;
  if (req.refill) {
    fills_ += 2;
    if (!(err = ops_.Fill(e.a->data(), size_t(p.m * p.k), p.dtype, seeds.a)).empty() ||
        !(err = ops_.Fill(e.b_kn->data(), size_t(p.k * p.n), p.dtype, seeds.b)).empty()) {
      return ops_.Failed("filling the inputs again: " + err);
    }
    if (e.b_nk &&
        !(err = ops_.Transpose(e.b_kn->data(), e.b_nk->data(), p.k, p.n, p.dtype)).empty()) {
      return ops_.Failed("transposing B: " + err);
    }
    *made = true;
  }
  if (req.need_nk && !e.b_nk) {
    if (!(err = Allocate(&e, s.b, &e.b_nk)).empty()) {
      return ops_.Failed("allocating B (N x K): " + err);
    }
    if (!(err = ops_.Transpose(e.b_kn->data(), e.b_nk->data(), p.k, p.n, p.dtype)).empty()) {
      return ops_.Failed("transposing B: " + err);
    }
    *made = true;
  }
  if (req.outputs > 1 && !e.c_ref) {
    if (!(err = Allocate(&e, s.c, &e.c_ref)).empty()) {
      return ops_.Failed("allocating the reference output: " + err);
    }
    *made = true;
  }
  return "";
}

namespace {

/// Fills every set of a rotation's copies: A from seeds.a; B from seeds.b, or, for N x K copies
/// where `b_kn` is given, as the transpose of the logical B.
std::string FillCopies(InputOps& ops, const k::Problem& p, const InputSeeds& seeds, bool nk,
                       unsigned char* pool, int64_t extra, const void* b_kn, uint64_t* fills) {
  const Sizes s(p);
  std::string err;
  for (int64_t i = 0; i < extra && err.empty(); ++i) {
    void* a = pool + size_t(i) * s.stride();
    void* b = pool + size_t(i) * s.stride() + AlignUp(s.a);
    ++*fills;
    err = ops.Fill(a, size_t(p.m * p.k), p.dtype, seeds.a);
    if (!err.empty()) break;
    if (nk && b_kn != nullptr) {
      err = ops.Transpose(b_kn, b, p.k, p.n, p.dtype);
    } else {
      ++*fills;
      err = ops.Fill(b, size_t(p.k * p.n), p.dtype, seeds.b);
    }
  }
  return err;
}

}  // namespace

std::string ResidentInputs::Refresh(uint64_t seed) {
  Entry* e = current_;
  if (!e) return "internal error: no current problem to refresh";
  const k::Problem& p = e->problem;
  const InputSeeds seeds = SeedsFor(seed);
  e->refreshed = true;
  std::string err;
  fills_ += 2;
  if (!(err = ops_.Fill(e->a->data(), size_t(p.m * p.k), p.dtype, seeds.a)).empty() ||
      !(err = ops_.Fill(e->b_kn->data(), size_t(p.k * p.n), p.dtype, seeds.b)).empty())
    return ops_.Failed("refreshing the inputs: " + err);
  if (e->b_nk &&
      !(err = ops_.Transpose(e->b_kn->data(), e->b_nk->data(), p.k, p.n, p.dtype)).empty())
    return ops_.Failed("refreshing B (N x K): " + err);
  for (int nk = 0; nk < 2; ++nk) {
    Entry::Rotation& rot = e->rotation[nk];
    if (!rot.copies) continue;
    err = FillCopies(ops_, p, seeds, nk == 1, static_cast<unsigned char*>(rot.copies->data()),
                     rot.sets - 1, e->b_kn->data(), &fills_);
    if (!err.empty()) return ops_.Failed("refreshing the L2 rotation's copies: " + err);
  }
  return "";
}

std::string ResidentInputs::Make(const InputRequest& req, Entry** made) {
  const k::Problem& p = req.problem;
  const Sizes s(p);
  size_t free_bytes = 0, total_bytes = 0;
  std::string err = ops_.MemoryInfo(&free_bytes, &total_bytes);
  if (!err.empty()) return err;
  const size_t need = s.a + s.b * (req.need_nk ? 2 : 1) + s.c * size_t(std::max(req.outputs, 1));
  if (EvictForBudget(nullptr, need, total_bytes) &&
      !(err = ops_.MemoryInfo(&free_bytes, &total_bytes)).empty()) {
    return err;
  }
  err = CheckFits(nullptr, p, req.need_nk, req.outputs, need, free_bytes, total_bytes);
  if (!err.empty()) return err;
  entries_.push_back(std::make_unique<Entry>());
  Entry* e = entries_.back().get();
  *made = e;
  e->problem = p;
  e->seed = req.seed;
  if (!(err = Allocate(e, s.a, &e->a)).empty()) return ops_.Failed("allocating A: " + err);
  if (!(err = Allocate(e, s.b, &e->b_kn)).empty()) return ops_.Failed("allocating B: " + err);
  if (!(err = Allocate(e, s.c, &e->c)).empty()) return ops_.Failed("allocating C: " + err);
  const InputSeeds seeds = SeedsFor(req.seed);
  fills_ += 2;
  if (!(err = ops_.Fill(e->a->data(), size_t(p.m * p.k), p.dtype, seeds.a)).empty()) {
    return ops_.Failed("filling A: " + err);
  }
  if (!(err = ops_.Fill(e->b_kn->data(), size_t(p.k * p.n), p.dtype, seeds.b)).empty()) {
    return ops_.Failed("filling B: " + err);
  }
  InputRequest rest = req;
  rest.refill = false;  // just filled
  bool extended = false;
  return Extend(*e, rest, &extended);
}

std::string ResidentInputs::Prepare(const InputRequest& req, ProblemInputs* out) {
  *out = {};
  const k::Problem& p = req.problem;
  const Sizes s(p);
  Entry* e = Find(p, req.seed);
  std::string err;
  bool made = false;
  if (e) {
    const size_t more =
        (req.need_nk && !e->b_nk ? s.b : 0) + (req.outputs > 1 && !e->c_ref ? s.c : 0);
    if (more > 0) {
      size_t free_bytes = 0, total_bytes = 0;
      if (!(err = ops_.MemoryInfo(&free_bytes, &total_bytes)).empty()) return err;
      if (EvictForBudget(e, more, total_bytes) &&
          !(err = ops_.MemoryInfo(&free_bytes, &total_bytes)).empty()) {
        return err;
      }
      if (double(more) + double(kMemoryHeadroomBytes) > double(free_bytes)) {
        // What it lacks does not fit beside what is resident: made again from nothing, as it
        // would be without the cache, so that the memory check is the one it always was.
        Clear();
        e = nullptr;
      }
    }
  }
  if (e) {
    InputRequest asked = req;
    asked.refill = req.refill || e->refreshed;
    err = Extend(*e, asked, &made);
    if (err.empty() && e->refreshed) {
      // A guarded window wrote other values: the seed's are written again, copies included.
      const InputSeeds seeds = SeedsFor(e->seed);
      for (int nk = 0; nk < 2 && err.empty(); ++nk) {
        Entry::Rotation& rot = e->rotation[nk];
        if (!rot.copies) continue;
        err = FillCopies(ops_, p, seeds, nk == 1, static_cast<unsigned char*>(rot.copies->data()),
                         rot.sets - 1, e->b_kn->data(), &fills_);
        if (!err.empty()) err = ops_.Failed("filling the L2 rotation's copies again: " + err);
      }
      e->refreshed = false;
      made = true;
    }
  } else {
    made = true;
    err = Make(req, &e);
  }
  // Outputs start poisoned, every time, so that a variant that writes nothing never looks
  // plausible.
  if (err.empty() && !(err = ops_.Poison(e->c->data(), size_t(p.m * p.n), p.dtype)).empty()) {
    err = ops_.Failed("poisoning C: " + err);
  }
  if (err.empty() && req.outputs > 1 &&
      !(err = ops_.Poison(e->c_ref->data(), size_t(p.m * p.n), p.dtype)).empty()) {
    err = ops_.Failed("poisoning the reference output: " + err);
  }
  if (err.empty() && made) err = ops_.Synchronize("preparing inputs");
  if (!err.empty()) {
    // Half-made or in doubt: nothing of it is kept.
    if (e) std::erase_if(entries_, [&](const std::unique_ptr<Entry>& x) { return x.get() == e; });
    current_ = nullptr;
    return err;
  }
  e->used = ++clock_;
  current_ = e;
  out->a = e->a->data();
  out->b_kn = e->b_kn->data();
  out->b_nk = e->b_nk ? e->b_nk->data() : nullptr;
  out->c = e->c->data();
  out->c_ref = req.outputs > 1 ? e->c_ref->data() : nullptr;
  out->reused = !made;
  return "";
}

std::string ResidentInputs::RotationSets(bool hot_l2, bool flush_l2, bool nk, L2Plan* plan,
                                         std::vector<InputSet>* sets, bool* reused) {
  sets->clear();
  *reused = true;
  Entry* e = current_;
  if (!e || (nk && !e->b_nk)) return "internal error: the L2 rotation has no inputs to copy";
  const k::Problem& p = e->problem;
  const Sizes s(p);
  sets->push_back({e->a->data(), nk ? e->b_nk->data() : e->b_kn->data()});
  if (RequestedL2Method(hot_l2, flush_l2) != L2Method::kRotate) {
    *plan = PlanL2(hot_l2, flush_l2, double(s.stride()), l2_bytes_, 0);
    return "";
  }
  Entry::Rotation& rot = e->rotation[nk ? 1 : 0];
  if (!rot.copies) {
    *reused = false;
    size_t free_bytes = 0, total_bytes = 0;
    std::string err = ops_.MemoryInfo(&free_bytes, &total_bytes);
    if (!err.empty()) return err;
    *plan = PlanL2(false, false, double(s.stride()), l2_bytes_, double(free_bytes));
    Entry::Rotation& other = e->rotation[nk ? 0 : 1];
    if (plan->method != L2Method::kRotate && (entries_.size() > 1 || other.copies)) {
      // The copies would fit without what else is resident: that goes first, so that the cache
      // never turns a rotation into a flush.
      EvictOthers(e);
      other = {};
      if (!(err = ops_.MemoryInfo(&free_bytes, &total_bytes)).empty()) return err;
      *plan = PlanL2(false, false, double(s.stride()), l2_bytes_, double(free_bytes));
    }
    if (plan->method != L2Method::kRotate) return "";
    const int64_t extra = plan->copies - 1;
    const size_t pool_bytes = size_t(extra) * s.stride();
    EvictForBudget(e, pool_bytes, total_bytes);
    if (!(err = Allocate(e, pool_bytes, &rot.copies)).empty()) {
      // Not the measurement's failure: the flush makes the L2 just as cold, at a higher wall cost.
      plan->method = L2Method::kFlush;
      plan->note = "allocating " + std::to_string(extra) + " copies of the inputs for the L2 " +
                   "rotation failed (" + err + "): the L2 is flushed before each sample";
      plan->copies = 1;
      return "";
    }
    err =
        FillCopies(ops_, p, SeedsFor(e->seed), nk, static_cast<unsigned char*>(rot.copies->data()),
                   extra, e->b_kn->data(), &fills_);
    if (!err.empty()) {
      rot = {};
      return ops_.Failed("filling the inputs' copies for the L2 rotation: " + err);
    }
    if (!(err = ops_.Synchronize("preparing the L2 rotation's inputs")).empty()) {
      rot = {};
      return err;
    }
    rot.sets = plan->copies;
  } else {
    *plan = L2Plan{};
    plan->method = L2Method::kRotate;
    plan->copies = rot.sets;
  }
  const auto* pool = static_cast<const unsigned char*>(rot.copies->data());
  for (int64_t i = 0; i + 1 < rot.sets; ++i) {
    sets->push_back({pool + size_t(i) * s.stride(), pool + size_t(i) * s.stride() + AlignUp(s.a)});
  }
  return "";
}

}  // namespace ablation::worker
