// The inputs a worker keeps resident between tasks (resident_inputs.h), on a fake device that
// records what each allocation holds: reuse by problem and seed, values always from the seed,
// what a layout or a reference output adds, refills, the memory bound and its evictions, the
// L2 rotation's copies per layout, and that nothing half-made or failed is kept.
#include "server/worker/resident_inputs.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

namespace ablation::worker {
namespace {

namespace k = ::ablation::kernels;

constexpr size_t kMiB = size_t(1) << 20;
constexpr size_t kGiB = kMiB << 10;
constexpr double kH200L2 = 60.0 * kMiB;

class FakeOps;

class FakeBlock final : public DeviceBlock {
 public:
  FakeBlock(FakeOps* ops, uintptr_t address, size_t bytes)
      : ops_(ops), address_(address), bytes_(bytes) {}
  ~FakeBlock() override;
  void* data() const override { return reinterpret_cast<void*>(address_); }
  size_t bytes() const override { return bytes_; }

 private:
  FakeOps* ops_;
  uintptr_t address_;
  size_t bytes_;
};

// A device of `total` bytes (of which `used_elsewhere` are someone else's) whose memory holds
// descriptions of values rather than values: "fill <seed> <count>", "T(<what B held>)", "poison".
class FakeOps final : public InputOps {
 public:
  explicit FakeOps(size_t total) : total_(total) {}

  std::string MemoryInfo(size_t* free_bytes, size_t* total_bytes) override {
    ++memory_queries;
    *free_bytes = total_ - used_elsewhere - live_bytes;
    *total_bytes = total_;
    return "";
  }
  std::string Allocate(size_t bytes, std::unique_ptr<DeviceBlock>* out) override {
    ++allocations;
    if (fail_allocations > 0 || bytes > total_ - used_elsewhere - live_bytes) {
      if (fail_allocations > 0) --fail_allocations;
      return "out of memory";
    }
    live_bytes += bytes;
    ++live_blocks;
    *out = std::make_unique<FakeBlock>(this, next_, bytes);
    next_ += bytes + 4096;
    return "";
  }
  std::string Fill(void* dst, size_t count, k::DType, uint64_t seed) override {
    if (fail_fills > 0 && --fail_fills == 0) return "launch failed";
    held[dst] = "fill " + std::to_string(seed) + " " + std::to_string(count);
    return "";
  }
  std::string Transpose(const void* src, void* dst, int64_t rows, int64_t cols, k::DType) override {
    held[dst] = "T" + std::to_string(rows) + "x" + std::to_string(cols) + "(" +
                held[const_cast<void*>(src)] + ")";
    return "";
  }
  std::string Poison(void* dst, size_t, k::DType) override {
    ++poisons;
    held[dst] = "poison";
    return "";
  }
  std::string Synchronize(const std::string&) override {
    ++syncs;
    return "";
  }
  std::string Failed(const std::string& what) override {
    failures.push_back(what);
    return what;
  }
  void Freed(uintptr_t address, size_t bytes) {
    live_bytes -= bytes;
    --live_blocks;
    held.erase(reinterpret_cast<void*>(address));
  }

  std::string At(const void* p) { return held[const_cast<void*>(p)]; }

  size_t used_elsewhere = 0;
  size_t live_bytes = 0;
  int live_blocks = 0;
  int allocations = 0, memory_queries = 0, poisons = 0, syncs = 0;
  int fail_allocations = 0;  // the next n allocations fail
  int fail_fills = 0;        // the n-th fill from now fails
  std::vector<std::string> failures;
  std::map<void*, std::string> held;

