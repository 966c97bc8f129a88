#include "client/output/render.h"

#include <google/protobuf/struct.pb.h>
#include <gtest/gtest.h>

#include <sstream>

namespace ablation::client {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

v1::Measurement MakeMeasurement(std::string variant, double median_ms, double tflops) {
  v1::Measurement m;
  m.set_variant(std::move(variant));
  m.set_dtype("bf16");
  m.mutable_shape()->set_m(4096);
  m.mutable_shape()->set_n(4096);
  m.mutable_shape()->set_k(4096);
  m.set_status(v1::MEASUREMENT_STATUS_OK);
  m.mutable_stats()->set_median_ms(median_ms);
  m.mutable_stats()->set_noise(0.0031);
  m.mutable_stats()->set_samples(57);
  m.set_tflops(tflops);
  return m;
}

TEST(RenderTextTest, AlignsColumnsAndRightAlignsNumbers) {
  Table table;
  table.columns = {{"name", "name"}, {"ms", "ms", Align::kRight}};
  table.rows = {{"a", "1.5"}, {"longer_name", "123.25"}};
  std::vector<std::string> lines = Lines(RenderText(table));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "name             ms");
  EXPECT_EQ(lines[1], "-----------  ------");
  EXPECT_EQ(lines[2], "a               1.5");
  EXPECT_EQ(lines[3], "longer_name  123.25");
}

TEST(RenderTextTest, NoTrailingSpacesAndOneLinePerRow) {
  Table table;
  table.columns = {{"a", "a"}, {"error", "error"}};
  table.rows = {{"x", "line one\nline two"}, {"yy", ""}};
  std::vector<std::string> lines = Lines(RenderText(table));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[2], "x   line one line two");
  EXPECT_EQ(lines[3], "yy");
}

TEST(RenderTextTest, CountsUtf8AsOneColumn) {
  Table table;
  table.columns = {{"a", "a"}, {"b", "b"}};
  table.rows = {{"\xc3\xa9t\xc3\xa9", "x"}, {"abc", "y"}};  // "été"
  std::vector<std::string> lines = Lines(RenderText(table));
  EXPECT_EQ(lines[2], "\xc3\xa9t\xc3\xa9  x");
  EXPECT_EQ(lines[3], "abc  y");
}

TEST(RenderCsvTest, UsesKeysAndExactValuesWithCrlf) {
  Table table;
  table.columns = {{"variant", "variant"}, {"median_ms", "median ms", Align::kRight}};
  table.rows = {{"v,1", Cell("1.235", "1.23456789")}, {"v2", Cell("-", "")}};
  EXPECT_EQ(RenderCsv(table), "variant,median_ms\r\n\"v,1\",1.23456789\r\nv2,\r\n");
}

TEST(RenderMarkdownTest, EscapesPipesAndMarksAlignment) {
  Table table;
  table.columns = {{"a", "a"}, {"n", "n", Align::kRight}};
  table.rows = {{"x|y", "1"}};
  EXPECT_EQ(RenderMarkdown(table), "| a | n |\n| --- | ---: |\n| x\\|y | 1 |\n");
}

TEST(FormatTest, MillisecondsWithFourSignificantDigits) {
  EXPECT_EQ(FormatSignificant(1.23456, 4), "1.235");
  EXPECT_EQ(FormatSignificant(12.3456, 4), "12.35");
  EXPECT_EQ(FormatSignificant(123.456, 4), "123.5");
  EXPECT_EQ(FormatSignificant(1234.56, 4), "1235");
  EXPECT_EQ(FormatSignificant(12345.6, 4), "12346");
  EXPECT_EQ(FormatSignificant(0.0123456, 4), "0.01235");
  EXPECT_EQ(FormatSignificant(9.99996, 4), "10.00");
  EXPECT_EQ(FormatSignificant(0, 4), "0");
}

TEST(FormatTest, Values) {
  EXPECT_EQ(FormatFixed(111.44, 1), "111.4");
  EXPECT_EQ(FormatExact(0.1), "0.1");
  EXPECT_EQ(FormatTimeMs(1796040000000), "2026-11-30T12:00:00Z");
  EXPECT_EQ(FormatTimeMs(0), "-");
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(49152), "48 KiB");
  EXPECT_EQ(FormatBytes(101888), "99.5 KiB");
  EXPECT_EQ(FormatBytes(80LL << 30), "80 GiB");
}

