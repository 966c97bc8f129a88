// db::RowMapping: the columns it computes from a descriptor, and rows through real SQLite tables:
// a test-only message with every kind of field, the API's row messages, and a Measurement with
// a field the store has never heard of.
#include "db/row_mapping.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "db/error.h"
#include "db/sqlite.h"
#include "db/store.h"
#include "tests/db/db_test_support.h"
#include "tests/db/store_test_support.h"
#include "tests/db/testdata/row_mapping_test.pb.h"

namespace ablation::db {
namespace {

using testing::CodeOf;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using testing::RawDb;
using testing::SameMessage;
using ::testing::UnorderedElementsAreArray;
using Type = RowMapping::Column::Type;

const RowMapping& Parcels() { return RowMapping::Of<testdata::Parcel>(); }

testdata::Parcel FullParcel() {
  testdata::Parcel p;
  p.set_name("books");
  p.mutable_size()->set_width(30);
  p.mutable_size()->set_depth(12.5);
  p.mutable_size()->set_weight(4200);
  p.mutable_size()->mutable_seal()->set_label("customs 7");
  p.mutable_size()->mutable_seal()->set_intact(true);
  p.set_flavour(testdata::FLAVOUR_SWEET_AND_SOUR);
  p.set_price(19.99);
  p.add_stickers("fragile");
  p.add_stickers("this side up");
  p.set_note("leave at the door");
  p.add_readings(1.5);                          // not stored
  p.set_serial(18'446'744'073'709'551'615ull);  // above int64: stored as its bits
  p.set_ratio(0.75f);
  p.set_second_flavour(testdata::FLAVOUR_SWEET);
  (*p.mutable_labels())["k"] = "v";  // not stored
  return p;
}

class RowMappingTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    connection_ = std::make_unique<Connection>(PathOf("rows.db"), Connection::Mode::kReadWrite);
    connection_->Exec(R"sql(
CREATE TABLE parcels (
  id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT '', width INTEGER, depth_mm REAL,
  weight INTEGER, label TEXT NOT NULL DEFAULT '', intact INTEGER, flavour TEXT NOT NULL DEFAULT '',
  price REAL, stickers TEXT NOT NULL DEFAULT '', remark TEXT NOT NULL DEFAULT '', serial INTEGER,
  ratio REAL, second_flavour TEXT))sql");
  }

  int64_t Insert(const testdata::Parcel& p) {
    Statement s(*connection_, "INSERT INTO parcels (" + Parcels().ColumnList() + ") VALUES (" +
                                  Parcels().Placeholders() + ")");
    EXPECT_EQ(Parcels().Bind(p, s), 14);  // 13 columns from parameter 1
    s.Step();
    return connection_->LastInsertRowid();
  }
  testdata::Parcel Read(int64_t id) {
    Statement s(*connection_, "SELECT " + Parcels().SelectList() + " FROM parcels WHERE id = ?");
    s.BindInt64(1, id);
    testdata::Parcel p;
    EXPECT_TRUE(s.Step());
    EXPECT_EQ(Parcels().Read(s, p), 14);  // the key and 13 columns
    return p;
  }

  std::unique_ptr<Connection> connection_;
};

