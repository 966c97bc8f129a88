// One Store shared by several threads, and a read-only reader in another thread while the
// daemon's Store writes.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "db/error.h"
#include "db/store.h"
#include "tests/db/store_test_support.h"

namespace ablation::db {
namespace {

using testing::CodeOf;
using testing::FullMeasurement;
using testing::MakeRun;
using testing::StoreTest;

TEST_F(StoreTest, ReadOnlyReaderInAnotherThreadWhileWriting) {
  const int64_t run = store_->CreateRun(MakeRun({"nightly"}));
  constexpr int kWrites = 150;
  std::atomic<bool> writing{true};
  std::atomic<int> reads{0};
  std::string reader_error;

  std::thread reader([&] {
    try {
      auto reader_store = Store::OpenReadOnly(path_);
      EXPECT_TRUE(reader_store->read_only());
      size_t last = 0;
      MeasurementFilter f;
      f.tag = "nightly";
      f.page_size = 1000;
      do {
        const size_t now = reader_store->QueryMeasurements(f).measurements.size();
        EXPECT_GE(now, last) << "a reader saw rows disappear";
        last = now;
        ASSERT_TRUE(reader_store->GetRun(run).has_value());
        ++reads;
      } while (writing.load());
      EXPECT_EQ(reader_store->QueryMeasurements(f).measurements.size(),
                static_cast<size_t>(kWrites));
      EXPECT_EQ(CodeOf([&] { reader_store->CreateRun(MakeRun()); }), Error::Code::kInvalidArgument);
    } catch (const std::exception& e) {
      reader_error = e.what();
    }
  });
  std::thread writer([&] {
    for (int i = 0; i < kWrites; ++i) {
      v1::Measurement x = FullMeasurement(run);
      x.set_sequence(i);
      store_->InsertMeasurement(x);
    }
    writing = false;
  });
  writer.join();
  reader.join();
  EXPECT_EQ(reader_error, "");
  EXPECT_GT(reads.load(), 0);
}

TEST_F(StoreTest, SeveralThreadsShareOneStore) {
  const int64_t run = store_->CreateRun(MakeRun());
  constexpr int kThreads = 4;
  constexpr int kEach = 25;
  std::vector<std::thread> threads;
  std::vector<std::vector<int64_t>> ids(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        v1::Measurement x = FullMeasurement(run);
        x.set_sequence(t * kEach + i);
        ids[t].push_back(store_->InsertMeasurement(x));
        MeasurementFilter f;
        f.run_id = run;
        f.page_size = 10;
        store_->QueryMeasurements(f);  // reads interleaved with the other threads' writes
        store_->GetRun(run);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  std::set<int64_t> unique;
  for (const auto& v : ids) unique.insert(v.begin(), v.end());
  EXPECT_EQ(unique.size(), static_cast<size_t>(kThreads * kEach));
  EXPECT_EQ(store_->GetRun(run)->ok(), kThreads * kEach);
  EXPECT_EQ(store_->MeasurementsOfRun(run, true).size(), static_cast<size_t>(kThreads * kEach));
}

}  // namespace
}  // namespace ablation::db