 private:
  size_t total_;
  uintptr_t next_ = 0x100000;
};

FakeBlock::~FakeBlock() { ops_->Freed(address_, bytes_); }

k::Problem Bf16(int64_t m, int64_t n, int64_t kk) { return {m, n, kk, k::DType::kBF16}; }

std::string FillOf(uint64_t seed, int64_t count) {
  return "fill " + std::to_string(seed) + " " + std::to_string(count);
}

class ResidentInputsTest : public ::testing::Test {
 protected:
  // The ops outlive the cache (declared first, destroyed last), as the device outlives it.
  FakeOps ops_{141 * kGiB};
  ResidentInputs cache_{ops_, kH200L2};
  const k::Problem p4096_ = Bf16(4096, 4096, 4096);
};

TEST_F(ResidentInputsTest, TheSameProblemAndSeedFindTheirInputsResident) {
  ProblemInputs first, second;
  ASSERT_EQ(cache_.Prepare({.problem = p4096_, .seed = 7}, &first), "");
  EXPECT_FALSE(first.reused);
  EXPECT_EQ(ops_.allocations, 3);  // A, B, C
  EXPECT_EQ(cache_.fills(), 2u);
  EXPECT_EQ(ops_.syncs, 1);
  // Random values from the seed, never zeros; C poisoned.
  const InputSeeds seeds = SeedsFor(7);
  EXPECT_EQ(ops_.At(first.a), FillOf(seeds.a, 4096 * 4096));
  EXPECT_EQ(ops_.At(first.b_kn), FillOf(seeds.b, 4096 * 4096));
  EXPECT_EQ(ops_.At(first.c), "poison");
  EXPECT_EQ(first.b_nk, nullptr);
  EXPECT_EQ(first.c_ref, nullptr);
  EXPECT_EQ(cache_.bytes(), 3 * 32 * kMiB);

  ASSERT_EQ(cache_.Prepare({.problem = p4096_, .seed = 7}, &second), "");
  EXPECT_TRUE(second.reused);
  EXPECT_EQ(second.a, first.a);
  EXPECT_EQ(second.b_kn, first.b_kn);
  EXPECT_EQ(second.c, first.c);
  EXPECT_EQ(ops_.allocations, 3) << "nothing allocated again";
  EXPECT_EQ(cache_.fills(), 2u) << "nothing filled again";
  EXPECT_EQ(ops_.syncs, 1) << "nothing to wait for";
  EXPECT_EQ(ops_.memory_queries, 1) << "no memory query either";
  // The output is poisoned before every task, resident or not.
  EXPECT_EQ(ops_.poisons, 2);
  EXPECT_EQ(ops_.At(second.a), FillOf(seeds.a, 4096 * 4096));
}

TEST_F(ResidentInputsTest, AnotherSeedOrProblemHasItsOwnInputsAndTheFirstStaysResident) {
  ProblemInputs a, b, c, again;
  ASSERT_EQ(cache_.Prepare({.problem = p4096_, .seed = 1}, &a), "");
  ASSERT_EQ(cache_.Prepare({.problem = p4096_, .seed = 2}, &b), "");
  EXPECT_FALSE(b.reused);
  EXPECT_NE(b.a, a.a);
  EXPECT_EQ(ops_.At(b.a), FillOf(SeedsFor(2).a, 4096 * 4096));
  k::Problem fp16 = p4096_;
  fp16.dtype = k::DType::kFP16;
  ASSERT_EQ(cache_.Prepare({.problem = fp16, .seed = 1}, &c), "");
  EXPECT_FALSE(c.reused) << "the dtype is part of the key";
  ASSERT_EQ(cache_.Prepare({.problem = Bf16(4096, 4096, 2048), .seed = 1}, &c), "");
  EXPECT_FALSE(c.reused) << "so is every extent";
  EXPECT_EQ(cache_.problems(), 4u);
  ASSERT_EQ(cache_.Prepare({.problem = p4096_, .seed = 1}, &again), "");
  EXPECT_TRUE(again.reused);
  EXPECT_EQ(again.a, a.a);
  EXPECT_EQ(ops_.At(again.a), FillOf(SeedsFor(1).a, 4096 * 4096));
}

TEST_F(ResidentInputsTest, WhatALayoutOrAReferenceAddsIsMadeOnceWithoutTouchingTheRest) {
  ProblemInputs kn, nk, nk_again, two;
  ASSERT_EQ(cache_.Prepare({.problem = p4096_, .seed = 3}, &kn), "");
  ASSERT_EQ(cache_.Prepare({.problem = p4096_, .seed = 3, .need_nk = true}, &nk), "");
  EXPECT_FALSE(nk.reused) << "B^T was made for it";
  EXPECT_EQ(nk.a, kn.a);
  EXPECT_EQ(cache_.fills(), 2u) << "A and B were not filled again";
  ASSERT_NE(nk.b_nk, nullptr);
  EXPECT_EQ(ops_.At(nk.b_nk), "T4096x4096(" + FillOf(SeedsFor(3).b, 4096 * 4096) + ")");
  ASSERT_EQ(cache_.Prepare({.problem = p4096_, .seed = 3, .need_nk = true}, &nk_again), "");
  EXPECT_TRUE(nk_again.reused);
  EXPECT_EQ(nk_again.b_nk, nk.b_nk);
  // A variant without B^T still finds it there, and may ignore it.
  ASSERT_EQ(cache_.Prepare({.problem = p4096_, .seed = 3}, &kn), "");
  EXPECT_TRUE(kn.reused);
  ASSERT_EQ(cache_.Prepare({.problem = p4096_, .seed = 3, .outputs = 2}, &two), "");
  EXPECT_FALSE(two.reused);
  ASSERT_NE(two.c_ref, nullptr);
  EXPECT_EQ(ops_.At(two.c_ref), "poison");
  EXPECT_EQ(cache_.bytes(), 5 * 32 * kMiB);
}

TEST_F(ResidentInputsTest, ARefillWritesTheSameValuesAgainInPlace) {
  ProblemInputs first, refilled;
  ASSERT_EQ(cache_.Prepare({.problem = p4096_, .seed = 9, .need_nk = true}, &first), "");
  ops_.held[first.a] = "what a stray variant wrote";
  ASSERT_EQ(
      cache_.Prepare({.problem = p4096_, .seed = 9, .need_nk = true, .refill = true}, &refilled),
      "");
  EXPECT_FALSE(refilled.reused);
  EXPECT_EQ(refilled.a, first.a);
  EXPECT_EQ(ops_.allocations, 4) << "A, B, C and B^T, once";
  EXPECT_EQ(ops_.At(refilled.a), FillOf(SeedsFor(9).a, 4096 * 4096));
  EXPECT_EQ(ops_.At(refilled.b_nk), "T4096x4096(" + FillOf(SeedsFor(9).b, 4096 * 4096) + ")");
  EXPECT_EQ(ops_.syncs, 2);
}

TEST_F(ResidentInputsTest, TheLeastRecentlyUsedGoFirstPastAQuarterOfTheDeviceMemory) {
  // A 1 GiB device: a quarter holds two 4096^3 bf16 problems (96 MiB each) but not three.
  FakeOps ops(kGiB);
  ResidentInputs cache(ops, kH200L2);
  ProblemInputs in;
  ASSERT_EQ(cache.Prepare({.problem = p4096_, .seed = 1}, &in), "");
  ASSERT_EQ(cache.Prepare({.problem = p4096_, .seed = 2}, &in), "");
  ASSERT_EQ(cache.Prepare({.problem = p4096_, .seed = 1}, &in), "");  // 1 is the newest now
  EXPECT_TRUE(in.reused);
  EXPECT_EQ(cache.problems(), 2u);
  ASSERT_EQ(cache.Prepare({.problem = p4096_, .seed = 3}, &in), "");
  EXPECT_EQ(cache.problems(), 2u);
  EXPECT_LE(double(cache.bytes()), kResidentMemoryShare * double(kGiB));
  ASSERT_EQ(cache.Prepare({.problem = p4096_, .seed = 1}, &in), "");
  EXPECT_TRUE(in.reused) << "seed 1 was used more recently than seed 2";
  ASSERT_EQ(cache.Prepare({.problem = p4096_, .seed = 2}, &in), "");
  EXPECT_FALSE(in.reused) << "seed 2 was evicted";
}

TEST_F(ResidentInputsTest, AProblemAboveTheShareStillRunsAloneAndOneThatCannotFitIsRefused) {
  FakeOps ops(kGiB);
  ResidentInputs cache(ops, kH200L2);
  ProblemInputs in;
  ASSERT_EQ(cache.Prepare({.problem = p4096_, .seed = 1}, &in), "");
  // 8192^3 bf16: 3 x 128 MiB, above a quarter of 1 GiB: the others go, and it is made.
  ASSERT_EQ(cache.Prepare({.problem = Bf16(8192, 8192, 8192), .seed = 1}, &in), "");
  EXPECT_EQ(cache.problems(), 1u);
  EXPECT_EQ(cache.bytes(), 3 * 128 * kMiB);
  // What someone else holds counts: refused with the numbers, as without the cache.
  ops.used_elsewhere = 600 * kMiB;
  const std::string err = cache.Prepare({.problem = Bf16(8192, 8192, 4096), .seed = 1}, &in);
  EXPECT_EQ(err,
            "problem does not fit in device memory: bf16 8192x8192x4096 needs 256.0 MiB (A 64.0, "
            "B 64.0, C 128.0) plus 256 MiB headroom; 424.0 MiB free of 1024.0 MiB");
  EXPECT_EQ(cache.problems(), 0u) << "the resident one was given back before refusing";
  EXPECT_EQ(ops.live_bytes, 0u);
}

TEST_F(ResidentInputsTest, ResidentInputsNeverMakeAProblemThatFitsNotFit) {
  FakeOps ops(kGiB);
  ResidentInputs cache(ops, kH200L2);
  ProblemInputs in;
  ASSERT_EQ(cache.Prepare({.problem = p4096_, .seed = 1}, &in), "");
  ASSERT_EQ(cache.Prepare({.problem = p4096_, .seed = 2}, &in), "");
  // 192 MiB resident + 600 MiB elsewhere leaves 232 MiB: 96 MiB + 256 MiB headroom fits only
  // once the others are gone.
  ops.used_elsewhere = 600 * kMiB;
  ASSERT_EQ(cache.Prepare({.problem = p4096_, .seed = 3}, &in), "");
  EXPECT_EQ(cache.problems(), 1u);
}

TEST_F(ResidentInputsTest, RotationCopiesAreMadeOncePerLayoutFromTheSameSeeds) {
  ProblemInputs in;
  ASSERT_EQ(cache_.Prepare({.problem = p4096_, .seed = 5, .need_nk = true}, &in), "");
  L2Plan plan;
  std::vector<InputSet> sets;
  bool reused = true;
  ASSERT_EQ(cache_.RotationSets(false, false, false, &plan, &sets, &reused), "");
  EXPECT_FALSE(reused);
  EXPECT_EQ(plan.method, L2Method::kRotate);
  ASSERT_EQ(plan.copies, 2);  // two 64 MiB sets exceed twice the 60 MiB L2
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_EQ(sets[0].a, in.a);
  EXPECT_EQ(sets[0].b, in.b_kn);
  EXPECT_EQ(ops_.At(sets[1].a), ops_.At(in.a));
  EXPECT_EQ(ops_.At(sets[1].b), ops_.At(in.b_kn));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(sets[1].a) % kInputAlign, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(sets[1].b) % kInputAlign, 0u);
  const int allocations = ops_.allocations;
  const uint64_t fills = cache_.fills();