TEST_F(RowMappingTest, ColumnsFollowTheProto) {
  const RowMapping& m = Parcels();
  EXPECT_EQ(m.descriptor(), testdata::Parcel::descriptor());
  ASSERT_NE(m.key(), nullptr);
  EXPECT_EQ(m.key()->name(), "id");
  // Declaration order; sub-messages flattened in place, without a prefix; column options; no
  // key, no not_stored field.
  EXPECT_THAT(m.ColumnNames(),
              ElementsAre("name", "width", "depth_mm", "weight", "label", "intact", "flavour",
                          "price", "stickers", "remark", "serial", "ratio", "second_flavour"));
  EXPECT_EQ(m.ColumnList("p."),
            "p.name, p.width, p.depth_mm, p.weight, p.label, p.intact, p.flavour, p.price, "
            "p.stickers, p.remark, p.serial, p.ratio, p.second_flavour");
  EXPECT_EQ(m.SelectList(),
            "id, name, width, depth_mm, weight, label, intact, flavour, price, stickers, remark, "
            "serial, ratio, second_flavour");
  EXPECT_EQ(m.Placeholders(), "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?");
  EXPECT_EQ(m.Assignments().substr(0, 33), "name = ?, width = ?, depth_mm = ?");
  EXPECT_EQ(m.Parameter("name"), 1);
  EXPECT_EQ(m.Parameter("remark"), 10);
  EXPECT_EQ(CodeOf([&] { m.Parameter("note"); }), Error::Code::kInvalidArgument);

  std::vector<std::string> nullable;
  std::vector<Type> types;
  for (const auto& c : m.columns()) {
    if (c.nullable) nullable.push_back(c.name);
    types.push_back(c.type);
  }
  EXPECT_THAT(nullable, ElementsAre("weight", "price", "second_flavour"));
  EXPECT_THAT(types,
              ElementsAre(Type::kText, Type::kInt32, Type::kDouble, Type::kInt64, Type::kText,
                          Type::kBool, Type::kEnum, Type::kDouble, Type::kTextList, Type::kText,
                          Type::kUInt64, Type::kFloat, Type::kEnum));
  const auto& flavour = m.columns()[6];
  EXPECT_THAT(flavour.enum_values, ElementsAre(std::pair<std::string, int>{"", 0},
                                               std::pair<std::string, int>{"sweet", 1},
                                               std::pair<std::string, int>{"sweet_and_sour", 2}));
}

TEST_F(RowMappingTest, ARowRoundTripsThroughARealTable) {
  const testdata::Parcel written = FullParcel();
  const int64_t id = Insert(written);
  const testdata::Parcel read = Read(id);
  EXPECT_EQ(read.id(), id);
  EXPECT_TRUE(SameMessage(read, written, {"id", "readings", "labels"}));
  EXPECT_TRUE(read.readings().empty());  // not stored
  EXPECT_TRUE(read.labels().empty());
  EXPECT_EQ(read.serial(), 18'446'744'073'709'551'615ull);
  EXPECT_EQ(read.size().seal().label(), "customs 7");

  RawDb raw(PathOf("rows.db"));
  EXPECT_EQ(raw.Text("SELECT flavour FROM parcels"), "sweet_and_sour");
  EXPECT_EQ(raw.Text("SELECT second_flavour FROM parcels"), "sweet");
  EXPECT_EQ(raw.Text("SELECT stickers FROM parcels"), "fragile,this side up");
  EXPECT_EQ(raw.Text("SELECT remark FROM parcels"), "leave at the door");
  EXPECT_EQ(raw.Text("SELECT depth_mm FROM parcels"), "12.5");
  EXPECT_EQ(raw.Int("SELECT weight FROM parcels"), 4200);
  EXPECT_EQ(raw.Int("SELECT intact FROM parcels"), 1);
  EXPECT_EQ(raw.Int("SELECT serial FROM parcels"), -1);
  EXPECT_EQ(raw.Text("SELECT price FROM parcels"), "19.99");
}

TEST_F(RowMappingTest, UnsetIsNullOrDefaultAndReadsBackUnset) {
  testdata::Parcel written;
  written.set_name("empty");
  const int64_t id = Insert(written);
  RawDb raw(PathOf("rows.db"));
  EXPECT_EQ(raw.Text("SELECT coalesce(weight, 'null') || coalesce(price, 'null') || "
                     "coalesce(second_flavour, 'null') FROM parcels"),
            "nullnullnull");  // optional fields
  EXPECT_EQ(raw.Text("SELECT width || '|' || depth_mm || '|' || label || '|' || intact || '|' || "
                     "flavour || '|' || stickers || '|' || serial FROM parcels"),
            "0|0.0||0|||0");  // the others: their defaults
  const testdata::Parcel read = Read(id);
  EXPECT_FALSE(read.has_size());  // unset when written, unset when read
  EXPECT_FALSE(read.has_price());
  EXPECT_FALSE(read.has_second_flavour());
  EXPECT_TRUE(SameMessage(read, written, {"id"}));
}

