// TEST DOUBLE, never installed: speaks the worker protocol without a GPU so the CPU tests can
// drive the daemon's whole run path (queue, stream, store, crash recovery, cancel) in CI.
// Its numbers are synthetic and its device says so in its name. Behaviour comes from env vars:
//   ABLATION_FAKE_NO_DEVICE=reason   report no device with this reason
//   ABLATION_FAKE_CRASH_ON=variant   abort() when asked to measure this variant
//   ABLATION_FAKE_SLEEP_MS=n         take n ms per measurement (and per verification)
//   ABLATION_FAKE_HANG_ON=variant    never answer when asked to measure this variant
//   ABLATION_FAKE_MEMORY_MB=n        device memory to report (default 1024)
//   ABLATION_FAKE_FAIL_VERIFY=variant  report a failed verification for this variant
//   ABLATION_FAKE_SASS_BINARY=path    the binary a describe request names (default: this
//                                    program); the symbol is always fake_<variant>_<dtype>
//   ABLATION_FAKE_SM_MHZ=n           the SM clock every sample runs at (default 1980, the fake
//                                    device's maximum)
//   ABLATION_FAKE_LOW_CLOCK_SAMPLES=n  the first n cycles each window returns run at half the
//                                    maximum (990 MHz): throttled, low_clock_samples = n
//   ABLATION_FAKE_REFERENCE_FAIL=variant  the reference fails when verifying this variant
//   ABLATION_FAKE_SPEEDUP=variant=x[,variant=x]  these variants run x times as fast as the rest
//   ABLATION_FAKE_ONCE=path          where the file exists and holds "variant=x[,...] [N]" (as
//                                    ABLATION_FAKE_SPEEDUP, then a count, default 1), the next N
//                                    windows that measure such a variant run it x times as fast;
//                                    the file counts down and is removed at 0: a one-night outlier
//                                    (the nightly job's rerun test; a night's rounds are windows)
//   ABLATION_FAKE_POWER=settled_mhz:tau_s  a power cap: the clock falls from the maximum towards
//                                    settled_mhz as exp(-busy / tau) over the GPU time the fake
//                                    has been busy since it last idled (a pause of 0.1 s or more
//                                    between tasks: a cool-down), with a small oscillation
//   ABLATION_FAKE_TUNE_LOG=path      a line appended each time a cublas_<dtype>_best variant's
//                                    candidates are timed (without a stored choice in the task)
//   ABLATION_FAKE_POWER_CAP, ABLATION_FAKE_DRAW, ABLATION_FAKE_GPU_STATE  a power cap that
//                                    follows what runs: each variant's own draw, a controller
//                                    with a lag, and the board's energy, read by the stand-in
//                                    NVML (fake_power.h); wins over ABLATION_FAKE_POWER
// cuBLAS: eight cuBLASLt candidates per problem at fixed speeds (kCandidateSpeeds), the
// heuristic's first one for cublas_<dtype>, the stored or timed choice (the fastest: the third)
// for cublas_<dtype>_best, each described on its member as the real worker describes it.
// Every sample takes the same SM cycles, so a slower clock makes it longer: the fake's samples
// behave as a kernel does under a power cap. A window runs on virtual time (nothing sleeps but
// ABLATION_FAKE_SLEEP_MS): it "runs" every cycle its window_seconds ask for, and returns at most
// kMaxCycles of them, spread evenly (its gpu_seconds is the whole window's). L2: COLD_ROTATED
// unless the task asks for the flush (COLD) or a hot L2 (HOT). What the daemon stores from a reply
// is filled by the real worker's own code (timing_stats.h, verify_reference.h), so the two cannot
// drift: statistics of the samples and of their clocks, the L2 mode, the reference check and the
// CPU reference's limits.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "ablation/v1/worker.pb.h"
#include "kernels/registry.h"
#include "kernels/user/contract_plan.h"
#include "kernels/user/manifest.h"
#include "server/protocol/framing.h"
#include "server/protocol/verify_reference.h"
#include "server/protocol/window_stats.h"
#include "tests/support/fake_power.h"

namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

double EnvNumber(const char* name, double otherwise) {
  const std::string v = Env(name);
  return v.empty() ? otherwise : std::stod(v);
}

