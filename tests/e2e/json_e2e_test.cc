// Every command's --format json against the real daemon (fake worker, real SQLite, stand-ins for
// ncu and cuobjdump, the real NVRTC compiler): one envelope (schema_version, kind, items) each,
// its items the API's messages with every enum value in the words of the CSV and the database,
// never a proto spelling (RUN_STATE_SUCCEEDED). The commands are those `--help` lists, so that a
// new command without its envelope fails here.
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ablation/v1/ablation.pb.h"
#include "ablation/v1/report.pb.h"
#include "client/output/json.h"
#include "tests/e2e/harness.h"

namespace ablation::testing {
namespace {

using ::testing::HasSubstr;

const std::string kExamples = std::string(SOURCE_DIR) + "/examples/user-kernels";

// Every value name of every enum of the API's files ("RUN_STATE_SUCCEEDED", "REGIME_BURST"),
// quoted as JSON would have it.
std::vector<std::string> ProtoEnumSpellings() {
  std::vector<std::string> names;
  for (const google::protobuf::FileDescriptor* file :
       {google::protobuf::DescriptorPool::generated_pool()->FindFileByName(
            "ablation/v1/ablation.proto"),
        v1::Report::descriptor()->file()}) {
    // The file and every file it imports, however deep (the API is in files by what they serve).
    std::vector<const google::protobuf::FileDescriptor*> files = {file};
    for (size_t k = 0; k < files.size(); ++k)
      for (int i = 0; i < files[k]->dependency_count(); ++i)
        if (std::find(files.begin(), files.end(), files[k]->dependency(i)) == files.end())
          files.push_back(files[k]->dependency(i));
    for (const auto* f : files) {
      if (f->package() != "ablation.v1") continue;
      auto add = [&](const google::protobuf::EnumDescriptor* e) {
        for (int v = 0; v < e->value_count(); ++v)
          names.push_back("\"" + e->value(v)->name() + "\"");
      };
      for (int e = 0; e < f->enum_type_count(); ++e) add(f->enum_type(e));
      for (int m = 0; m < f->message_type_count(); ++m)
        for (int e = 0; e < f->message_type(m)->enum_type_count(); ++e)
          add(f->message_type(m)->enum_type(e));
    }
  }
  return names;
}

// The subcommands `ablation-client --help` lists.
std::set<std::string> Subcommands() {
  const CommandResult help = RunCommand({CLIENT_PATH, "--help"});
  std::set<std::string> names;
  std::istringstream in(help.out);
  bool in_list = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("SUBCOMMANDS:", 0) == 0 || line.rfind("Subcommands:", 0) == 0) {
      in_list = true;
      continue;
    }
    if (in_list && line.empty()) break;  // the list ends; the exit codes follow
    if (!in_list || line.size() < 3 || line[0] != ' ') continue;
    std::istringstream words(line);
    std::string name;
    words >> name;
    if (!name.empty()) names.insert(name);
  }
  return names;
}

class JsonE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    ASSERT_FALSE(dir_.empty());
    const std::string ncu = Script("ncu",
                                   "if [ \"$1\" = --version ]; then echo 'Version 2025.3.1.0'; "
                                   "exit 0; fi\n"
                                   "while [ $# -gt 0 ]; do [ \"$1\" = --variant ] && variant=$2; "
                                   "shift; done\n"
                                   "cat \"" NCU_TESTDATA_DIR "/$variant.csv\"\n");
    // A stand-in cuobjdump that finds no listing: sass answers, per kernel, that it printed none.
    const std::string cuobjdump =
        Script("cuobjdump",
               "printf '\\nFatbin elf code:\\n================\\narch = sm_90\\n\\n\\tcode "
               "for sm_90\\n'\n");
    const std::string config = dir_ + "/ablationd.toml";
    std::ofstream(config) << "[user_kernels]\ncompiler = \"" COMPILER_PATH
                             "\"\nadd_role = \"run\"\n";
    daemon_ = std::make_unique<Daemon>(
        dir_, FAKE_WORKER_PATH,
        std::map<std::string, std::string>{{"ABLATION_FAKE_SLEEP_MS", "1"},
                                           {"ABLATION_NCU", ncu},
                                           {"ABLATION_CUOBJDUMP", cuobjdump}});
    daemon_->set_extra_args({"--config", config});
    ASSERT_EQ(daemon_->Start(), "");
  }
  void TearDown() override {
    if (daemon_) daemon_->Stop(SIGTERM);
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::string Script(const std::string& name, const std::string& body) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n" << body;
    ::chmod(path.c_str(), 0755);
    return path;
  }

  // Runs the command with --format json and checks its exit code and its envelope: the kind, at
  // least `min_items` items, no proto enum spelling. Returns it.
  client::ParsedEnvelope Envelope(const std::string& command, std::vector<std::string> args,
                                  const std::string& kind, size_t min_items = 1,
                                  int exit_code = 0) {
    covered_.insert(command);
    args.insert(args.begin(), {"--format", "json", command});
    const CommandResult r = daemon_->Client(args);
    client::ParsedEnvelope envelope;
    const std::string where = command + ": " + r.out + r.err;
    EXPECT_EQ(r.exit_code, exit_code) << where;
    const std::string error = client::ParseJsonEnvelope(r.out, &envelope);
    EXPECT_EQ(error, "") << where;
    if (!error.empty()) return envelope;
    EXPECT_EQ(envelope.schema_version, client::kJsonSchemaVersion) << where;
    EXPECT_EQ(envelope.kind, kind) << where;
    EXPECT_GE(envelope.items.size(), min_items) << where;
    if (envelope.items.size() < min_items) envelope.items.resize(min_items);  // the checks go on
    EXPECT_EQ(envelope.keys.front(), "schema_version") << where;
    EXPECT_EQ(envelope.keys.back(), "items") << where;
    for (const std::string& spelling : spellings_)
      EXPECT_EQ(r.out.find(spelling), std::string::npos) << command << " prints " << spelling;
    return envelope;
  }

  std::string dir_;
  std::unique_ptr<Daemon> daemon_;
  std::set<std::string> covered_;
  const std::vector<std::string> spellings_ = ProtoEnumSpellings();
};