TEST_F(RowMappingTest, AnOptionalZeroIsStoredAndReadBackSet) {
  testdata::Parcel written;
  written.set_price(0);
  written.mutable_size()->set_weight(0);
  written.set_second_flavour(testdata::FLAVOUR_UNSPECIFIED);
  const int64_t id = Insert(written);
  RawDb raw(PathOf("rows.db"));
  EXPECT_EQ(raw.Text("SELECT price || '|' || weight || '|' || second_flavour FROM parcels"),
            "0.0|0|");
  const testdata::Parcel read = Read(id);
  EXPECT_TRUE(read.has_price());
  EXPECT_TRUE(read.size().has_weight());
  EXPECT_TRUE(read.has_second_flavour());
  EXPECT_TRUE(SameMessage(read, written, {"id"}));
}

TEST_F(RowMappingTest, NullInAColumnWithoutPresenceReadsAsTheDefault) {
  connection_->Exec("INSERT INTO parcels (id, name) VALUES (9, 'raw')");
  const testdata::Parcel read = Read(9);
  EXPECT_EQ(read.id(), 9);
  EXPECT_EQ(read.name(), "raw");
  EXPECT_EQ(read.size().width(), 0);
  EXPECT_EQ(read.serial(), 0u);
  EXPECT_EQ(read.flavour(), testdata::FLAVOUR_UNSPECIFIED);
  EXPECT_TRUE(read.stickers().empty());
  EXPECT_FALSE(read.has_size());
}

TEST_F(RowMappingTest, TextThatNamesNoEnumValueIsRefused) {
  Insert(FullParcel());
  connection_->Exec("UPDATE parcels SET flavour = 'bitter'");
  Statement s(*connection_, "SELECT " + Parcels().SelectList() + " FROM parcels");
  ASSERT_TRUE(s.Step());
  testdata::Parcel p;
  std::string message;
  EXPECT_EQ(CodeOf([&] { Parcels().Read(s, p); }, &message), Error::Code::kStorage);
  EXPECT_THAT(message, HasSubstr(PathOf("rows.db")));
  EXPECT_THAT(message, HasSubstr("column flavour holds 'bitter'"));
  EXPECT_THAT(message, HasSubstr("ablation.testdata.Flavour"));
  EXPECT_THAT(message, HasSubstr("'', 'sweet', 'sweet_and_sour'"));
}

TEST_F(RowMappingTest, ANumberNoEnumValueHasIsRefusedWhenBinding) {
  testdata::Parcel p = FullParcel();
  p.set_flavour(static_cast<testdata::Flavour>(77));
  Statement s(*connection_, "INSERT INTO parcels (" + Parcels().ColumnList() + ") VALUES (" +
                                Parcels().Placeholders() + ")");
  std::string message;
  EXPECT_EQ(CodeOf([&] { Parcels().Bind(p, s); }, &message), Error::Code::kInvalidArgument);
  EXPECT_THAT(message, HasSubstr("ablation.testdata.Parcel.flavour holds 77"));
  // A message of another type is refused too, rather than misread.
  testdata::Seal seal;
  EXPECT_EQ(CodeOf([&] { Parcels().Bind(seal, s); }), Error::Code::kInvalidArgument);
}

