// The Store's measurement queries: each filter, pagination, and the refusals, over a data set
// across three runs, variants, dtypes, shapes, statuses and times.
#include <gmock/gmock.h>
#include <algorithm>

#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "db/error.h"
#include "db/store.h"
#include "tests/db/db_test_support.h"
#include "tests/db/store_test_support.h"

namespace ablation::db {
namespace {

using testing::CodeOf;
using ::testing::ElementsAre;
using testing::FullMeasurement;
using ::testing::HasSubstr;
using testing::kBaseMs;
using testing::MakeRun;
using testing::RawDb;
using testing::StoreTest;

// A data set across three runs, variants, dtypes, shapes, statuses and times; each filter test
// compares the store's answer with the same predicate applied here.
class QueryTest : public StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    nightly_ = store_->CreateRun(MakeRun({"nightly", "h200"}));
    adhoc_ = store_->CreateRun(MakeRun({"adhoc"}));
    untagged_ = store_->CreateRun(MakeRun());
    const std::vector<std::string> variants = {"abl_L0_R0_bl0_s1_sw1", "abl_L1_R1_bl0_s3_sw1",
                                               "abl_L1_R1_bl1_s3_sw0", "pipe_cp_async",
                                               "cublas_default"};
    const std::vector<std::string> dtypes = {"bf16", "fp16"};
    const std::vector<std::array<int64_t, 3>> shapes = {
        {1024, 1024, 1024}, {4096, 4096, 4096}, {4096, 2048, 1024}};
    const int64_t runs[] = {nightly_, adhoc_, untagged_};
    int i = 0;
    for (const auto& shape : shapes) {
      for (const auto& dtype : dtypes) {
        for (const auto& variant : variants) {
          v1::Measurement x = FullMeasurement(runs[i % 3]);
          x.set_sequence(i);
          x.set_variant(variant);
          x.set_dtype(dtype);
          x.mutable_shape()->set_m(shape[0]);
          x.mutable_shape()->set_n(shape[1]);
          x.mutable_shape()->set_k(shape[2]);
          x.set_status(i % 7 == 3    ? v1::MEASUREMENT_STATUS_FAILED
                       : i % 11 == 5 ? v1::MEASUREMENT_STATUS_SKIPPED
                                     : v1::MEASUREMENT_STATUS_OK);
          x.set_created_at_ms(kBaseMs + 1000 * i);
          x.clear_sample_ms();
          x.add_sample_ms(1.0 + i);
          x.add_sample_ms(2.0 + i);
          x.set_id(store_->InsertMeasurement(x));
          all_.push_back(x);
          ++i;
        }
      }
    }
    ASSERT_EQ(all_.size(), 30u);
  }

  // Every page of the query, asserting no id repeats and ids ascend across pages.
  std::vector<int64_t> QueryAll(MeasurementFilter filter, int32_t page_size = 4) {
    filter.page_size = page_size;
    std::vector<int64_t> ids;
    for (int pages = 0; pages < 100; ++pages) {
      const MeasurementPage page = store_->QueryMeasurements(filter);
      EXPECT_LE(static_cast<int32_t>(page.measurements.size()), page_size);
      for (const auto& x : page.measurements) {
        EXPECT_TRUE(ids.empty() ||
                    (filter.newest_first ? x.id() < ids.back() : x.id() > ids.back()))
            << "ids out of order or repeated";
        ids.push_back(x.id());
      }
      if (page.next_page_token.empty()) return ids;
      EXPECT_EQ(static_cast<int32_t>(page.measurements.size()), page_size)
          << "a short page that still has a next token";
      filter.page_token = page.next_page_token;
    }
    ADD_FAILURE() << "pagination did not end";
    return ids;
  }

  std::vector<int64_t> Expected(const std::function<bool(const v1::Measurement&)>& keep) {
    std::vector<int64_t> ids;
    for (const auto& x : all_) {
      if (keep(x)) ids.push_back(x.id());
    }
    return ids;
  }

