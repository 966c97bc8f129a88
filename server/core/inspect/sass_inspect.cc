// The SASS inspection: the disassembler found, the kernel asked about chosen (a built-in variant
// or a user build written out), cuobjdump run on it. The verdicts and checks of its answer are in
// sass_checks.cc, the listing parsed in sass.cc and its main loop judged in sass_verdict.cc.
#include "server/core/inspect/sass_inspect.h"

#include <cstdint>
#include <cstdlib>
#include <fstream>

#include <spdlog/spdlog.h>

#include "server/core/base/subprocess.h"
#include "server/core/inspect/cuda_tool.h"
#include "server/core/plan/variant_names.h"

namespace ablation::core {

std::string FindCuobjdump(const std::string& configured, std::string* looked) {
  return FindCudaTool(
      {.name = "cuobjdump", .env_var = "ABLATION_CUOBJDUMP", .configured = configured}, looked);
}

std::vector<std::string> SassFamily(const kernels::Variant& v, const kernels::Registry& registry) {
  std::vector<std::string> names;
  const std::string& n = v.name;
  if (n.rfind("pipe_", 0) == 0) {
    size_t us = n.find('_', 5);
    if (us != std::string::npos) {
      const std::string rest = n.substr(us);  // "_f16_64x64x16"
      for (const char* p : {"baseline", "ldg", "cpasync"})
        names.push_back("pipe_" + std::string(p) + rest);
    }
  } else if (n.rfind("abl_", 0) == 0) {
    size_t s = n.find("_s");
    while (s != std::string::npos &&
           !(s + 2 < n.size() && std::isdigit(static_cast<unsigned char>(n[s + 2]))))
      s = n.find("_s", s + 1);
    if (s != std::string::npos)
      for (char st = '1'; st <= '4'; ++st) {
        std::string peer = n;
        peer[s + 2] = st;
        names.push_back(peer);
      }
  }
  std::vector<std::string> out;
  for (const auto& p : names)
    if (p != n && registry.Find(p) != nullptr) out.push_back(p);
  return out;
}

std::string RunTool(const std::vector<std::string>& argv, std::chrono::seconds timeout,
                    std::string* out) {
  ProcessResult r = RunProcess(argv, timeout);
  *out = std::move(r.out);
  std::string err = std::move(r.err);
  if (err.size() > 2000) err = "..." + err.substr(err.size() - 2000);
  while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
  if (r.timed_out) return argv[0] + " " + r.error;
  if (!r.started) return r.error;
  if (r.exit_code != 0)
    return argv[0] + " failed (" + r.Ending() + ")" + (err.empty() ? "" : ": " + err);
  return "";
}

// ------------------------------------------------------------------------------ SassInspector

struct SassInspector::State {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> jobs;
  bool stopping = false;

  /// Queues work for the inspector's thread; false once it stopped.
  bool Post(std::function<void()> job) {
    {
      std::lock_guard lock(mu);
      if (stopping) return false;
      jobs.push_back(std::move(job));
    }
    cv.notify_one();
    return true;
  }
};

SassInspector::SassInspector(SassInspectorOptions options, RunManager* runs,
                             const kernels::Registry* registry)
    : options_(std::move(options)),
      runs_(runs),
      registry_(registry),
      state_(std::make_shared<State>()) {
  thread_ = std::thread([state = state_] {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock lock(state->mu);
        state->cv.wait(lock, [&] { return state->stopping || !state->jobs.empty(); });
        if (state->jobs.empty()) return;  // stopping, and nothing left
        job = std::move(state->jobs.front());
        state->jobs.pop_front();
      }
      job();
    }
  });
}

SassInspector::~SassInspector() {
  {
    std::lock_guard lock(state_->mu);
    state_->stopping = true;
  }
  state_->cv.notify_all();
  if (thread_.joinable()) thread_.join();
}

namespace {

// The one variant a request names, and the dtype of its kernel to disassemble.
Status ChooseKernel(const v1::SassRequest& request, const kernels::Registry& registry,
                    const kernels::Variant** variant, std::string* dtype) {
  std::vector<const kernels::Variant*> found;
  Status st = Resolve(registry, request.variant(), "variant", &found);
  if (!st.ok()) return st;
  if (found.size() != 1)
    return InvalidArgument("variant: '" + request.variant() + "' names " +
                           std::to_string(found.size()) + " variants; give one");
  const kernels::Variant& v = *found.front();
  *variant = &v;
  *dtype = request.dtype();
  if (dtype->empty()) {
    if (v.dtypes.empty()) return InvalidArgument("dtype: " + v.name + " lists no dtype");
    *dtype = std::string(kernels::ToString(v.dtypes.front()));
  } else {
    auto d = kernels::ParseDType(*dtype);
    if (!d)
      return InvalidArgument("dtype: unknown dtype '" + *dtype +
                             "'; known: bf16, fp16, fp32, tf32, int8");
    if (!v.Supports(*d))
      return InvalidArgument("dtype: " + v.name + " has no " + *dtype + " kernel");
  }
  if (v.family == "cublas")
    return FailedPrecondition("variant: " + v.name +
                              " runs cuBLAS; there is no kernel of ours to disassemble");
  return Status::Ok();
}

// A user variant's code is its build's cubin, from the database: written to a file named by
// its SHA-256 (the same build is the same file) and disassembled there. "" for a built-in one.
Status WriteUserCubin(const kernels::Variant& v, std::string* path) {
  if (!v.code) return Status::Ok();
  const char* tmp = std::getenv("TMPDIR");
  const std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/ablationd-user-cubins";
  ::mkdir(dir.c_str(), 0700);
  *path = dir + "/" + v.code->cubin_sha256 + ".cubin";
  // Read from the database when asked for (the catalog does not hold builds in memory).
  const std::string cubin = v.code->cubin();
  std::ofstream out(*path, std::ios::binary | std::ios::trunc);
  out.write(cubin.data(), std::streamsize(cubin.size()));
  if (!out || cubin.empty())
    return FailedPrecondition("cannot write the cubin of " + v.name + " to " + *path);
  return Status::Ok();
}

// The disassembly of the worker's kernels, on the inspector's thread: the worker named each
// kernel's symbol and binary, cuobjdump lists them, the listing becomes the response.
struct Disassembly {
  std::vector<RunManager::DescribeItem> items;  // the first is the one asked for
  std::string tool;
  std::chrono::seconds timeout;
  SassInspector::Done done;
  std::string expect_tensor;  // the first item's tensor-core instruction (HMMA, HGMMA, QGMMA)
  bool expect_tma = false;
  std::string cubin_path;  // a user variant's cubin, else "" (the worker's own binary)