TEST(MeasurementsTableTest, FormatsNumbersForPeopleAndExactlyForCsv) {
  std::vector<v1::Measurement> ms = {MakeMeasurement("abl_L1_R1_bl0_s3_sw1", 1.23456, 111.44)};
  v1::Measurement failed = MakeMeasurement("abl_L0_R0_bl0_s1_sw1", 0, 0);
  failed.clear_stats();
  failed.set_status(v1::MEASUREMENT_STATUS_FAILED);
  failed.set_error("worker died: illegal address, \"sticky\"");
  ms.push_back(failed);

  std::vector<std::string> lines = Lines(RenderText(MeasurementsTable(ms)));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[0].find("median ms"), std::string::npos);
  EXPECT_NE(lines[0].find("TFLOPS"), std::string::npos);
  EXPECT_NE(lines[2].find("1.235"), std::string::npos);
  EXPECT_NE(lines[2].find("111.4"), std::string::npos);
  EXPECT_NE(lines[2].find("0.31"), std::string::npos);
  EXPECT_NE(lines[3].find("failed"), std::string::npos);
  EXPECT_NE(lines[3].find("worker died"), std::string::npos);
  // Right alignment: the TFLOPS column ends at the same place in every row.
  const std::size_t end = lines[0].find("TFLOPS") + 6;
  EXPECT_EQ(lines[2].substr(end - 5, 5), "111.4");
  EXPECT_EQ(lines[3].substr(end - 1, 1), "-");

  std::string csv = RenderCsv(MeasurementsTable(ms));
  EXPECT_EQ(Lines(csv)[0], "variant,dtype,shape,median_ms,noise_pct,tflops,samples,status,error\r");
  EXPECT_NE(csv.find(",1.23456,0.31,111.44,57,ok,"), std::string::npos);
  EXPECT_NE(csv.find(",,,,,failed,\"worker died: illegal address, \"\"sticky\"\"\""),
            std::string::npos);
}

TEST(MeasurementsTableTest, VerificationColumnOnlyWhenVerified) {
  std::vector<v1::Measurement> ms = {MakeMeasurement("a", 1, 1)};
  EXPECT_EQ(RenderText(MeasurementsTable(ms)).find("verified"), std::string::npos);
  ms[0].set_verification("passed");
  EXPECT_NE(RenderText(MeasurementsTable(ms)).find("verified"), std::string::npos);
  // An outcome without words is shown as its word.
  ms[0].clear_verification();
  ms[0].set_verification_outcome(v1::VERIFICATION_OUTCOME_NOT_CHECKED);
  EXPECT_NE(RenderText(MeasurementsTable(ms)).find("not_checked"), std::string::npos);
}

TEST(MeasurementsTableTest, RateColumnsOnlyWhenARowHasThem) {
  std::vector<v1::Measurement> ms = {MakeMeasurement("abl_L1_R1_bl0_s3_sw1", 0.4, 343.6)};
  EXPECT_EQ(RenderText(MeasurementsTable(ms)).find("GB/s"), std::string::npos);
  EXPECT_EQ(RenderText(MeasurementsTable(ms)).find("Gloads/s"), std::string::npos);
  EXPECT_EQ(RenderCsv(MeasurementsTable(ms)).find("bytes_per_second"), std::string::npos);

  v1::Measurement loads = MakeMeasurement("smem2reg_R1_bl0_sw1", 0.1, 0);
  loads.set_bytes_per_second(1.2884901888e13);
  loads.set_fragment_loads_per_second(2.097152e11);
  ms.push_back(loads);
  std::vector<std::string> lines = Lines(RenderText(MeasurementsTable(ms)));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[0].find("GB/s"), std::string::npos);
  EXPECT_NE(lines[0].find("Gloads/s"), std::string::npos);
  // The GEMM row has no rates, the micro-benchmark no TFLOPS: each shows "-" there.
  const std::size_t gbs = lines[0].find("GB/s") + 4;
  EXPECT_EQ(lines[2].substr(gbs - 1, 1), "-");
  EXPECT_EQ(lines[3].substr(gbs - 7, 7), "12884.9");
  const std::size_t gloads = lines[0].find("Gloads/s") + 8;
  EXPECT_EQ(lines[3].substr(gloads - 6, 6), "209.72");
  const std::size_t tflops = lines[0].find("TFLOPS") + 6;
  EXPECT_EQ(lines[3].substr(tflops - 1, 1), "-");

  // CSV keeps the exact values under stable keys, empty where a row has none.
  const std::string csv = RenderCsv(MeasurementsTable(ms));
  EXPECT_EQ(Lines(csv)[0],
            "variant,dtype,shape,median_ms,noise_pct,tflops,bytes_per_second,"
            "fragment_loads_per_second,samples,status,error\r");
  EXPECT_NE(csv.find(",343.6,,,57,ok,"), std::string::npos);
  EXPECT_NE(csv.find(",0.31,,12884901888000,209715200000,57,ok,"), std::string::npos);

  // Progress: rates instead of a TFLOPS figure that would read 0.
  v1::RunEvent e;
  *e.mutable_measurement() = loads;
  EXPECT_EQ(
      ProgressLine(e, 2, 2),
      "[2/2] smem2reg_R1_bl0_sw1 bf16 4096x4096x4096: 0.1000 ms, 12884.9 GB/s, 209.72 Gloads/s, "
      "noise 0.31%, 57 samples");
}