TEST(RowMappingRefusals, FieldsWithoutAColumnMappingAreNamed) {
  auto refusal = [](const google::protobuf::Descriptor* d) {
    std::string message;
    EXPECT_EQ(CodeOf([&] { RowMapping mapping(d); }, &message), Error::Code::kInvalidArgument)
        << d->full_name();
    return message;
  };
  EXPECT_THAT(refusal(testdata::WithMap::descriptor()),
              HasSubstr("ablation.testdata.WithMap.labels"));
  EXPECT_THAT(refusal(testdata::WithRepeatedNumbers::descriptor()),
              HasSubstr("ablation.testdata.WithRepeatedNumbers.counts"));
  EXPECT_THAT(refusal(testdata::WithBytes::descriptor()),
              HasSubstr("ablation.testdata.WithBytes.blob"));
  EXPECT_THAT(refusal(testdata::WithRepeatedMessage::descriptor()),
              HasSubstr("ablation.testdata.WithRepeatedMessage.seals"));
  const std::string clash = refusal(testdata::WithClash::descriptor());
  EXPECT_THAT(clash,
              HasSubstr("ablation.testdata.WithClash.label and ablation.testdata.Seal.label"));
  EXPECT_THAT(clash, HasSubstr("column 'label'"));
  EXPECT_THAT(refusal(testdata::WithColumnOnMessage::descriptor()),
              HasSubstr("ablation.testdata.WithColumnOnMessage.seal"));
}