  void operator()(const std::vector<worker::v1::DescribeResult>& results) const {
    std::vector<SassTarget> targets;
    std::string binary, arch, symbols;
    for (size_t i = 0; i < items.size(); ++i) {
      SassTarget t;
      t.variant = items[i].variant;
      t.dtype = items[i].dtype;
      if (i == 0) {
        t.expect_tensor = expect_tensor;
        t.expect_tma = expect_tma;
      }
      const auto* r = i < results.size() ? &results[i] : nullptr;
      if (!r) {
        t.error = "no answer from the worker";
      } else if (!r->ok()) {
        t.error = r->error();
      } else if (r->library()) {
        t.error =
            "variant " + t.variant + " runs a library; there is no kernel of ours to disassemble";
      } else {
        t.symbol = r->kernel_symbol();
        t.build = r->build();
        if (binary.empty()) {
          binary = cubin_path.empty() ? r->binary() : cubin_path;
          arch = r->arch();
        }
        symbols += (symbols.empty() ? "" : ",") + t.symbol;
      }
      targets.push_back(std::move(t));
    }
    if (!targets[0].error.empty()) {
      done(FailedPrecondition("the worker cannot name the kernel of " + targets[0].variant + ": " +
                              targets[0].error),
           {});
      return;
    }
    std::string listing;
    if (std::string err =
            RunTool({tool, "-sass", "-arch", arch, "-fun", symbols, binary}, timeout, &listing);
        !err.empty()) {
      done(FailedPrecondition("disassembling " + binary + ": " + err), {});
      return;
    }
    v1::SassResponse response = BuildSassResponse(listing, targets);
    response.set_tool(tool);
    response.set_binary(binary);
    if (response.arch().empty()) response.set_arch(arch);
    spdlog::info("sass {} {}: {}", targets[0].variant, targets[0].dtype,
                 response.kernel().summary());
    done(Status::Ok(), response);
  }
};

}  // namespace

Status SassInspector::Inspect(const v1::SassRequest& request, Done done) {
  if (request.variant().empty()) return InvalidArgument("variant: required (a variant name)");
  if (request.device() < 0) return InvalidArgument("device: must be 0 or more");
  // The catalog of the moment: user variants too (their cubins are what is disassembled).
  const std::shared_ptr<const kernels::Registry> catalog = runs_->Catalog();
  const kernels::Registry& registry = catalog ? *catalog : *registry_;
  const kernels::Variant* found = nullptr;
  std::string dtype;
  if (Status st = ChooseKernel(request, registry, &found, &dtype); !st.ok()) return st;
  const kernels::Variant& v = *found;
  std::string looked;
  Disassembly job;
  job.tool = FindCuobjdump(options_.tool, &looked);
  if (job.tool.empty())
    return FailedPrecondition("no cuobjdump on the daemon's host (looked in " + looked +
                              "); install the CUDA toolkit or set ABLATION_CUOBJDUMP");
  std::optional<v1::Shape> shape;
  if (request.has_shape()) {
    const v1::Shape& s = request.shape();
    if (s.m() <= 0 || s.n() <= 0 || s.k() <= 0)
      return InvalidArgument("shape: m, n and k must be positive");
    shape = s;
  }
  job.items = {{v.name, dtype, shape}};
  for (const auto& peer : SassFamily(v, registry)) {
    const kernels::Variant* p = registry.Find(peer);
    auto d = kernels::ParseDType(dtype);
    if (p && d && p->Supports(*d)) job.items.push_back({peer, dtype, shape});
  }
  if (Status st = WriteUserCubin(v, &job.cubin_path); !st.ok()) return st;
  job.timeout = options_.timeout;
  job.done = done;
  const std::string mainloop = v.Param("mainloop");
  // wgmma is HGMMA for 16-bit operands and QGMMA for fp8 (e4m3) ones.
  const bool wgmma = mainloop.rfind("wgmma", 0) == 0;
  job.expect_tensor = mainloop.empty() ? ""
                      : wgmma          ? (v.Supports(kernels::DType::kFP8) ? "QGMMA" : "HGMMA")
                                       : "HMMA";
  job.expect_tma = mainloop.find("tma") != std::string_view::npos;
  std::weak_ptr<State> weak = state_;
  return runs_->Describe(
      request.device(), job.items,
      [weak, job](const Status& st, const std::vector<worker::v1::DescribeResult>& results) {
        if (!st.ok()) {
          job.done(st, {});
          return;
        }
        // On the GPU's thread: hand the disassembly to the inspector's own thread.
        auto state = weak.lock();
        if (!state || !state->Post([job, results] { job(results); }))
          job.done(Status(Code::kUnavailable, "the daemon is shutting down"), {});
      });
}

}  // namespace ablation::core