/// ABLATION_FAKE_SPEEDUP's factor for a variant; 1 for one it does not name.
double Speedup(const std::string& spec, const std::string& variant) {
  for (size_t b = 0; b < spec.size();) {
    size_t e = spec.find(',', b);
    if (e == std::string::npos) e = spec.size();
    const std::string item = spec.substr(b, e - b);
    const size_t eq = item.rfind('=');
    if (eq != std::string::npos && item.substr(0, eq) == variant)
      return std::stod(item.substr(eq + 1));
    b = e + 1;
  }
  return 1;
}

/// The manifest of the kernel of its own contract whose code a task carries for `variant`: "" and
/// *m, or why not (no code, a manifest that does not parse, a GEMM's).
std::string OwnManifest(
    const google::protobuf::RepeatedPtrField<ablation::worker::v1::UserCode>& codes,
    const std::string& variant, ablation::kernels::user::Manifest* m) {
  namespace ku = ablation::kernels::user;
  const auto code = std::find_if(codes.begin(), codes.end(),
                                 [&](const auto& c) { return c.variant() == variant; });
  if (code == codes.end()) return "the task carries no code for " + variant;
  if (std::string why =
          ku::ParseManifest(code->manifest(), variant, ku::ManifestLimits::Unbounded(), m);
      !why.empty())
    return "its manifest: " + why;
  return m->general ? "" : "its manifest: not a kernel of its own contract";
}

/// A kernel of its own contract's verification, planned as the real worker plans it with the
/// same host code (its manifest from the task, its sizes, its tensors between canaries, its
/// argument block, its reference's launch), then judged without a GPU: the reference's output
/// is made up and the kernel's equals it, unless `fail`, when one element is off and the message
/// is the one the real worker's comparison writes. "" or why it could not be planned (also set
/// on the result).
std::string FakeOwnVerify(const ablation::worker::v1::VerifyTask& t, bool fail,
                          ablation::v1::VerifyResult* r) {
  namespace ku = ablation::kernels::user;
  std::string why;
  ku::Manifest m;
  ku::KnobSet knobs;
  ku::Sizes sizes;
  ku::BufferPlan plan;
  ku::LaunchGeometry entry, reference;
  const ablation::kernels::Problem p{t.shape().m(), t.shape().n(), t.shape().k(),
                                     ablation::kernels::DType::kBF16};
  why = OwnManifest(t.user_code(), t.variant(), &m);
  if (why.empty() && !ku::ParseVariantName(m, t.variant(), &knobs))
    why = "its manifest names no variant " + t.variant();
  if (why.empty() && (why = ku::SizesOfProblem(*m.general, p, &sizes)).empty() &&
      (why = ku::PlanBuffers(*m.general, sizes, ku::kMaxOwnTensorBytes, &plan)).empty() &&
      (why = ku::Plan(m, knobs, ablation::kernels::Problem{p.m, p.n, p.k, m.dtype}, &entry))
          .empty())
    why = ku::PlanReference(*m.general, sizes, &reference);
  if (!why.empty()) {
    r->set_passed(false);
    r->set_error(why);
    return why;
  }
  (void)ku::PackArguments(*m.general, sizes, plan, 0x7f0000000000ull);
  // The first output tensor: the reference's values, the kernel's the same or one off.
  for (const ku::TensorSpec& spec : m.general->tensors) {
    if (spec.role == ku::TensorRole::kInput) continue;
    const int width = ablation::kernels::ElementBytes(spec.dtype);
    int64_t elements = 0;
    for (const ku::TensorBuffer& b : plan.tensors)
      if (b.name == spec.name) elements = b.elements;
    std::vector<uint8_t> ref(size_t(std::min<int64_t>(elements, 4096) * width), 0x3f);
    std::vector<uint8_t> out = ref;
    if (fail) out[out.size() / 2] ^= 0x40;
    ku::Sizes one = sizes;  // a slice of the tensor: its first 4096 elements as a vector
    ku::TensorSpec slice;
    slice.name = spec.name;
    slice.dtype = spec.dtype;
    ku::OutputStats stats;
    std::unique_ptr<ku::Expression> length;
    if (std::string e =
            ku::Expression::Parse(std::to_string(ref.size() / size_t(width)), {}, &length);
        !e.empty())
      return e;
    slice.shape.push_back(std::move(length));
    const std::string first =
        ku::CompareOutput(slice, one, spec.dtype, out, ref, m.general->reference.tolerance, &stats);
    r->set_passed(first.empty());
    r->set_mismatches(stats.mismatches);
    r->set_max_abs_error(stats.max_abs_error);
    if (!first.empty())
      r->set_error(first + " (" + std::to_string(stats.mismatches) + " of " +
                   std::to_string(stats.elements) + " output elements outside the tolerance)");
    return "";
  }
  r->set_passed(true);
  return "";
}