  std::vector<InputSet> again;
  ASSERT_EQ(cache_.Prepare({.problem = p4096_, .seed = 5}, &in), "");
  ASSERT_EQ(cache_.RotationSets(false, false, false, &plan, &again, &reused), "");
  EXPECT_TRUE(reused);
  EXPECT_EQ(plan.copies, 2);
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[1].a, sets[1].a);
  EXPECT_EQ(ops_.allocations, allocations);
  EXPECT_EQ(cache_.fills(), fills);

  // B as N x K: copies of its own, B^T transposed from the logical B.
  std::vector<InputSet> nk;
  ASSERT_EQ(cache_.RotationSets(false, false, true, &plan, &nk, &reused), "");
  EXPECT_FALSE(reused);
  ASSERT_EQ(nk.size(), 2u);
  EXPECT_EQ(nk[0].b, in.b_nk);
  EXPECT_EQ(ops_.At(nk[1].b), ops_.At(in.b_nk));
  EXPECT_NE(nk[1].a, sets[1].a);
  ASSERT_EQ(cache_.RotationSets(false, false, true, &plan, &nk, &reused), "");
  EXPECT_TRUE(reused);
  // A: 32, B: 32, B^T: 32, C: 32, one copy of A and B per layout: 64 each.
  EXPECT_EQ(cache_.bytes(), (4 * 32 + 2 * 64) * kMiB);
}