TEST(VariantsTableTest, Columns) {
  v1::Variant v;
  v.set_name("abl_L1_R1_bl0_s3_sw1");
  v.set_family("ablation");
  v.add_dtypes("bf16");
  v.add_dtypes("fp16");
  v.set_tile_m(128);
  v.set_tile_n(128);
  v.set_tile_k(32);
  v.set_threads(256);
  v.set_smem_bytes(49152);
  std::string text = RenderText(VariantsTable({v}));
  std::vector<std::string> lines = Lines(text);
  EXPECT_EQ(lines[0], "name                  family    dtypes     tile        threads    smem");
  EXPECT_EQ(lines[2], "abl_L1_R1_bl0_s3_sw1  ablation  bf16,fp16  128x128x32      256  48 KiB");
  EXPECT_NE(RenderCsv(VariantsTable({v})).find(",\"bf16,fp16\",128x128x32,256,49152\r\n"),
            std::string::npos);
}

// cuBLAS and a user kernel have no one tile, block or shared memory: "library" and "-" in the
// table, empty in the CSV, never a made-up 0x0x0, 0 threads, 0 B.
TEST(VariantsTableTest, ALibraryAndAUserKernelShowNoZeros) {
  v1::Variant cublas;
  cublas.set_name("cublas_bf16");
  cublas.set_family("cublas");
  cublas.add_dtypes("bf16");
  v1::Variant user;
  user.set_name("user.tiled.pad=0.unroll=1");
  user.set_family("user.tiled");
  user.add_dtypes("bf16");
  const std::string text = RenderText(VariantsTable({cublas, user}));
  const std::vector<std::string> lines = Lines(text);
  EXPECT_NE(lines[2].find("cublas_bf16"), std::string::npos);
  EXPECT_NE(lines[2].find("library  library  library"), std::string::npos) << text;
  EXPECT_NE(lines[3].find("user.tiled  bf16    -"), std::string::npos) << text;
  EXPECT_EQ(text.find("0x0x0"), std::string::npos) << text;
  const std::string csv = RenderCsv(VariantsTable({cublas, user}));
  EXPECT_NE(csv.find("cublas_bf16,cublas,bf16,,,,,\r\n"), std::string::npos) << csv;
  // With its build's report and a known launch: threads, dynamic and static shared memory,
  // registers.
  user.set_threads(256);
  user.set_registers(40);
  user.set_static_smem_bytes(2048);
  const std::string known = RenderCsv(VariantsTable({user}));
  EXPECT_NE(known.find("name,family,dtypes,tile,threads,smem_bytes,registers,static_smem_bytes"),
            std::string::npos)
      << known;
  EXPECT_NE(known.find("user.tiled.pad=0.unroll=1,user.tiled,bf16,,256,0,40,2048\r\n"),
            std::string::npos)
      << known;
}