  int64_t nightly_ = 0, adhoc_ = 0, untagged_ = 0;
  std::vector<v1::Measurement> all_;
};

TEST_F(QueryTest, NoFilterReturnsEverythingInIdOrder) {
  EXPECT_EQ(QueryAll({}), Expected([](auto&) { return true; }));
}

// Newest first, page after page, with a filter: the same rows in the reverse order, and its page
// tokens are its own (an oldest-first token is refused, not misread).
TEST_F(QueryTest, NewestFirstPagesThroughTheSameRowsInReverse) {
  MeasurementFilter f;
  f.variant_glob = "abl_*_s3_*";
  std::vector<int64_t> expected = Expected([](const v1::Measurement& x) {
    return x.variant().starts_with("abl_") && x.variant().find("_s3_") != std::string::npos;
  });
  std::reverse(expected.begin(), expected.end());
  f.newest_first = true;
  EXPECT_EQ(QueryAll(f, 5), expected);
  MeasurementFilter oldest = f;
  oldest.newest_first = false;
  oldest.page_size = 5;
  const auto page = store_->QueryMeasurements(oldest);
  ASSERT_FALSE(page.next_page_token.empty());
  f.page_token = page.next_page_token;
  EXPECT_THROW(store_->QueryMeasurements(f), std::exception);
}

TEST_F(QueryTest, VariantGlob) {
  MeasurementFilter f;
  f.variant_glob = "abl_*_s3_*";
  const auto expected = Expected([](const v1::Measurement& x) {
    return x.variant().starts_with("abl_") && x.variant().find("_s3_") != std::string::npos;
  });
  EXPECT_EQ(expected.size(), 12u);
  EXPECT_EQ(QueryAll(f), expected);
  f.variant_glob = "pipe_cp_async";
  EXPECT_EQ(QueryAll(f), Expected([](auto& x) { return x.variant() == "pipe_cp_async"; }));
  f.variant_glob = "ABL_*";  // GLOB is case-sensitive, as variant names are
  EXPECT_TRUE(QueryAll(f).empty());
  f.variant_glob = "abl_L[01]_R1_*";
  EXPECT_EQ(QueryAll(f), Expected([](auto& x) { return x.variant().starts_with("abl_L1_R1_"); }));
}

TEST_F(QueryTest, DtypeAndEachShapeDimension) {
  MeasurementFilter f;
  f.dtype = "fp16";
  EXPECT_EQ(QueryAll(f), Expected([](auto& x) { return x.dtype() == "fp16"; }));
  f = {};
  f.m = 4096;
  EXPECT_EQ(QueryAll(f), Expected([](auto& x) { return x.shape().m() == 4096; }));
  f = {};
  f.n = 2048;
  EXPECT_EQ(QueryAll(f), Expected([](auto& x) { return x.shape().n() == 2048; }));
  f = {};
  f.k = 1024;
  EXPECT_EQ(QueryAll(f), Expected([](auto& x) { return x.shape().k() == 1024; }));
  f = {};
  f.m = 4096;
  f.n = 4096;
  f.k = 4096;
  f.dtype = "bf16";
  EXPECT_EQ(QueryAll(f), Expected([](auto& x) {
              return x.shape().m() == 4096 && x.shape().n() == 4096 && x.shape().k() == 4096 &&
                     x.dtype() == "bf16";
            }));
}