/// A kernel of its own contract's time at the maximum clock: its work model's bytes at 3 TB/s
/// (71% of the fake device's measured bandwidth) or its operations at 20 tera-ops per second,
/// whichever takes longer. False for every other variant (a GEMM: 2MNK at the fake's rate).
bool OwnContractMs(const ablation::worker::v1::MeasureTask& t, const std::string& variant,
                   double* ms) {
  namespace ku = ablation::kernels::user;
  ku::Manifest m;
  ku::Sizes sizes;
  double ops = 0, bytes = 0;
  if (!OwnManifest(t.user_code(), variant, &m).empty() ||
      !ku::SizesOfProblem(*m.general, {t.shape().m(), t.shape().n(), t.shape().k(), m.dtype},
                          &sizes)
           .empty() ||
      !ku::WorkAt(*m.general, sizes, &ops, &bytes).empty())
    return false;
  *ms = std::max(bytes / 3e12, ops / 20e12) * 1e3;
  return true;
}

/// The fake device's maximum SM clock (an H200's), what low-clock samples are measured against.
constexpr double kMaxSmMhz = ablation::fake::kFakeMaxSmMhz;
/// Most cycles a window returns: a 3 s window of a 64^3 GEMM would be millions.
constexpr int64_t kMaxCycles = 2000;

/// The clock of ABLATION_FAKE_POWER after `busy` seconds of GPU time.
struct PowerModel {
  double settled_mhz = 0;  // 0: no model, the constant clock
  double tau_s = 1;
  double ClockAt(double busy, double constant) const {
    if (settled_mhz <= 0) return constant;
    const double wobble = 1 + 0.004 * std::sin(busy * 6.0) * std::exp(-busy / (4 * tau_s));
    return (settled_mhz + (kMaxSmMhz - settled_mhz) * std::exp(-busy / tau_s)) * wobble;
  }
};

/// The fake cuBLASLt's candidates, in its heuristic's order: speeds against the first.
constexpr double kCandidateSpeeds[] = {1.0, 0.97, 1.06, 0.99, 1.02, 0.95, 1.04, 1.01};
constexpr const char* kCandidateTiles[] = {"256x128", "128x256", "256x128", "128x128",
                                           "64x256",  "256x64",  "128x192", "192x128"};
constexpr int kCandidates = 8;

bool IsLibrary(const std::string& v) { return v.rfind("cublas_", 0) == 0; }
bool IsBest(const std::string& v) {
  return IsLibrary(v) && v.size() > 5 && v.compare(v.size() - 5, 5, "_best") == 0;
}

/// A candidate's opaque algorithm: 64 bytes, as cuBLASLt's, naming its index.
std::string CandidateAlgo(int i) {
  std::string algo(64, '\0');
  algo[0] = 'F';
  algo[1] = char(i);
  return algo;
}
int CandidateOf(const std::string& algo) {
  if (algo.size() != 64 || algo[0] != 'F' || algo[1] < 0 || algo[1] >= kCandidates) return -1;
  return algo[1];
}

void DescribeCandidate(int i, ablation::v1::LibraryAlgo* a) {
  a->set_library_algo_id(20 + i);
  a->set_library_tile(kCandidateTiles[i]);
  a->set_library_stages("64x4");
  a->set_library_split_k(1);
  a->set_library_reduction(0);
  a->set_library_swizzle(i % 2);
  a->set_library_custom(0);
  a->set_library_cluster("1x2x1");
  a->set_library_rank(i);
  a->set_library_candidates(kCandidates);
  a->set_library_config("algo " + std::to_string(20 + i) + ", tile " + kCandidateTiles[i] +
                        ", stages 64x4, split-K 1, reduction 0, swizzle " + std::to_string(i % 2) +
                        ", custom 0, cluster 1x2x1");
}