// A guarded window refreshes every input before each batch (fresh values, no sync), and the
// entry is written again from its own seed the next time a task prepares it.
TEST_F(ResidentInputsTest, ARefreshWritesFreshValuesEverywhereAndTheSeedsComeBackAtTheNextPrepare) {
  ProblemInputs in;
  ASSERT_EQ(cache_.Prepare({.problem = p4096_, .seed = 5, .need_nk = true}, &in), "");
  L2Plan plan;
  std::vector<InputSet> kn, nk;
  bool reused = true;
  ASSERT_EQ(cache_.RotationSets(false, false, false, &plan, &kn, &reused), "");
  ASSERT_EQ(cache_.RotationSets(false, false, true, &plan, &nk, &reused), "");
  ASSERT_EQ(kn.size(), 2u);
  const int syncs = ops_.syncs;
  const std::string fresh_a = FillOf(SeedsFor(77).a, 4096 * 4096);
  const std::string fresh_b = FillOf(SeedsFor(77).b, 4096 * 4096);

  ASSERT_EQ(cache_.Refresh(77), "");
  EXPECT_EQ(ops_.syncs, syncs) << "enqueued in the stream, not waited for";
  EXPECT_EQ(ops_.At(in.a), fresh_a);
  EXPECT_EQ(ops_.At(in.b_kn), fresh_b);
  EXPECT_EQ(ops_.At(in.b_nk), "T4096x4096(" + fresh_b + ")");
  EXPECT_EQ(ops_.At(kn[1].a), fresh_a);
  EXPECT_EQ(ops_.At(kn[1].b), fresh_b);
  EXPECT_EQ(ops_.At(nk[1].a), fresh_a);
  EXPECT_EQ(ops_.At(nk[1].b), "T4096x4096(" + fresh_b + ")") << "the same logical B";

  ProblemInputs again;
  ASSERT_EQ(cache_.Prepare({.problem = p4096_, .seed = 5, .need_nk = true}, &again), "");
  EXPECT_FALSE(again.reused) << "the seed's values were written again";
  EXPECT_EQ(again.a, in.a);
  const std::string seed_a = FillOf(SeedsFor(5).a, 4096 * 4096);
  EXPECT_EQ(ops_.At(again.a), seed_a);
  EXPECT_EQ(ops_.At(kn[1].a), seed_a);
  EXPECT_EQ(ops_.At(nk[1].b), "T4096x4096(" + FillOf(SeedsFor(5).b, 4096 * 4096) + ")");
  ProblemInputs third;
  ASSERT_EQ(cache_.Prepare({.problem = p4096_, .seed = 5, .need_nk = true}, &third), "");
  EXPECT_TRUE(third.reused) << "written once, resident again";
}