TEST(VerifyTableTest, PassAndFail) {
  v1::VerifyResult ok;
  ok.set_variant("a");
  ok.set_passed(true);
  ok.set_max_abs_error(1.5e-3);
  v1::VerifyResult bad;
  bad.set_variant("b");
  bad.set_passed(false);
  bad.set_mismatches(12);
  bad.set_error("12 mismatches");
  ok.set_reference(v1::REFERENCE_CPU);
  bad.set_reference(v1::REFERENCE_VARIANT);
  bad.set_reference_variant("abl_L1_R1_bl0_s3_sw1");
  std::string text = RenderText(VerifyTable({ok, bad}));
  const std::string csv = RenderCsv(VerifyTable({ok, bad}));
  EXPECT_NE(csv.find("\r\na,,0x0x0,cpu,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\r\nb,,0x0x0,abl_L1_R1_bl0_s3_sw1,"), std::string::npos) << csv;
  EXPECT_NE(text.find("1.500e-03"), std::string::npos);
  EXPECT_NE(text.find("pass"), std::string::npos);
  EXPECT_NE(text.find("FAIL"), std::string::npos);
  EXPECT_NE(RenderCsv(VerifyTable({ok, bad})).find(",false,12 mismatches"), std::string::npos);
}

TEST(RunsTableTest, TimesAndDuration) {
  v1::Run run;
  run.set_id(42);
  run.set_state(v1::RUN_STATE_SUCCEEDED);
  run.set_kind(v1::RUN_KIND_ABLATION);
  run.mutable_device()->set_name("NVIDIA H200");
  run.set_created_at_ms(1796040000000);
  run.set_started_at_ms(1796040000000);
  run.set_finished_at_ms(1796040012345);
  run.add_tags("nightly");
  std::string text = RenderText(RunsTable({run}));
  // A run stored before regimes has none: "-".
  EXPECT_NE(text.find("42  succeeded  ablation  -       NVIDIA H200 (GPU 0)"), std::string::npos)
      << text;
  run.set_regime(v1::REGIME_SUSTAINED);
  EXPECT_NE(RenderText(RunsTable({run})).find("42  succeeded  ablation  sustained  NVIDIA H200"),
            std::string::npos)
      << RenderText(RunsTable({run}));
  EXPECT_NE(text.find("2026-11-30T12:00:00Z"), std::string::npos);
  EXPECT_NE(text.find("12.3 s"), std::string::npos);
  EXPECT_NE(text.find("NVIDIA H200 (GPU 0)"), std::string::npos);
  // In the CSV a time is ISO 8601 in UTC under created_at, as in every CSV; a duration in ms.
  const std::string csv = RenderCsv(RunsTable({run}));
  EXPECT_EQ(
      csv.substr(0, csv.find("\r\n")),
      "id,state,kind,regime,device,created_at,duration_ms,planned,ok,failed,tags,requested_by");
  EXPECT_NE(csv.find(",2026-11-30T12:00:00Z,12345,"), std::string::npos) << csv;
}

// One spelling of time and one unit of noise across the CSVs: every column that holds a time is
// created_at (ISO 8601 UTC), none is *_ms but durations and medians; noise is noise_pct.
TEST(CsvConventionsTest, OneSpellingOfTimeAndOneUnitOfNoise) {
  v1::Run run;
  run.set_id(1);
  run.set_created_at_ms(1796040000000);
  v1::Measurement m;
  m.set_run_id(1);
  m.set_created_at_ms(1796040000000);
  m.set_status(v1::MEASUREMENT_STATUS_OK);
  m.mutable_stats()->set_median_ms(1.5);
  m.mutable_stats()->set_noise(0.0025);
  m.mutable_stats()->set_samples(10);
  for (const std::string& csv :
       {RenderCsv(RunsTable({run})), RenderCsv(MeasurementsTable({m}, /*every_column=*/true))}) {
    const std::string header = csv.substr(0, csv.find("\r\n"));
    EXPECT_NE(header.find("created_at"), std::string::npos) << header;
    EXPECT_EQ(header.find("created_at_ms"), std::string::npos) << header;
    EXPECT_EQ(header.find(",time,"), std::string::npos) << header;
    EXPECT_EQ(header.find(",noise,"), std::string::npos) << header;
    EXPECT_NE(csv.find("2026-11-30T12:00:00Z"), std::string::npos) << csv;
  }
  const std::string results = RenderCsv(MeasurementsTable({m}, true));
  EXPECT_NE(results.find("noise_pct"), std::string::npos);
  EXPECT_NE(results.find(",0.25,"), std::string::npos) << results;  // 0.0025 is 0.25%
}

TEST(DeviceTableTest, UnavailableShowsReason) {
  v1::GetDeviceResponse response;
  response.set_available(false);
  response.set_unavailable_reason("no NVIDIA driver");
  std::string text = RenderText(DeviceTable(response));
  EXPECT_NE(text.find("no NVIDIA driver"), std::string::npos);
}