/// What a library variant of the task launches: its candidate (the stored choice, else timed now
/// into *tuning), and its description. -1 for other variants.
int LibraryCandidate(const ablation::worker::v1::MeasureTask& t, const std::string& v,
                     double base_ms, ablation::worker::v1::MemberResult* member,
                     const std::string& tune_log) {
  if (!IsLibrary(v)) return -1;
  if (!IsBest(v)) {
    DescribeCandidate(0, member->mutable_library());
    member->mutable_library()->set_library_pick("heuristic");
    return 0;
  }
  int chosen = -1;
  for (const auto& c : t.library_choices())
    if (c.variant() == v) chosen = CandidateOf(c.algo());
  if (chosen < 0) {
    auto* tuning = member->mutable_tuning();
    tuning->set_launches(15);
    for (int i = 0; i < kCandidates; ++i) {
      auto* c = tuning->add_candidates();
      DescribeCandidate(i, c->mutable_algo());
      c->set_algo_data(CandidateAlgo(i));
      c->set_median_ms(base_ms / kCandidateSpeeds[i]);
      if (chosen < 0 || kCandidateSpeeds[i] > kCandidateSpeeds[chosen]) chosen = i;
    }
    tuning->set_chosen(chosen);
    if (!tune_log.empty())
      std::ofstream(tune_log, std::ios::app)
          << "tuned " << v << " " << t.dtype() << " " << t.shape().m() << "x" << t.shape().n()
          << "x" << t.shape().k() << "\n";
  }
  DescribeCandidate(chosen, member->mutable_library());
  member->mutable_library()->set_library_pick("best of " + std::to_string(kCandidates) + " timed");
  return chosen;
}