TEST_F(ResidentInputsTest, ASmallProblemRotatesThroughManyAlignedCopies) {
  ProblemInputs in;
  const k::Problem p = Bf16(512, 512, 512);
  ASSERT_EQ(cache_.Prepare({.problem = p, .seed = 1}, &in), "");
  L2Plan plan;
  std::vector<InputSet> sets;
  bool reused = false;
  ASSERT_EQ(cache_.RotationSets(false, false, false, &plan, &sets, &reused), "");
  EXPECT_EQ(plan.copies, 121);
  ASSERT_EQ(sets.size(), 121u);
  std::set<const void*> distinct;
  for (const auto& s : sets) {
    distinct.insert(s.a);
    distinct.insert(s.b);
    EXPECT_EQ(ops_.At(s.a), FillOf(SeedsFor(1).a, 512 * 512));
  }
  EXPECT_EQ(distinct.size(), 242u);
}

TEST_F(ResidentInputsTest, HotAndFlushedL2NeedNoCopiesAndNoMemoryQuery) {
  ProblemInputs in;
  ASSERT_EQ(cache_.Prepare({.problem = p4096_, .seed = 1}, &in), "");
  const int queries = ops_.memory_queries;
  L2Plan plan;
  std::vector<InputSet> sets;
  bool reused = false;
  ASSERT_EQ(cache_.RotationSets(true, false, false, &plan, &sets, &reused), "");
  EXPECT_EQ(plan.method, L2Method::kHot);
  EXPECT_EQ(sets.size(), 1u);
  EXPECT_TRUE(reused);
  ASSERT_EQ(cache_.RotationSets(false, true, false, &plan, &sets, &reused), "");
  EXPECT_EQ(plan.method, L2Method::kFlush);
  EXPECT_EQ(sets.size(), 1u);
  EXPECT_EQ(ops_.memory_queries, queries);
  EXPECT_EQ(cache_.bytes(), 3 * 32 * kMiB);
}

