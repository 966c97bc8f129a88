// A bounded load test on loopback: 64 clients for ABLATION_LOAD_SECONDS (default 60) against a
// real daemon with the fake worker, each mixing queries with small runs. Asserts no unexpected
// error, runs serialised on the one GPU, and every measurement a client was told of stored;
// prints the request count and the p50/p99 latency of queries made while runs were measuring.
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "db/store.h"
#include "tests/e2e/harness.h"

namespace ablation::testing {
namespace {

using Clock = std::chrono::steady_clock;

struct Tally {
  std::mutex mu;
  std::vector<double> query_ms;
  std::map<std::string, int> unexpected;  ///< "Method: CODE message" -> count
  long requests = 0;
  long runs = 0;
  long measurements_seen = 0;
  void Error(const std::string& what, const grpc::Status& st) {
    std::lock_guard lock(mu);
    ++unexpected[what + ": " + std::to_string(int(st.error_code())) + " " + st.error_message()];
  }
};

// One client: a query most of the time, a run of two measurements now and then.
void Client(const std::shared_ptr<grpc::Channel>& channel, int seed, Clock::time_point end,
            Tally* tally) {
  auto stub = v1::Ablation::NewStub(channel);
  std::mt19937 random(seed);
  while (Clock::now() < end) {
    const int pick = int(random() % 20);
    if (pick == 0) {
      v1::RunRequest request;
      request.add_variants("abl_L1_R1_bl0_s3_sw1");
      request.add_variants("cublas_bf16");
      auto* s = request.add_shapes();
      s->set_m(128 * (1 + int(random() % 4)));
      s->set_n(256);
      s->set_k(256);
      request.add_tags("load");
      grpc::ClientContext ctx;
      ctx.set_wait_for_ready(true);  // a dropped connection is reconnected, not a failed call
      auto reader = stub->RunAblation(&ctx, request);
      v1::RunEvent event;
      long seen = 0;
      while (reader->Read(&event)) seen += event.has_measurement();
      grpc::Status st = reader->Finish();
      std::lock_guard lock(tally->mu);
      ++tally->requests;
      if (!st.ok()) {
        ++tally->unexpected["RunAblation: " + st.error_message()];
      } else {
        ++tally->runs;
        tally->measurements_seen += seen;
      }
      continue;
    }
    grpc::ClientContext ctx;
    // As a patient client does: a connection lost under the load (gRPC's memory quota may close
    // one) is made again rather than failing every call for its backoff; a daemon that stops
    // answering still fails the call at its deadline, and one that dies fails the test below.
    ctx.set_wait_for_ready(true);
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    const auto start = Clock::now();
    grpc::Status st;
    std::string what;
    switch (pick % 5) {
      case 0: {
        v1::ListRunsResponse r;
        st = stub->ListRuns(&ctx, v1::ListRunsRequest(), &r);
        what = "ListRuns";
        break;
      }
      case 1: {
        v1::GetRunResponse r;
        st = stub->GetRun(&ctx, v1::GetRunRequest(), &r);
        // No run yet is an answer too.
        if (st.error_code() == grpc::StatusCode::NOT_FOUND) st = grpc::Status::OK;
        what = "GetRun";
        break;
      }
      case 2: {
        v1::QueryMeasurementsRequest q;
        q.set_variant_glob("abl_*");
        q.set_page_size(100);
        v1::QueryMeasurementsResponse r;
        st = stub->QueryMeasurements(&ctx, q, &r);
        what = "QueryMeasurements";
        break;
      }
      case 3: {
        v1::ListVariantsRequest q;
        q.set_glob("abl_L1_*");
        v1::ListVariantsResponse r;
        st = stub->ListVariants(&ctx, q, &r);
        what = "ListVariants";
        break;
      }
      default: {
        v1::GetDeviceResponse r;
        st = stub->GetDevice(&ctx, v1::GetDeviceRequest(), &r);
        what = "GetDevice";
        break;
      }
    }
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (!st.ok()) tally->Error(what, st);
    std::lock_guard lock(tally->mu);
    ++tally->requests;
    tally->query_ms.push_back(ms);
  }
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(p * double(v.size())))];
}