TEST(RunHeaderTest, ShowsDeviceStateTimesTags) {
  v1::Run run;
  run.set_id(7);
  run.set_state(v1::RUN_STATE_PARTIAL);
  run.mutable_device()->set_name("NVIDIA H200");
  run.mutable_device()->set_compute_capability("9.0");
  run.add_tags("nightly");
  run.add_tags("pr-12");
  run.set_started_at_ms(1796040000000);
  run.set_finished_at_ms(1796040060000);
  std::string text = RunHeader(run);
  EXPECT_NE(text.find("run           7\n"), std::string::npos) << text;  // no kind: none shown
  EXPECT_NE(text.find("state         partial"), std::string::npos);
  EXPECT_NE(text.find("NVIDIA H200 (GPU 0), sm 9.0"), std::string::npos);
  EXPECT_NE(text.find("nightly, pr-12"), std::string::npos);
  EXPECT_NE(text.find("(took 60.0 s)"), std::string::npos);
}

TEST(RunHeaderTest, SaysWhatTheRunCostWhereItsRowsSay) {
  v1::Run run;
  run.set_id(7);
  run.set_started_at_ms(1796040000000);
  run.set_finished_at_ms(1796040011000);  // 11 s
  std::vector<v1::Measurement> rows(2);
  for (int i = 0; i < 2; ++i) {
    rows[i].mutable_stats()->set_total_seconds(5);
    v1::Cost* c = rows[i].mutable_cost();
    c->set_worker_seconds(5.3);
    c->set_setup_seconds(i == 0 ? 0.2 : 0);
    c->set_warmup_seconds(i == 0 ? 0.1 : 0.005);
    c->set_sampling_seconds(5.1);
    c->set_inputs_reused(i == 1);
  }
  const std::string text = RunHeader(run, rows);
  EXPECT_NE(text.find("cost          11.0 s for 10.0 s of sampled GPU time (1.100x); setup 0.2 s, "
                      "warm-up 0.1 s, sampling 10.2 s, verification 0.0 s; 1 of 2 on resident "
                      "inputs\n"),
            std::string::npos)
      << text;
  // Rows from before schema v10 say nothing: no line.
  std::vector<v1::Measurement> old(1);
  old[0].mutable_stats()->set_total_seconds(5);
  EXPECT_EQ(RunHeader(run, old).find("cost"), std::string::npos);
  EXPECT_EQ(RunHeader(run).find("cost"), std::string::npos);
}

TEST(ProgressLineTest, EveryEvent) {
  v1::RunEvent e;
  e.mutable_queued()->set_run_id(5);
  e.mutable_queued()->set_position(0);
  EXPECT_EQ(ProgressLine(e, 0, 0), "run 5 queued: next to start");
  e.mutable_queued()->set_position(2);
  EXPECT_EQ(ProgressLine(e, 0, 0), "run 5 queued: 2 runs ahead");

  e.mutable_started()->set_run_id(5);
  e.mutable_started()->mutable_device()->set_name("NVIDIA H200");
  e.mutable_started()->set_total(4);
  EXPECT_EQ(ProgressLine(e, 0, 4), "run 5 started on NVIDIA H200 (GPU 0): 4 measurements planned");

  *e.mutable_measurement() = MakeMeasurement("abl_x", 1.23456, 111.44);
  EXPECT_EQ(ProgressLine(e, 1, 4),
            "[1/4] abl_x bf16 4096x4096x4096: 1.235 ms, 111.4 TFLOPS, noise 0.31%, 57 samples");
  e.mutable_measurement()->set_status(v1::MEASUREMENT_STATUS_FAILED);
  e.mutable_measurement()->set_error("can_implement: K % 32 != 0");
  EXPECT_EQ(ProgressLine(e, 2, 4),
            "[2/4] abl_x bf16 4096x4096x4096: FAILED: can_implement: K % 32 != 0");

  e.mutable_finished()->set_run_id(5);
  e.mutable_finished()->set_state(v1::RUN_STATE_PARTIAL);
  e.mutable_finished()->set_ok(3);
  e.mutable_finished()->set_failed(1);
  EXPECT_EQ(ProgressLine(e, 4, 4), "run 5 partial: 3 ok, 1 failed");

  e.mutable_failed()->set_run_id(5);
  e.mutable_failed()->set_reason("worker could not start");
  EXPECT_EQ(ProgressLine(e, 4, 4), "run 5 failed: worker could not start");
}

}  // namespace
}  // namespace ablation::client