TEST_F(JsonE2E, EveryCommandPrintsOneEnvelopeInTheWordsOfTheCsv) {
  ASSERT_GT(spellings_.size(), 50u);  // the check below has something to look for
  Envelope("variants", {"abl_L1_*"}, "variants", 2);
  Envelope("device", {}, "device");
  Envelope("presets", {}, "presets", 2);
  Envelope("budget", {"L1_R1_s4", "--arch", "sm_86"}, "budget");
  Envelope("advise",
           {"--bm", "128", "--bn", "128", "--bk", "32", "--dtype", "fp16", "--arch", "sm_80"},
           "advice");

  // Run 1: verified rows; its state beside them, its rows' status and verification in words.
  auto run = Envelope("run", {"-v", "L1_R1_s3", "-v", "cublas_bf16", "-s", "256", "--verify"},
                      "measurements", 2);
  EXPECT_EQ(run.Field("run_id"), "1");
  EXPECT_EQ(run.Field("state"), "\"succeeded\"");
  EXPECT_THAT(run.items[0], HasSubstr("\"status\":\"ok\""));
  EXPECT_THAT(run.items[0], HasSubstr("\"regime\":\"sustained\""));
  EXPECT_THAT(run.items[0], HasSubstr("\"verification_outcome\":\"passed\""));
  // Run 2: a preset.
  auto sweep = Envelope("sweep", {"--preset", "ladder-a", "--shape", "256", "--rounds", "1"},
                        "measurements", 4);
  EXPECT_EQ(sweep.Field("run_id"), "2");
  // Run 3: a verify run.
  auto verify = Envelope("verify", {"--variant", "L1_R1_s3", "--shape", "256"}, "verifications");
  EXPECT_EQ(verify.Field("run_id"), "3");
  EXPECT_THAT(verify.items[0], HasSubstr("\"reference\":\"cpu\""));

  auto watch = Envelope("watch", {"1"}, "measurements", 2);
  EXPECT_EQ(watch.Field("state"), "\"succeeded\"");
  auto runs = Envelope("runs", {}, "runs", 3);
  EXPECT_EQ(runs.Field("truncated"), "false");
  EXPECT_THAT(runs.items[0], HasSubstr("\"kind\":\"verify\""));
  EXPECT_THAT(runs.items[1], HasSubstr("\"state\":\"succeeded\""));
  auto newest = Envelope("runs", {"--limit", "1"}, "runs", 1);
  EXPECT_EQ(newest.Field("truncated"), "true");
  EXPECT_THAT(newest.Field("notice"), HasSubstr("--limit 0 for all"));
  auto show = Envelope("show", {"1"}, "run");
  EXPECT_THAT(show.items[0], HasSubstr("\"state\":\"succeeded\""));
  auto results = Envelope("results", {"--limit", "2"}, "measurements", 2);
  EXPECT_EQ(results.Field("truncated"), "true");
  auto history = Envelope("history", {"L1_R1_s3"}, "history");
  EXPECT_THAT(history.items[0], HasSubstr("\"variant\":\"abl_L1_R1_bl0_s3_sw1\""));
  EXPECT_EQ(history.Field("significance"), "\"0.01\"");
  auto report = Envelope("report", {"2"}, "report");
  EXPECT_THAT(report.items[0], HasSubstr("\"layout\":\"ladder\""));
  auto compare = Envelope("compare", {"1", "1"}, "comparison");
  EXPECT_THAT(compare.items[0], HasSubstr("\"state_a\":\"succeeded\""));
  auto cancel = Envelope("cancel", {"1"}, "cancellation");
  EXPECT_EQ(cancel.Field("run_id"), "1");
  EXPECT_THAT(cancel.items[0], HasSubstr("\"state\":\"succeeded\""));

  // The stand-in disassembler prints no listing: the kernel's verdict is an error (exit 1), and
  // the answer is still the envelope.
  auto sass = Envelope("sass", {"abl_L1_R1_bl0_s3_sw1", "--dtype", "fp16"}, "sass", 1, 1);
  EXPECT_THAT(sass.items[0], HasSubstr("\"verdict\":\"error\""));
  Envelope("profile", {"L1_R1_s3"}, "profile");

  // User kernels: added (compiled by NVRTC), listed, shown.
  Envelope("kernel",
           {"add", kExamples + "/tiled_gemm.cu", "--manifest", kExamples + "/tiled_gemm.toml"},
           "kernel");
  Envelope("kernel", {"list"}, "kernels", 1);
  auto kernel = Envelope("kernel", {"show", "tiled"}, "kernel");
  EXPECT_THAT(kernel.items[0], HasSubstr("\"registers\":"));

  // Every command but `completion` (a shell script) was asked above.
  std::set<std::string> expected = Subcommands();
  ASSERT_GT(expected.size(), 15u) << "cannot read the subcommands of --help";
  expected.erase("completion");
  EXPECT_EQ(covered_, expected);
}

}  // namespace
}  // namespace ablation::testing