TEST_F(QueryTest, RunIdStatusAndTag) {
  MeasurementFilter f;
  f.run_id = adhoc_;
  EXPECT_EQ(QueryAll(f), Expected([&](auto& x) { return x.run_id() == adhoc_; }));
  f = {};
  f.status = v1::MEASUREMENT_STATUS_FAILED;
  const auto failed = Expected([](auto& x) { return x.status() == v1::MEASUREMENT_STATUS_FAILED; });
  EXPECT_FALSE(failed.empty());
  EXPECT_EQ(QueryAll(f), failed);
  f.status = v1::MEASUREMENT_STATUS_SKIPPED;
  EXPECT_EQ(QueryAll(f),
            Expected([](auto& x) { return x.status() == v1::MEASUREMENT_STATUS_SKIPPED; }));
  f = {};
  f.tag = "h200";
  EXPECT_EQ(QueryAll(f), Expected([&](auto& x) { return x.run_id() == nightly_; }));
  f.tag = "adhoc";
  EXPECT_EQ(QueryAll(f), Expected([&](auto& x) { return x.run_id() == adhoc_; }));
  f.tag = "nobody-uses-this";
  EXPECT_TRUE(QueryAll(f).empty());
  f.tag = "nightly";
  f.variant_glob = "cublas_*";
  EXPECT_EQ(QueryAll(f), Expected([&](auto& x) {
              return x.run_id() == nightly_ && x.variant() == "cublas_default";
            }));
}

TEST_F(QueryTest, TimeRangeIsSinceInclusiveUntilExclusive) {
  MeasurementFilter f;
  f.since_ms = kBaseMs + 5000;
  f.until_ms = kBaseMs + 12000;
  const auto expected = Expected([](auto& x) {
    return x.created_at_ms() >= kBaseMs + 5000 && x.created_at_ms() < kBaseMs + 12000;
  });
  ASSERT_EQ(expected.size(), 7u);  // 5..11
  EXPECT_EQ(QueryAll(f), expected);
  EXPECT_EQ(QueryAll(f).front(), all_[5].id());
  EXPECT_EQ(QueryAll(f).back(), all_[11].id());
  f = {};
  f.since_ms = kBaseMs + 29000;
  EXPECT_EQ(QueryAll(f), std::vector<int64_t>{all_[29].id()});
  f = {};
  f.until_ms = kBaseMs + 1000;
  EXPECT_EQ(QueryAll(f), std::vector<int64_t>{all_[0].id()});
}

TEST_F(QueryTest, IncludeSamplesOnlyWhenAsked) {
  MeasurementFilter f;
  f.run_id = nightly_;
  f.page_size = 1000;
  for (const auto& x : store_->QueryMeasurements(f).measurements) {
    EXPECT_TRUE(x.sample_ms().empty());
  }
  f.include_samples = true;
  const auto page = store_->QueryMeasurements(f);
  ASSERT_FALSE(page.measurements.empty());
  for (const auto& x : page.measurements) {
    EXPECT_THAT(x.sample_ms(), ElementsAre(1.0 + x.sequence(), 2.0 + x.sequence()));
  }
}

TEST_F(QueryTest, ThreePagesWithoutDuplicatesOrGaps) {
  MeasurementFilter f;
  f.page_size = 12;
  const MeasurementPage first = store_->QueryMeasurements(f);
  ASSERT_EQ(first.measurements.size(), 12u);
  ASSERT_FALSE(first.next_page_token.empty());
  f.page_token = first.next_page_token;
  const MeasurementPage second = store_->QueryMeasurements(f);
  ASSERT_EQ(second.measurements.size(), 12u);
  ASSERT_FALSE(second.next_page_token.empty());
  f.page_token = second.next_page_token;
  const MeasurementPage third = store_->QueryMeasurements(f);
  ASSERT_EQ(third.measurements.size(), 6u);
  EXPECT_TRUE(third.next_page_token.empty());

  std::vector<int64_t> ids;
  for (const auto* page : {&first, &second, &third}) {
    for (const auto& x : page->measurements) ids.push_back(x.id());
  }
  EXPECT_EQ(ids, Expected([](auto&) { return true; }));
  EXPECT_EQ(std::set<int64_t>(ids.begin(), ids.end()).size(), ids.size());

  // A page exactly filled by the last rows says there is no more.
  f = {};
  f.page_size = 30;
  EXPECT_TRUE(store_->QueryMeasurements(f).next_page_token.empty());

  // Rows added after a page was served come on the next page, nothing is skipped.
  f = {};
  f.page_size = 29;
  const MeasurementPage head = store_->QueryMeasurements(f);
  v1::Measurement late = FullMeasurement(nightly_);
  const int64_t late_id = store_->InsertMeasurement(late);
  f.page_token = head.next_page_token;
  const MeasurementPage tail = store_->QueryMeasurements(f);
  ASSERT_EQ(tail.measurements.size(), 2u);
  EXPECT_EQ(tail.measurements[0].id(), all_.back().id());
  EXPECT_EQ(tail.measurements[1].id(), late_id);
}