TEST(Load, SixtyFourClientsMixingQueriesAndRuns) {
  const char* env = std::getenv("ABLATION_LOAD_SECONDS");
  // 30 s by default (ABLATION_LOAD_SECONDS for longer): long enough for every client to mix
  // hundreds of queries with runs, short enough for the 2-core CI's 15 minutes.
  const int seconds = env && *env ? std::atoi(env) : 30;
  const std::string dir = MakeTempDir();
  std::ofstream(dir + "/ablationd.toml")
      << "log_level = \"warn\"\n[limits]\nmax_runs_per_identity = 1000\nmax_runs_total = 1000\n"
         "[queue]\nmax_queued_per_gpu = 1000\n";
  Daemon daemon(dir, FAKE_WORKER_PATH, {{"ABLATION_FAKE_SLEEP_MS", "5"}});
  daemon.set_extra_args({"--config", dir + "/ablationd.toml"});
  ASSERT_EQ(daemon.Start(), "");

  Tally tally;
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (int i = 0; i < 8; ++i) {
    grpc::ChannelArguments args;
    args.SetInt("grpc.channel_id", i);  // separate connections, not one shared
    channels.push_back(
        grpc::CreateCustomChannel(daemon.address(), grpc::InsecureChannelCredentials(), args));
  }
  const auto end = Clock::now() + std::chrono::seconds(seconds);
  std::vector<std::thread> clients;
  for (int i = 0; i < 64; ++i)
    clients.emplace_back(Client, channels[size_t(i % 8)], i, end, &tally);
  for (auto& t : clients) t.join();

  for (const auto& [what, n] : tally.unexpected) ADD_FAILURE() << n << " x " << what;
  if (!tally.unexpected.empty()) {
    // What the daemon said while the clients failed (gRPC's own refusals go to its stderr).
    const std::string log = daemon.log();
    ADD_FAILURE() << "the daemon's log, last 6000 bytes:\n"
                  << log.substr(log.size() > 6000 ? log.size() - 6000 : 0);
  }
  EXPECT_GT(tally.runs, 0);

  // Every measurement a client saw is stored, every run finished, and no two overlapped.
  auto store = db::Store::OpenReadOnly(daemon.db_path());
  std::vector<v1::Run> runs;
  db::RunFilter filter;
  filter.page_size = 1000;
  for (;;) {
    db::RunPage page = store->ListRuns(filter);
    runs.insert(runs.end(), page.runs.begin(), page.runs.end());
    if (page.next_page_token.empty()) break;
    filter.page_token = page.next_page_token;
  }
  long stored = 0;
  for (const auto& run : runs) {
    stored += run.ok() + run.failed();
    EXPECT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED) << "run " << run.id();
    EXPECT_EQ(run.ok(), run.planned()) << "run " << run.id();
  }
  EXPECT_EQ(long(runs.size()), tally.runs);
  EXPECT_EQ(stored, tally.measurements_seen);
  std::sort(runs.begin(), runs.end(), [](const v1::Run& a, const v1::Run& b) {
    return a.started_at_ms() < b.started_at_ms();
  });
  for (size_t i = 1; i < runs.size(); ++i)
    EXPECT_LE(runs[i - 1].finished_at_ms(), runs[i].started_at_ms())
        << "runs " << runs[i - 1].id() << " and " << runs[i].id() << " overlapped on GPU 0";

  std::printf(
      "load: %d s, 64 clients: %ld requests (%ld runs, %ld measurements stored), queries "
      "during runs p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
      seconds, tally.requests, tally.runs, stored, Percentile(tally.query_ms, 0.50),
      Percentile(tally.query_ms, 0.99), Percentile(tally.query_ms, 1.0));
  // The daemon served the whole load and ends as asked (a crash under load shows here, with its
  // log above when the clients saw it).
  const int status = daemon.Stop(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "ablationd ended with wait status " << status
      << (WIFSIGNALED(status) ? " (signal " + std::to_string(WTERMSIG(status)) + ")" : "")
      << "; log:\n"
      << daemon.log();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ablation::testing