// The API's row messages map onto exactly the columns the tables have had (schema.md), plus v5's.
TEST(RowMappingOfTheApi, GivesTheTablesColumns) {
  const std::vector<std::string> measurement = {"run_id",
                                                "variant",
                                                "dtype",
                                                "m",
                                                "n",
                                                "k",
                                                "status",
                                                "error",
                                                "median_ms",
                                                "mean_ms",
                                                "stddev_ms",
                                                "min_ms",
                                                "max_ms",
                                                "q1_ms",
                                                "q3_ms",
                                                "samples",
                                                "noise",
                                                "total_seconds",
                                                "median_cycles",
                                                "median_sm_mhz",
                                                "low_clock_samples",
                                                "tflops",
                                                "l2",
                                                "telemetry_available",
                                                "telemetry_note",
                                                "sm_clock_mhz_mean",
                                                "sm_clock_mhz_min",
                                                "sm_clock_mhz_max",
                                                "mem_clock_mhz_mean",
                                                "mem_clock_mhz_min",
                                                "mem_clock_mhz_max",
                                                "power_w_mean",
                                                "power_w_min",
                                                "power_w_max",
                                                "temperature_c_mean",
                                                "temperature_c_min",
                                                "temperature_c_max",
                                                "throttle_reasons",
                                                "throttled_samples",
                                                "registers_per_thread",
                                                "static_smem_bytes",
                                                "dynamic_smem_bytes",
                                                "local_bytes_per_thread",
                                                "max_blocks_per_sm",
                                                "max_warps_per_sm",
                                                "theoretical_occupancy",
                                                "limiter",
                                                "threads_per_block",
                                                "clock_policy",
                                                "verification_outcome",
                                                "verification",
                                                "created_at_ms",
                                                "sequence",
                                                "bytes_per_second",
                                                "fragment_loads_per_second",
                                                "round",
                                                "wall_seconds",
                                                "worker_seconds",
                                                "setup_seconds",
                                                "warmup_seconds",
                                                "sampling_seconds",
                                                "verify_seconds",
                                                "inputs_reused",
                                                "settle_seconds",
                                                "cool_seconds",
                                                "solo_cost_seconds",
                                                "regime",
                                                "window_id",
                                                "window_members",
                                                "windows",
                                                "conditioned",
                                                "regime_note",
                                                "tflops_per_ghz",
                                                "peak_tflops",
                                                "peak_share",
                                                "user_build_id",
                                                "checked_launches",
                                                "solo_measured",
                                                "solo_tflops",
                                                "solo_median_ms",
                                                "solo_noise",
                                                "solo_samples",
                                                "solo_median_cycles",
                                                "solo_sm_mhz",
                                                "solo_peak_share",
                                                "solo_energy_j",
                                                "solo_power_w",
                                                "solo_joules_per_tflop",
                                                "solo_busy_share",
                                                "solo_gpu_seconds",
                                                "solo_launches",
                                                "solo_conditioned",
                                                "solo_note",
                                                "library_pick",
                                                "library_algo_id",
                                                "library_tile",
                                                "library_stages",
                                                "library_split_k",
                                                "library_reduction",
                                                "library_swizzle",
                                                "library_custom",
                                                "library_cluster",
                                                "library_candidates",
                                                "library_rank",
                                                "library_config",
                                                "roofline_bytes_per_second",
                                                "roofline_bandwidth",
                                                "roofline_memory_share",
                                                "roofline_compute_share",
                                                "roofline_compute_roof",
                                                "roofline_intensity",
                                                "roofline_bound",
                                                "dispatched_to"};
  EXPECT_THAT(RowMapping::Of<v1::Measurement>().ColumnNames(), ElementsAreArray(measurement));
  // The v4 store's own hand-written list, in its order, v5's and v6's one more each, v7's,
  // v10's and v11's.
  const std::vector<std::string> v4_store = {"run_id",
                                             "sequence",
                                             "variant",
                                             "dtype",
                                             "m",
                                             "n",
                                             "k",
                                             "status",
                                             "error",
                                             "median_ms",
                                             "mean_ms",
                                             "stddev_ms",
                                             "min_ms",
                                             "max_ms",
                                             "q1_ms",
                                             "q3_ms",
                                             "samples",
                                             "noise",
                                             "tflops",
                                             "created_at_ms",
                                             "total_seconds",
                                             "l2",
                                             "clock_policy",
                                             "verification",
                                             "telemetry_available",
                                             "telemetry_note",
                                             "sm_clock_mhz_mean",
                                             "sm_clock_mhz_min",
                                             "sm_clock_mhz_max",
                                             "mem_clock_mhz_mean",
                                             "mem_clock_mhz_min",
                                             "mem_clock_mhz_max",
                                             "power_w_mean",
                                             "power_w_min",
                                             "power_w_max",
                                             "temperature_c_mean",
                                             "temperature_c_min",
                                             "temperature_c_max",
                                             "throttle_reasons",
                                             "throttled_samples",
                                             "registers_per_thread",
                                             "static_smem_bytes",
                                             "dynamic_smem_bytes",
                                             "local_bytes_per_thread",
                                             "max_blocks_per_sm",
                                             "max_warps_per_sm",
                                             "theoretical_occupancy",
                                             "limiter",
                                             "threads_per_block",
                                             "bytes_per_second",
                                             "fragment_loads_per_second",
                                             "verification_outcome",
                                             "wall_seconds",
                                             "round",
                                             "median_cycles",
                                             "median_sm_mhz",
                                             "low_clock_samples",
                                             "worker_seconds",
                                             "setup_seconds",
                                             "warmup_seconds",
                                             "sampling_seconds",
                                             "verify_seconds",
                                             "inputs_reused",
                                             "settle_seconds",
                                             "cool_seconds",
                                             "regime",
                                             "window_id",
                                             "window_members",
                                             "windows",
                                             "conditioned",
                                             "regime_note",
                                             "tflops_per_ghz",
                                             "peak_tflops",
                                             "peak_share",
                                             "user_build_id",
                                             "checked_launches",
                                             "solo_cost_seconds",
                                             "solo_measured",
                                             "solo_tflops",
                                             "solo_median_ms",
                                             "solo_noise",
                                             "solo_samples",
                                             "solo_median_cycles",
                                             "solo_sm_mhz",
                                             "solo_peak_share",
                                             "solo_energy_j",
                                             "solo_power_w",
                                             "solo_joules_per_tflop",
                                             "solo_busy_share",
                                             "solo_gpu_seconds",
                                             "solo_launches",
                                             "solo_conditioned",
                                             "solo_note",
                                             "library_pick",
                                             "library_algo_id",
                                             "library_tile",
                                             "library_stages",
                                             "library_split_k",
                                             "library_reduction",
                                             "library_swizzle",
                                             "library_custom",
                                             "library_cluster",
                                             "library_candidates",
                                             "library_rank",
                                             "library_config",
                                             "roofline_bytes_per_second",
                                             "roofline_bandwidth",
                                             "roofline_memory_share",
                                             "roofline_compute_share",
                                             "roofline_compute_roof",
                                             "roofline_intensity",
                                             "roofline_bound",
                                             "dispatched_to"};
  EXPECT_THAT(RowMapping::Of<v1::Measurement>().ColumnNames(), UnorderedElementsAreArray(v4_store));
  std::vector<std::string> nullable;
  for (const auto& c : RowMapping::Of<v1::Measurement>().columns()) {
    if (c.nullable) nullable.push_back(c.name);
  }
  EXPECT_THAT(
      nullable,
      ElementsAre(
          "median_cycles", "median_sm_mhz", "low_clock_samples", "sm_clock_mhz_mean",
          "sm_clock_mhz_min", "sm_clock_mhz_max", "mem_clock_mhz_mean", "mem_clock_mhz_min",
          "mem_clock_mhz_max", "power_w_mean", "power_w_min", "power_w_max", "temperature_c_mean",
          "temperature_c_min", "temperature_c_max", "throttled_samples", "bytes_per_second",
          "fragment_loads_per_second", "worker_seconds", "setup_seconds", "warmup_seconds",
          "sampling_seconds", "verify_seconds", "inputs_reused", "settle_seconds", "cool_seconds",
          "solo_cost_seconds", "tflops_per_ghz", "peak_tflops", "peak_share", "solo_median_cycles",
          "solo_sm_mhz", "solo_peak_share", "solo_energy_j", "solo_power_w",
          "solo_joules_per_tflop", "solo_busy_share", "library_algo_id", "library_split_k",
          "library_reduction", "library_swizzle", "library_custom", "library_candidates",
          "library_rank", "roofline_bytes_per_second", "roofline_bandwidth",
          "roofline_memory_share", "roofline_compute_share", "roofline_intensity"));

  EXPECT_THAT(
      RowMapping::Of<v1::Run>().ColumnNames(),
      ElementsAre("state", "kind", "device_index", "device_name", "device_uuid",
                  "compute_capability", "sm_count", "driver_version", "cuda_runtime_version",
                  "cublas_version", "memory_bytes", "l2_bytes", "smem_per_block_optin",
                  "smem_per_sm", "vbios_version", "power_limit_w", "ecc_mode",
                  "hardware_fingerprint", "daemon_version", "git_revision", "request_json",
                  "requested_by", "created_at_ms", "started_at_ms", "finished_at_ms", "error",
                  "planned", "clock_policy", "rounds", "order_seed", "regime", "paired",
                  "host_name", "node_labels", "kernel_revision", "cancelled_by"));
  EXPECT_THAT(RowMapping::Of<v1::DeviceIdentity>().ColumnNames(),
              ElementsAre("device_index", "device_name", "device_uuid", "compute_capability",
                          "sm_count", "driver_version", "cuda_runtime_version", "cublas_version",
                          "memory_bytes", "l2_bytes", "smem_per_block_optin", "smem_per_sm",
                          "vbios_version", "power_limit_w", "ecc_mode", "hardware_fingerprint"));
  EXPECT_EQ(RowMapping::Of<v1::DeviceIdentity>().key(), nullptr);
  EXPECT_THAT(RowMapping::Of<v1::VerifyResult>().ColumnNames(),
              ElementsAre("run_id", "created_at_ms", "variant", "dtype", "m", "n", "k", "reference",
                          "reference_variant", "max_abs", "max_rel", "rel_frobenius", "mismatches",
                          "nan_count", "unwritten_count", "tolerance", "passed", "error",
                          "reference_failed", "user_build_id"));
}