TEST_F(QueryTest, PageSizeDefaultsTo100AndIsCappedAt1000) {
  // 1100 more rows in one raw transaction: through the store that would be 1100 fsyncs.
  {
    RawDb raw(path_);
    raw.Exec(
        "WITH RECURSIVE i(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM i WHERE x < 1100) "
        "INSERT INTO measurements (run_id, sequence, variant, dtype, m, n, k, status, "
        "created_at_ms) SELECT " +
        std::to_string(untagged_) + ", 100 + x, 'simt_naive', 'fp32', 64, 64, 64, 'ok', " +
        std::to_string(kBaseMs) + " + x FROM i");
  }
  MeasurementFilter f;
  MeasurementPage page = store_->QueryMeasurements(f);
  EXPECT_EQ(page.measurements.size(), 100u);
  EXPECT_FALSE(page.next_page_token.empty());
  f.page_size = -5;
  EXPECT_EQ(store_->QueryMeasurements(f).measurements.size(), 100u);
  f.page_size = 1'000'000;
  page = store_->QueryMeasurements(f);
  EXPECT_EQ(page.measurements.size(), 1000u);
  f.page_token = page.next_page_token;
  EXPECT_EQ(store_->QueryMeasurements(f).measurements.size(), 130u);
  EXPECT_EQ(QueryAll({}, 1000).size(), 1130u);
}

TEST_F(QueryTest, BadPageTokensAreRefusedNamingTheToken) {
  MeasurementFilter f;
  std::string message;
  f.page_token = "not-a-token!";
  EXPECT_EQ(CodeOf([&] { store_->QueryMeasurements(f); }, &message), Error::Code::kInvalidArgument);
  EXPECT_THAT(message, HasSubstr("'not-a-token!'"));
  f.page_token = "AAAA";
  EXPECT_EQ(CodeOf([&] { store_->QueryMeasurements(f); }), Error::Code::kInvalidArgument);

  // A good token reused with another filter would silently skip rows: refused.
  f = {};
  f.page_size = 5;
  f.dtype = "bf16";
  const std::string token = store_->QueryMeasurements(f).next_page_token;
  ASSERT_FALSE(token.empty());
  f.dtype = "fp16";
  f.page_token = token;
  EXPECT_EQ(CodeOf([&] { store_->QueryMeasurements(f); }, &message), Error::Code::kInvalidArgument);
  EXPECT_THAT(message, HasSubstr("different filter"));

  // A runs token is not a measurements token.
  RunFilter rf;
  rf.page_size = 1;
  const std::string run_token = store_->ListRuns(rf).next_page_token;
  ASSERT_FALSE(run_token.empty());
  f = {};
  f.page_token = run_token;
  EXPECT_EQ(CodeOf([&] { store_->QueryMeasurements(f); }), Error::Code::kInvalidArgument);
  rf.page_token = "garbage";
  EXPECT_EQ(CodeOf([&] { store_->ListRuns(rf); }, &message), Error::Code::kInvalidArgument);
  EXPECT_THAT(message, HasSubstr("'garbage'"));
}

TEST_F(QueryTest, UnknownStatusIsRefused) {
  MeasurementFilter f;
  f.status = static_cast<v1::MeasurementStatus>(8);
  std::string message;
  EXPECT_EQ(CodeOf([&] { store_->QueryMeasurements(f); }, &message), Error::Code::kInvalidArgument);
  EXPECT_THAT(message, HasSubstr("8"));
}

}  // namespace
}  // namespace ablation::db