TEST_F(ResidentInputsTest, TheRotationFallsBackToTheFlushOnlyWhenItWouldWithoutTheCache) {
  FakeOps ops(4 * kGiB);
  ResidentInputs cache(ops, kH200L2);
  ProblemInputs in;
  ASSERT_EQ(cache.Prepare({.problem = p4096_, .seed = 1}, &in), "");
  ASSERT_EQ(cache.Prepare({.problem = p4096_, .seed = 2}, &in), "");
  // 200 MiB free beside both problems: 64 MiB of copies are more than a quarter of it, but not of
  // the 296 MiB free without the other problem, which therefore goes.
  ops.used_elsewhere = (4096 - 192 - 200) * kMiB;
  L2Plan plan;
  std::vector<InputSet> sets;
  bool reused = true;
  ASSERT_EQ(cache.RotationSets(false, false, false, &plan, &sets, &reused), "");
  EXPECT_EQ(plan.method, L2Method::kRotate);
  EXPECT_EQ(plan.note, "");
  EXPECT_EQ(cache.problems(), 1u);
  EXPECT_EQ(sets.size(), 2u);

  // Alone and still short of memory: the flush, as without the cache, with PlanL2's note.
  cache.Clear();
  ops.used_elsewhere = 0;
  ASSERT_EQ(cache.Prepare({.problem = p4096_, .seed = 1}, &in), "");
  ops.used_elsewhere = (4096 - 96 - 200) * kMiB;
  ASSERT_EQ(cache.RotationSets(false, false, false, &plan, &sets, &reused), "");
  EXPECT_EQ(plan.method, L2Method::kFlush);
  EXPECT_NE(plan.note.find("flushed before each sample"), std::string::npos) << plan.note;
  EXPECT_EQ(sets.size(), 1u);
  EXPECT_EQ(cache.problems(), 1u) << "its own inputs stay";
}

TEST_F(ResidentInputsTest, CopiesThatCannotBeAllocatedMakeTheFlushAndSaySo) {
  ProblemInputs in;
  ASSERT_EQ(cache_.Prepare({.problem = p4096_, .seed = 1}, &in), "");
  ops_.fail_allocations = 1;  // the first try; there is nothing else to give back
  L2Plan plan;
  std::vector<InputSet> sets;
  bool reused = true;
  ASSERT_EQ(cache_.RotationSets(false, false, false, &plan, &sets, &reused), "");
  EXPECT_EQ(plan.method, L2Method::kFlush);
  EXPECT_EQ(plan.copies, 1);
  EXPECT_EQ(plan.note,
            "allocating 1 copies of the inputs for the L2 rotation failed (out of memory): the L2 "
            "is flushed before each sample");
  EXPECT_EQ(sets.size(), 1u);
  EXPECT_TRUE(ops_.failures.empty()) << "not the measurement's failure";
  // Another problem resident is given back before the flush is settled for.
  ASSERT_EQ(cache_.Prepare({.problem = p4096_, .seed = 2}, &in), "");
  ops_.fail_allocations = 1;
  ASSERT_EQ(cache_.RotationSets(false, false, false, &plan, &sets, &reused), "");
  EXPECT_EQ(plan.method, L2Method::kRotate);
  EXPECT_EQ(cache_.problems(), 1u);
}

TEST_F(ResidentInputsTest, NothingHalfMadeIsKeptAndClearGivesEverythingBack) {
  ProblemInputs in;
  ops_.fail_fills = 2;  // B's fill
  const std::string err = cache_.Prepare({.problem = p4096_, .seed = 1}, &in);
  EXPECT_EQ(err, "filling B: launch failed");
  EXPECT_EQ(ops_.failures, std::vector<std::string>{"filling B: launch failed"});
  EXPECT_EQ(cache_.problems(), 0u);
  EXPECT_EQ(ops_.live_bytes, 0u);
  ASSERT_EQ(cache_.Prepare({.problem = p4096_, .seed = 1}, &in), "");
  EXPECT_FALSE(in.reused) << "made again";
  L2Plan plan;
  std::vector<InputSet> sets;
  bool reused = false;
  ASSERT_EQ(cache_.RotationSets(false, false, false, &plan, &sets, &reused), "");
  EXPECT_GT(ops_.live_bytes, 0u);
  cache_.Clear();
  EXPECT_EQ(cache_.problems(), 0u);
  EXPECT_EQ(cache_.bytes(), 0u);
  EXPECT_EQ(ops_.live_bytes, 0u);
  EXPECT_EQ(ops_.live_blocks, 0);
  // With nothing current there are no sets to give.
  EXPECT_NE(cache_.RotationSets(false, false, false, &plan, &sets, &reused), "");
}

}  // namespace
}  // namespace ablation::worker
