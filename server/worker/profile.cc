#include "server/worker/profile.h"

#include <cuda_profiler_api.h>

#include <fstream>
#include <sstream>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kernels/cublas/cublas_lt.h"
#include "server/worker/diagnostics.h"
#include "server/worker/launch.h"
#include "server/worker/library_choice.h"
#include "server/worker/resident.h"
#include "server/worker/user_kernels.h"
#include "server/worker/variant_lookup.h"

namespace ablation::worker {

namespace k = ::ablation::kernels;

namespace {

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
/// More would only lengthen the process the profiler waits for; the launch path and clocks are
/// settled after a few launches of a GEMM of any useful size.
constexpr int kMaxWarmup = 1000;

bool ParseInt64(const char* s, int64_t* out) {
  char* end = nullptr;
  long long v = std::strtoll(s, &end, 10);
  if (end == s || *end != '\0') return false;
  *out = v;
  return true;
}

/// Two hexadecimal digits a byte (either case) into *out; false for anything else. By hand: the
/// worker links nothing that has it, and it is a loop over a 128-character argument.
bool FromHex(const std::string& text, std::string* out) {
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (text.size() % 2 != 0) return false;
  out->clear();
  for (size_t i = 0; i < text.size(); i += 2) {
    const int hi = digit(text[i]), lo = digit(text[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(char(hi * 16 + lo));
  }
  return true;
}

/// "MxNxK" or "N" (NxNxN), every extent positive.
bool ParseShape(const std::string& text, ::ablation::v1::Shape* shape) {
  int64_t v[3] = {0, 0, 0};
  int count = 0;
  size_t begin = 0;
  while (count < 3) {
    const size_t end = text.find('x', begin);
    const std::string part = text.substr(begin, end == std::string::npos ? end : end - begin);
    if (!ParseInt64(part.c_str(), &v[count]) || v[count] <= 0) return false;
    ++count;
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  if (count == 1)
    v[1] = v[2] = v[0];
  else if (count != 3)
    return false;
  shape->set_m(v[0]);
  shape->set_n(v[1]);
  shape->set_k(v[2]);
  return true;
}

}  // namespace

std::string ParseProfileOnce(int argc, char** argv, ProfileOnceTask* task) {
  bool have_shape = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--profile-once") continue;
    if (i + 1 >= argc) return a + " wants a value";
    const std::string v = argv[++i];
    int64_t n = 0;
    if (a == "--device") {
      if (!ParseInt64(v.c_str(), &n) || n < 0 || n > 1 << 20)
        return "--device wants a non-negative integer, got \"" + v + "\"";
      task->device = int(n);
    } else if (a == "--variant") {
      task->variant = v;
    } else if (a == "--dtype") {
      task->dtype = v;
    } else if (a == "--shape") {
      if (!ParseShape(v, &task->shape)) return "--shape wants MxNxK or N, got \"" + v + "\"";
      have_shape = true;
    } else if (a == "--warmup") {
      if (!ParseInt64(v.c_str(), &n) || n < 0 || n > kMaxWarmup)
        return "--warmup wants 0 to " + std::to_string(kMaxWarmup) + ", got \"" + v + "\"";
      task->warmup = int(n);
    } else if (a == "--user-code") {
      task->user_code_file = v;
    } else if (a == "--library-algo") {
      if (!FromHex(v, &task->library_algo) || task->library_algo.size() != k::kLtAlgoBytes)
        return "--library-algo wants " + std::to_string(2 * k::kLtAlgoBytes) +
               " hexadecimal digits (a cuBLASLt algorithm), got \"" + v + "\"";
    } else if (a == "--seed") {
      if (!ParseInt64(v.c_str(), &n)) return "--seed wants an integer, got \"" + v + "\"";
      task->seed = uint64_t(n);
    } else {
      return "unknown argument \"" + a + "\" for --profile-once";
    }
  }
  if (task->variant.empty()) return "--profile-once needs --variant";
  if (!have_shape) return "--profile-once needs --shape";
  return "";
}

std::string RunProfileOnce(Device& d, const k::Registry& registry, const ProfileOnceTask& task) {
  Ready r;
  std::string err = Resolve(registry, task.variant, task.dtype, task.shape, &r);
  if (!err.empty()) return err;
  // A library variant (cuBLAS) launches kernels of the library's choice: the profiler takes the
  // first one between cudaProfilerStart and cudaProfilerStop (ncu --profile-from-start off).
  const void* fn = r.variant->KernelAt(r.problem);
  const char* symbol = fn == nullptr ? "the library's first kernel" : nullptr;
  if (fn != nullptr && (cudaFuncGetName(&symbol, fn) != cudaSuccess || symbol == nullptr))
    symbol = "?";
  // The inputs as a measurement makes them for this seed (resident_inputs.h), for one task.
  Resident res(d);
  ProblemInputs in;
  err = res.inputs.Prepare(
      {.problem = r.problem, .seed = task.seed, .need_nk = r.variant->b_layout == k::BLayout::kNK},
      &in);
  if (!err.empty()) return err;
  if (!task.library_algo.empty() && !k::LaunchesChosenAlgo(*r.variant))
    return "--library-algo is for a cublas_<dtype>_best variant, not " + r.variant->name;
  if (k::LaunchesChosenAlgo(*r.variant)) {
    if (!task.library_algo.empty()) {
      r.library_algo = std::make_shared<const std::string>(task.library_algo);
    } else if (!(err = EnsureChosenAlgo(d, res, nullptr, ArgsFor(d, r, in, in.c), &r, nullptr))
                    .empty()) {
      return err;
    }
  }
  const k::GemmArgs args = ArgsFor(d, r, in, in.c);
  for (int i = 0; i < task.warmup; ++i)
    if (!(err = LaunchChecked(d, r, args)).empty()) return err;
  if (!(err = d.Check(cudaStreamSynchronize(d.stream), "warm-up")).empty()) return err;
  // The launch the profiler selects: the first one after the warm-up launches it skips (a kernel
  // of ours, by name) or the first inside the profiler's range (a library's).
  // Neither call fails without a profiler attached (CUDA 5 on); under one that refused them, ncu
  // reports that it profiled no launch, which says more than their error would.
  (void)cudaProfilerStart();
  if (!(err = LaunchChecked(d, r, args)).empty()) return err;
  if (!(err = d.Check(cudaStreamSynchronize(d.stream), "the profiled launch")).empty()) return err;
  (void)cudaProfilerStop();
  Log("profile-once %s %s %s: %d warm-up launches, then 1 launch of %s", r.variant->name.c_str(),
      task.dtype.c_str(), ShapeText(task.shape).c_str(), task.warmup, symbol);
  return "";
}

int ProfileOnceMain(int argc, char** argv) {
  ProfileOnceTask task;
  std::string err = ParseProfileOnce(argc, argv, &task);
  if (!err.empty()) {
    std::fprintf(stderr, "ablation-worker: %s\n", err.c_str());
    return kExitUsage;
  }
  // Whatever the profiler prints goes to stdout, and the daemon parses it: nothing of ours may.
  std::fflush(stdout);
  k::Registry registry;
  k::RegisterCatalog(registry);
  k::BindLaunchers(registry);
  Device d;
  d.Open(task.device);
  if (!d.present) {
    std::fprintf(stderr, "ablation-worker: %s\n", d.no_device_reason.c_str());
    return kExitFailed;
  }
  if (!task.user_code_file.empty()) {
    // A user variant: its build, as the daemon's tasks carry it.
    std::ifstream in(task.user_code_file, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    google::protobuf::RepeatedPtrField<::ablation::worker::v1::UserCode> codes;
    if (!in || !codes.Add()->ParseFromString(bytes.str())) {
      std::fprintf(stderr, "ablation-worker: --user-code %s: not a readable UserCode\n",
                   task.user_code_file.c_str());
      return kExitUsage;
    }
    UserKernels loaded;
    if (!(err = loaded.Load(codes, registry)).empty()) {
      std::fprintf(stderr, "ablation-worker: profile-once: %s\n", err.c_str());
      return kExitFailed;
    }
    err = RunProfileOnce(d, registry, task);
  } else {
    err = RunProfileOnce(d, registry, task);
  }
  if (!err.empty()) {
    std::fprintf(stderr, "ablation-worker: profile-once: %s\n", err.c_str());
    return kExitFailed;
  }
  return 0;
}

}  // namespace ablation::worker
