#include "server/core/inspect/sass_inspect.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>

#include <spdlog/spdlog.h>

#include "server/core/base/subprocess.h"
#include "server/core/plan/variant_names.h"

namespace ablation::core {

namespace {

bool Executable(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string Hex(int64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%04llx", static_cast<long long>(v));
  return buf;
}

void FillKernel(const SassVerdict& v, v1::SassKernel* k) {
  k->set_loop_found(v.loop_found);
  k->set_loop_start(v.loop_start);
  k->set_loop_end(v.loop_end);
  k->set_loop_instructions(v.loop_instructions);
  k->set_compute_opcode(v.compute_opcode);
  k->set_compute_per_iteration(v.compute_per_iteration);
  k->set_compute_in_inner_loops(v.compute_in_inner_loops);
  k->set_load_opcode(v.load_opcode);
  k->set_loads(v.loads);
  k->set_overlapping_loads(v.overlapping_loads);
  k->set_overlap(v.overlap);
  k->set_barrier_after_compute(v.barrier_after_compute);
  k->set_local_loads(v.local_loads);
  k->set_local_stores(v.local_stores);
  k->set_verdict(!v.loop_found ? "no main loop" : v.overlap ? "overlap" : "no overlap");
  k->set_summary(DescribeVerdict(v));
}

void AddCheck(v1::SassKernel* k, const std::string& name, bool passed, const std::string& detail) {
  auto* c = k->add_checks();
  c->set_name(name);
  c->set_passed(passed);
  c->set_detail(detail);
}

/// Instructions of `f` whose mnemonic is `mnemonic` and whose opcode contains `part`, between two
/// offsets (inclusive; the whole function by default).
int CountInstructions(const SassFunction& f, std::string_view mnemonic, std::string_view part = "",
                      int64_t first = INT64_MIN, int64_t last = INT64_MAX) {
  int n = 0;
  for (const auto& i : f.instructions)
    n += i.offset >= first && i.offset <= last && i.mnemonic == mnemonic &&
         i.opcode.find(part) != std::string::npos;
  return n;
}

}  // namespace

std::string FindCuobjdump(const std::string& configured, std::string* looked) {
  std::vector<std::string> candidates;
  std::string chosen = configured.empty() ? Env("ABLATION_CUOBJDUMP") : configured;
  if (!chosen.empty()) {
    // Configured: that one or none (a wrong path must not silently fall back to another tool).
    if (chosen.find('/') == std::string::npos) {
      std::string path = Env("PATH");
      for (size_t b = 0; b <= path.size();) {
        size_t e = path.find(':', b);
        if (e == std::string::npos) e = path.size();
        if (e > b) candidates.push_back(path.substr(b, e - b) + "/" + chosen);
        b = e + 1;
      }
    } else {
      candidates.push_back(chosen);
    }
  } else {
    std::string path = Env("PATH");
    for (size_t b = 0; b <= path.size();) {
      size_t e = path.find(':', b);
      if (e == std::string::npos) e = path.size();
      if (e > b) candidates.push_back(path.substr(b, e - b) + "/cuobjdump");
      b = e + 1;
    }
    if (!Env("CUDA_HOME").empty()) candidates.push_back(Env("CUDA_HOME") + "/bin/cuobjdump");
    candidates.push_back("/usr/local/cuda/bin/cuobjdump");
  }
  for (const auto& c : candidates)
    if (Executable(c)) return c;
  if (looked) {
    *looked = chosen.empty() ? "PATH, $CUDA_HOME/bin, /usr/local/cuda/bin"
                             : "ABLATION_CUOBJDUMP=" + chosen;
  }
  return "";
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

namespace {

// The checks of the main loop of the kernel asked about: its loads overlap its compute, and a
// barrier (or an mbarrier arrive) keeps a stage from being refilled while it is read.
void AddLoopChecks(const SassVerdict& v, const SassFunction& function, const SassTarget& target,
                   v1::SassKernel* k) {
  const int tma_loads = target.expect_tma ? CountInstructions(function, "UTMALDG") : 0;
  if (v.overlap) {
    AddCheck(k, "overlap", true,
             std::to_string(v.overlapping_loads) + " of " + std::to_string(v.loads) + " " +
                 v.load_opcode + " reach " + v.compute_opcode + " with no BAR.SYNC between (" +
                 Hex(v.first_overlap_load) + " -> " + Hex(v.overlap_compute) + ")");
  } else if (v.loads == 0 && tma_loads > 0) {
    AddCheck(k, "overlap", true,
             "no load in the compute loop: the TMA loads (UTMALDG) are issued by a producer in "
             "its own loop and complete on mbarriers while the consumers compute");
  } else if (v.loads == 0) {
    AddCheck(k, "overlap", false, "no global load in the main loop");
  } else {
    AddCheck(k, "overlap", false,
             "every " + v.load_opcode + " is separated from " + v.compute_opcode +
                 " by a BAR.SYNC (" + Hex(v.blocking_barrier) + "): load, sync, compute");
  }
  // An mbarrier pipeline (the sm90 family's TMA rungs) releases a stage with an arrive
  // (SYNCS.ARRIVE) instead of a block barrier.
  const int arrives = target.expect_tma && !v.barrier_after_compute
                          ? CountInstructions(function, "SYNCS", "ARRIVE", v.loop_start, v.loop_end)
                          : 0;
  if (arrives > 0) {
    AddCheck(k, "barrier_after_compute", true,
             std::to_string(arrives) +
                 " mbarrier arrives (SYNCS.ARRIVE) release the stages in "
                 "the main loop; no block barrier needed");
  } else if (!v.barrier_after_compute && v.barrier_before_refill) {
    AddCheck(k, "barrier_after_compute", true,
             "BAR.SYNC at " + Hex(v.refill_barrier) +
                 " between the last shared-memory reads and every refill; the " + v.compute_opcode +
                 " after it compute from fragments already in registers");
  } else {
    AddCheck(k, "barrier_after_compute", v.barrier_after_compute,
             v.barrier_after_compute
                 ? "BAR.SYNC at " + Hex(v.barrier_after) + " after the last " + v.compute_opcode
                 : "no BAR.SYNC between the compute and the next iteration's");
  }
}

// The checks of the kernel's code: its compute count beside its family's, the tensor instruction
// and loads its family names, no spills; and the annotated excerpt of its main loop.
void AddCodeChecks(const SassVerdict& v, const SassFunction& function,
                   const std::vector<SassTarget>& targets, const std::vector<SassVerdict>& verdicts,
                   const std::vector<bool>& judged, v1::SassKernel* k) {
  const int tma_loads = targets[0].expect_tma ? CountInstructions(function, "UTMALDG") : 0;
  std::string counts =
      std::to_string(v.compute_per_iteration) + " " + v.compute_opcode + " per iteration";
  if (v.compute_in_inner_loops > 0)
    counts += " (" + std::to_string(v.compute_in_inner_loops) + " in an inner loop)";
  bool same = true;
  int compared = 0;
  std::string others;
  for (size_t i = 1; i < targets.size(); ++i) {
    if (!judged[i] || !verdicts[i].loop_found) continue;
    ++compared;
    others += (others.empty() ? "" : ", ") + targets[i].variant + " " +
              std::to_string(verdicts[i].compute_per_iteration);
    same &= verdicts[i].compute_per_iteration == v.compute_per_iteration &&
            verdicts[i].compute_opcode == v.compute_opcode;
  }
  if (compared == 0)
    AddCheck(k, "compute_count", true, counts + "; no family variant to compare with");
  else
    AddCheck(k, "compute_count", same, counts + (same ? ", as in " : ", unlike ") + others);
  const int local = v.local_loads + v.local_stores;
  // A family that names its tensor instruction (the sm90 family: "wgmma" -> HGMMA, "mma.sync"
  // -> HMMA) and its loads ("tma" -> UTMALDG) is held to them.
  if (!targets[0].expect_tensor.empty()) {
    const bool ok = v.compute_opcode == targets[0].expect_tensor;
    AddCheck(k, "tensor_instruction", ok,
             "main loop computes with " + v.compute_opcode + (ok ? ", as " : ", not ") +
                 targets[0].expect_tensor + " as the variant's mainloop says");
  }
  if (targets[0].expect_tma) {
    AddCheck(k, "tma_loads", tma_loads > 0,
             tma_loads > 0 ? std::to_string(tma_loads) + " UTMALDG in the kernel"
                           : "no UTMALDG: the variant says TMA loads");
  }
  AddCheck(k, "spills", local == 0,
           local == 0 ? "no LDL/STL"
                      : std::to_string(v.local_loads) + " LDL, " + std::to_string(v.local_stores) +
                            " STL (" + std::to_string(v.local_in_loop) + " in the main loop)");
  for (const auto& line : v.excerpt) {
    auto* l = k->add_excerpt();
    l->set_offset(line.offset);
    l->set_marker(line.marker);
    l->set_text(line.text);
  }
}

}  // namespace

v1::SassResponse BuildSassResponse(const std::string& listing,
                                   const std::vector<SassTarget>& targets) {
  v1::SassResponse response;
  std::map<std::string, const SassFunction*> by_name;
  std::vector<SassFunction> functions = ParseSass(listing);
  for (const auto& f : functions) by_name[f.name] = &f;
  if (!functions.empty()) response.set_arch(functions.front().arch);

  std::vector<SassVerdict> verdicts(targets.size());
  std::vector<bool> judged(targets.size(), false);
  for (size_t i = 0; i < targets.size(); ++i) {
    const auto& t = targets[i];
    v1::SassKernel* k = i == 0 ? response.mutable_kernel() : response.add_family();
    k->set_variant(t.variant);
    k->set_dtype(t.dtype);
    k->set_symbol(t.symbol);
    k->set_build(t.build);
    if (!t.error.empty()) {
      k->set_error(t.error);
      k->set_verdict("error");
      continue;
    }
    auto it = by_name.find(t.symbol);
    if (it == by_name.end()) {
      k->set_error("the disassembler printed no SASS for " + t.symbol);
      k->set_verdict("error");
      continue;
    }
    verdicts[i] = InspectFunction(*it->second);
    judged[i] = true;
    FillKernel(verdicts[i], k);
  }

  // The checks of the kernel asked about.
  v1::SassKernel* k = response.mutable_kernel();
  if (!judged[0] || !verdicts[0].loop_found) return response;
  const SassVerdict& v = verdicts[0];
  const SassFunction& function = *by_name[targets[0].symbol];
  AddLoopChecks(v, function, targets[0], k);
  AddCodeChecks(v, function, targets, verdicts, judged, k);
  return response;
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