// ---------------------------------------------------------------- a new field

// A field added to Measurement needs the field and a migration that adds its column: nothing in
// the store. MeasurementWithNewField is Measurement (a part of it, at the same field numbers)
// with one field more, joules_per_tflop; the table is the real one, made by Store::Open.
class NewFieldTest : public testing::StoreTest {
 protected:
  const RowMapping& Next() { return RowMapping::Of<testdata::MeasurementWithNewField>(); }

  testdata::MeasurementWithNewField Row(int64_t run) {
    testdata::MeasurementWithNewField x;
    x.set_run_id(run);
    x.set_variant("abl_L1_R1_bl0_s3_sw1");
    x.set_dtype("bf16");
    x.mutable_shape()->set_m(4096);
    x.mutable_shape()->set_n(4096);
    x.mutable_shape()->set_k(4096);
    x.set_status(v1::MEASUREMENT_STATUS_OK);
    x.mutable_stats()->set_median_ms(0.8);
    x.mutable_stats()->set_samples(20);
    x.set_tflops(171.8);
    x.set_l2(v1::L2_MODE_HOT);
    x.mutable_telemetry()->set_available(true);
    x.mutable_telemetry()->set_power_w_mean(650.5);
    x.set_created_at_ms(testing::kBaseMs + 7);
    x.set_sequence(3);
    x.set_bytes_per_second(2.5e12);
    x.set_joules_per_tflop(3.75);
    return x;
  }
};