PowerModel ParsePower(const std::string& spec) {
  PowerModel m;
  if (spec.empty()) return m;
  const size_t colon = spec.find(':');
  m.settled_mhz = std::stod(spec.substr(0, colon));
  if (colon != std::string::npos) m.tau_s = std::max(1e-3, std::stod(spec.substr(colon + 1)));
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  // `--device N` as the daemon passes it; ABLATION_FAKE_DEVICES=K makes the hello report K GPUs,
  // each its own UUID, so that multi-GPU daemons can be tested without GPUs.
  int device = 0;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--device") device = std::atoi(argv[i + 1]);
  using namespace ablation;
  kernels::Registry catalog;  // the built-in catalog: the builds a describe with a shape names
  kernels::RegisterCatalog(catalog);
  worker::v1::WorkerReply hello_reply;
  auto* hello = hello_reply.mutable_hello();
  hello->set_pid(::getpid());
  std::string no_device = Env("ABLATION_FAKE_NO_DEVICE");
  if (!no_device.empty()) {
    hello->set_device_present(false);
    hello->set_no_device_reason(no_device);
  } else {
    hello->set_device_present(true);
    const std::string devices = Env("ABLATION_FAKE_DEVICES");
    hello->set_device_count(devices.empty() ? 1 : std::max(1, std::atoi(devices.c_str())));
    auto* d = hello->mutable_device();
    d->set_name("Fake GPU (test double)");
    d->set_uuid("GPU-00000000-0000-0000-0000-00000000000" + std::to_string(device % 10));
    d->set_compute_capability("9.0");
    d->set_sm_count(132);
    d->set_resident_pair_clusters(66);  // an H200's (kernels/sm90/sm90_plan.h)
    d->set_driver_version("13.0");
    d->set_cuda_runtime_version("13.0");
    d->set_cublas_version("13.1.0");
    int64_t mb =
        Env("ABLATION_FAKE_MEMORY_MB").empty() ? 1024 : std::stoll(Env("ABLATION_FAKE_MEMORY_MB"));
    d->set_memory_bytes(mb << 20);
    d->set_l2_bytes(int64_t(8) << 20);
  }
  if (!protocol::WriteMessage(1, hello_reply).empty()) return 1;

  const std::string crash_on = Env("ABLATION_FAKE_CRASH_ON");
  const std::string hang_on = Env("ABLATION_FAKE_HANG_ON");
  const std::string fail_verify = Env("ABLATION_FAKE_FAIL_VERIFY");
  const std::string reference_fail = Env("ABLATION_FAKE_REFERENCE_FAIL");
  const int sleep_ms =
      Env("ABLATION_FAKE_SLEEP_MS").empty() ? 0 : std::stoi(Env("ABLATION_FAKE_SLEEP_MS"));
  const double sm_mhz = EnvNumber("ABLATION_FAKE_SM_MHZ", kMaxSmMhz);
  const int low_clock_samples = int(EnvNumber("ABLATION_FAKE_LOW_CLOCK_SAMPLES", 0));
  // As the real worker keeps a problem's inputs resident, the fake says which measurements would
  // have found them so: those of the problem and seed it last measured (until a release).
  std::string resident;
  const std::string speedup = Env("ABLATION_FAKE_SPEEDUP");
  const std::string once_path = Env("ABLATION_FAKE_ONCE");
  const std::string tune_log = Env("ABLATION_FAKE_TUNE_LOG");
  const PowerModel power = ParsePower(Env("ABLATION_FAKE_POWER"));
  double busy_s = 0;  // GPU time since the fake GPU last idled
  // The power cap that follows what runs (fake_power.h), and the board the stand-in NVML reads.
  const fake::PowerCap cap = fake::ParsePowerCap(Env("ABLATION_FAKE_POWER_CAP"));
  const std::string draws = Env("ABLATION_FAKE_DRAW");
  const std::string state_path = fake::StatePath();
  fake::PowerController controller(cap);
  fake::BoardState board;
  if (!state_path.empty()) fake::ReadBoardState(state_path, &board);  // the counter goes on
  auto last_task_end = std::chrono::steady_clock::now();
  while (true) {
    worker::v1::WorkerRequest req;
    std::string error;
    auto st = protocol::ReadMessage(0, &req, &error);
    if (st == protocol::ReadStatus::kEof) return 0;
    if (st != protocol::ReadStatus::kOk) return 3;
    worker::v1::WorkerReply reply;
    if (req.has_measure()) {
      const auto& t = req.measure();
      for (const std::string& v : t.variants()) {
        if (v == crash_on) {
          std::fprintf(stderr, "fake worker: crashing on %s as asked\n", v.c_str());
          std::abort();
        }
        if (v == hang_on) {
          std::fprintf(stderr, "fake worker: hanging on %s as asked\n", v.c_str());
          for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
        }
      }
      const auto started = std::chrono::steady_clock::now();
      // A pause between tasks cools the fake GPU down: its busy time starts again.
      if (std::chrono::duration<double>(started - last_task_end).count() >=
          fake::kIdleAfterSeconds) {
        busy_s = 0;
        controller.Idle();
      }
      if (sleep_ms) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
      auto* r = reply.mutable_measure();
      r->set_task_id(t.task_id());
      const std::string key = t.dtype() + " " + std::to_string(t.shape().m()) + "x" +
                              std::to_string(t.shape().n()) + "x" + std::to_string(t.shape().k()) +
                              " " + std::to_string(t.seed());
      r->mutable_cost()->set_inputs_reused(key == resident);
      resident = key;
      if (!no_device.empty()) {
        r->set_ok(false);
        r->set_error(no_device);
      } else if (t.variants_size() == 0) {
        r->set_ok(false);
        r->set_error("the window names no variant");
      } else {
        r->set_ok(true);
        r->set_l2(protocol::RequestedL2Mode(t.timing()));
        // The copy kernel's figure under the task's clocks, made up: locked memory clocks read
        // less than the 4.2 TB/s the hello reports.
        r->set_measured_bandwidth(t.clock_policy().rfind("lock", 0) == 0 ? 3.9e12 : 4.2e12);
        const double flops =
            2.0 * double(t.shape().m()) * double(t.shape().n()) * double(t.shape().k());
        // 100 TFLOPS at the maximum clock; fp32's FFMA peak (66.9 on its fake H200) is lower, and a
        // figure above the peak is refused, so fp32 runs at 20.
        const double rate = t.dtype() == "fp32" ? 20e12 : 100e12;
        std::vector<double> base;  // ms per variant at the maximum clock
        double cycle_ms = 0;
        std::string once;
        int once_left = 0;
        if (!once_path.empty()) {
          std::ifstream file(once_path);
          if (file >> once && !(file >> once_left)) once_left = 1;
        }
        bool once_used = false;
        std::vector<worker::v1::MemberResult> library(size_t(t.variants_size()));
        for (int i = 0; i < t.variants_size(); ++i) {
          const std::string& v = t.variants(i);
          const double factor = Speedup(once, v);
          once_used |= factor != 1;
          double ms = OwnContractMs(t, v, &ms) ? ms : flops / rate * 1e3;
          ms = ms / Speedup(speedup, v) / factor;
          const int candidate = LibraryCandidate(t, v, ms, &library[size_t(i)], tune_log);
          if (candidate >= 0) ms /= kCandidateSpeeds[candidate];
          base.push_back(ms);
          cycle_ms += base.back();
        }
        if (once_used && --once_left <= 0) {
          std::filesystem::remove(once_path);
        } else if (once_used) {
          std::ofstream(once_path) << once << ' ' << once_left << '\n';
        }
        // Cycles the window "runs": enough for its GPU time and min_cycles, within max_cycles.
        int64_t cycles = std::max<int64_t>(t.min_cycles(), 1);
        if (t.window_seconds() > 0 && cycle_ms > 0)
          cycles = std::max<int64_t>(
              cycles, int64_t(std::ceil(std::min(1e3 * t.window_seconds() / cycle_ms, 1e9))));
        if (t.max_cycles() > 0) cycles = std::min<int64_t>(cycles, t.max_cycles());
        const int64_t kept = std::min(cycles, kMaxCycles);
        std::vector<std::vector<double>> clocks(size_t(t.variants_size()));
        std::vector<double> draw;
        for (const std::string& v : t.variants()) draw.push_back(fake::DrawOf(draws, v));
        double gpu_s = 0, energy_j = 0;
        for (int i = 0; i < t.variants_size(); ++i) {
          auto* m = r->add_members();
          *m = library[size_t(i)];
          m->set_variant(t.variants(i));
        }
        // At a constant clock the cycles not returned only add their time: counted whole, so
        // that a window of a small kernel (millions of cycles) costs what its returned ones do.
        const bool constant = !cap.enabled() && power.settled_mhz <= 0;
        if (constant && cycles > kept) {
          const double skipped_s = double(cycles - kept) * cycle_ms * kMaxSmMhz / sm_mhz / 1e3;
          busy_s += skipped_s;
          gpu_s += skipped_s;
        }
        for (int64_t c = 0, k = 0; c < cycles; ++c) {
          const bool keep = k < kept && c * kept / cycles == k;  // evenly spread
          if (constant && !keep) {
            c = (k * cycles + kept - 1) / kept - 1;  // the next returned cycle
            continue;
          }
          for (int i = 0; i < t.variants_size(); ++i) {
            // The wobble is the returned cycle's, shared by every variant in it, as a real
            // window's clock is: paired ratios cancel it exactly, and two windows that return as
            // many cycles have the same samples, so the fake's changes are exact.
            const double work = base[size_t(i)] * (1.0 + 0.001 * std::sin(double(keep ? k : c)));
            double mhz, ms;
            if (cap.enabled()) {
              mhz = controller.Clock();
              ms = controller.Step(draw[size_t(i)], work * 1e-3 * kMaxSmMhz * 1e6, &energy_j);
            } else {
              mhz = keep && k < low_clock_samples ? kMaxSmMhz / 2 : power.ClockAt(busy_s, sm_mhz);
              ms = work * kMaxSmMhz / mhz;
            }
            busy_s += ms / 1e3;
            gpu_s += ms / 1e3;
            if (keep) {
              r->mutable_members(i)->add_sample_ms(ms);
              clocks[size_t(i)].push_back(mhz);
            }
          }
          if (keep) ++k;
        }
        for (int i = 0; i < t.variants_size(); ++i) {
          auto* m = r->mutable_members(i);
          // As the real worker, a user variant runs only with its build in the task.
          if (t.variants(i).rfind("user.", 0) == 0 &&
              std::none_of(t.user_code().begin(), t.user_code().end(),
                           [&](const auto& c) { return c.variant() == t.variants(i); })) {
            m->set_ok(false);
            m->set_error("the task carries no code for user variant " + t.variants(i));
            m->clear_sample_ms();
            continue;
          }
          m->set_ok(true);
          // Stored as they come: the real worker's computation of the statistics.
          protocol::SetSampleClocks(m, clocks[size_t(i)]);
          protocol::SetStatsFromSamples(
              m, {.max_sm_mhz = kMaxSmMhz, .low_clock_fraction = t.timing().low_clock_fraction()});
          m->mutable_occupancy()->set_threads_per_block(256);
        }
        protocol::SetWindowTotals(r);
        // The whole window's GPU time and cycles, not only the samples returned.
        r->set_gpu_seconds(gpu_s);
        r->set_launched_cycles(cycles);
        if (cap.enabled() && !state_path.empty()) {
          board.energy_mj += 1e3 * energy_j;
          board.power_w = gpu_s > 0 ? energy_j / gpu_s : fake::kIdlePowerW;
          board.sm_mhz = controller.Clock();
          board.capped = controller.Capped();
        }
        // Synthetic too: the sleep as the sampling, nothing for the rest.
        r->mutable_cost()->set_setup_seconds(0);
        r->mutable_cost()->set_warmup_seconds(0);
        // The window's span: its virtual time (the daemon's settling weighs chunks by it).
        r->mutable_cost()->set_sampling_seconds(gpu_s + sleep_ms / 1e3);
      }
      r->mutable_cost()->set_worker_seconds(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
      last_task_end = std::chrono::steady_clock::now();
      // Before the reply: the daemon reads the energy counter as soon as it has it.
      if (cap.enabled() && !state_path.empty()) {
        board.ended_unix =
            std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
                .count();
        fake::WriteBoardState(state_path, board);
      }
    } else if (req.has_describe()) {
      // Names a kernel that a stand-in disassembler (ABLATION_CUOBJDUMP in the e2e tests) knows.
      const auto& t = req.describe();
      auto* r = reply.mutable_describe();
      r->set_task_id(t.task_id());
      if (!no_device.empty()) {
        r->set_ok(false);
        r->set_error(no_device);
      } else {
        r->set_ok(true);
        // A library entry (cuBLAS: no threads of ours) names no kernel, as the real worker's.
        const kernels::Variant* entry = catalog.Find(t.variant());
        if (entry != nullptr && entry->family == "cublas")
          r->set_library(true);
        else
          r->set_kernel_symbol("fake_" + t.variant() + "_" + t.dtype());
        // With a shape, the build the catalog's plan names for it on an H200 (132 SMs, 66 pairs).
        if (t.has_shape()) {
          if (const kernels::Variant* v = catalog.Find(t.variant()); v && v->build) {
            kernels::Problem p;
            p.m = t.shape().m();
            p.n = t.shape().n();
            p.k = t.shape().k();
            r->set_build(v->build(p, {.sms = 132, .pair_clusters = 66}));
          }
        }
        std::string binary = Env("ABLATION_FAKE_SASS_BINARY");
        r->set_binary(binary.empty() ? "/proc/self/exe" : binary);
        r->set_arch("sm_90");
      }
    } else if (req.has_release()) {
      reply.mutable_release()->set_task_id(req.release().task_id());
      reply.mutable_release()->set_released_problems(resident.empty() ? 0 : 1);
      resident.clear();
    } else if (req.has_verify()) {
      const auto& t = req.verify();
      if (sleep_ms) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
      auto* r = reply.mutable_verify();
      r->set_variant(t.variant());
      r->set_dtype(t.dtype());
      *r->mutable_shape() = t.shape();
      r->set_reference(t.reference());
      r->set_reference_variant(t.reference_variant());
      // A task without a reference is refused as the real worker refuses it, with its words.
      std::string bad = protocol::CheckReference(t);
      if (bad.empty() && t.reference() == v1::REFERENCE_CPU) {
        bad = protocol::CpuReferenceRefusal(t.shape());
        r->set_reference_failed(!bad.empty());
      }
      if (bad.empty() && t.variant() == reference_fail) {
        bad = "reference: the fake worker's reference failed for " + t.variant() + ", as asked";
        r->set_reference_failed(true);
      }
      if (bad.empty() && t.reference() == v1::REFERENCE_OWN) {
        bad = FakeOwnVerify(t, t.variant() == fail_verify, r);
      } else if (!bad.empty()) {
        r->set_passed(false);
        r->set_error(bad);
      } else {
        bool fail = t.variant() == fail_verify;
        r->set_passed(!fail);
        r->set_rel_frobenius_error(fail ? 0.5 : 0.0);
        r->set_mismatches(fail ? 1234 : 0);
        r->set_tolerance(0.01);
      }
    }
    if (!protocol::WriteMessage(1, reply).empty()) return 1;
  }
}