TEST_F(NewFieldTest, RoundTripsOnceItsMigrationAddedTheColumn) {
  const int64_t run = store_->CreateRun(testing::MakeRun());
  Connection connection(path_, Connection::Mode::kReadWrite);
  std::string message;
  // Without the migration: refused, naming the column and the field.
  EXPECT_EQ(CodeOf([&] { Next().RequireColumns(connection, "measurements"); }, &message),
            Error::Code::kIncompatible);
  EXPECT_THAT(message, HasSubstr("joules_per_tflop (ablation.testdata.MeasurementWithNewField."
                                 "joules_per_tflop)"));
  EXPECT_THAT(message, HasSubstr("migration"));

  // The migration.
  connection.Exec("ALTER TABLE measurements ADD COLUMN joules_per_tflop REAL");
  Next().RequireColumns(connection, "measurements");

  // The row, through nothing but the mapping.
  const testdata::MeasurementWithNewField written = Row(run);
  int64_t id = 0;
  {
    Statement insert(connection, "INSERT INTO measurements (" + Next().ColumnList() + ") VALUES (" +
                                     Next().Placeholders() + ")");
    Next().Bind(written, insert);
    insert.Step();
    id = connection.LastInsertRowid();
  }
  testdata::MeasurementWithNewField read;
  {
    Statement select(connection,
                     "SELECT " + Next().SelectList() + " FROM measurements WHERE id = ?");
    select.BindInt64(1, id);
    ASSERT_TRUE(select.Step());
    Next().Read(select, read);
  }
  EXPECT_EQ(read.id(), id);
  EXPECT_EQ(read.joules_per_tflop(), 3.75);
  EXPECT_TRUE(SameMessage(read, written, {"id"}));
  RawDb raw(path_);
  EXPECT_EQ(raw.Text("SELECT joules_per_tflop FROM measurements"), "3.75");
  EXPECT_EQ(raw.Text("SELECT l2 || ' ' || status FROM measurements"), "hot ok");

  // The store, unchanged, still reads that row as the Measurement it is (the new field aside),
  // opens the database with the extra column, and writes rows the new mapping reads.
  store_.reset();
  store_ = Store::Open(path_);
  const auto stored = store_->MeasurementsOfRun(run, false);
  ASSERT_EQ(stored.size(), 1u);
  testdata::MeasurementWithNewField known = written;
  known.clear_joules_per_tflop();
  v1::Measurement expected;
  ASSERT_TRUE(expected.ParseFromString(known.SerializeAsString()));  // same field numbers
  EXPECT_TRUE(SameMessage(stored[0], expected, {"id"}));

  v1::Measurement older = testing::FullMeasurement(run);
  const int64_t older_id = store_->InsertMeasurement(older);
  Statement select(connection, "SELECT " + Next().SelectList() + " FROM measurements WHERE id = ?");
  select.BindInt64(1, older_id);
  ASSERT_TRUE(select.Step());
  testdata::MeasurementWithNewField back;
  Next().Read(select, back);
  EXPECT_FALSE(back.has_joules_per_tflop());  // NULL: not recorded
  EXPECT_EQ(back.variant(), older.variant());
  EXPECT_EQ(back.telemetry().power_w_max(), older.telemetry().power_w_max());
}

}  // namespace
}  // namespace ablation::db
