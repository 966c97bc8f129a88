// The kernel registry: typed entries, one per variant. Host-only header (no CUDA types), so the
// daemon links the catalog without CUDA; the worker also binds each entry's launcher.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/common/problem.h"

namespace ablation::kernels {

/// Everything a launch needs. A micro-benchmark (family "smem2reg") takes the GEMM whose data path
/// it isolates: for M x N x K it runs that GEMM's grid and issues its fragment loads of K/BK
/// k-tiles per block, reading A and B, and writes a 32-bit checksum per thread to the start of C
/// instead of the product. Pointers are device pointers; stream and cuBLAS handles are opaque here
/// (cudaStream_t, cublasHandle_t, cublasLtHandle_t) so this header stays CUDA-free.
struct GemmArgs {
  Problem problem;
  const void* a = nullptr;  ///< M x K row-major
  const void* b = nullptr;  ///< K x N or N x K (the variant's b_layout)
  void* c = nullptr;        ///< M x N row-major, OutputBytes(dtype) per element
  void* stream = nullptr;
  void* cublas = nullptr;    ///< cublasHandle_t owned by the worker
  void* cublaslt = nullptr;  ///< cublasLtHandle_t owned by the worker
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  /// fp8 only: one device float each, the per-tensor scales of A and B (C = scale_a * scale_b *
  /// A * B^T; kernels/common/problem.h). Null for the other dtypes.
  const float* scale_a = nullptr;
  const float* scale_b = nullptr;
  /// A cuBLASLt algorithm chosen for this problem (kernels/cublas/cublas_lt.h: kLtAlgoBytes of
  /// cublasLtMatmulAlgo_t): what a cublas_<dtype>_best entry launches. Null for the others.
  const void* library_algo = nullptr;
};

/// "" on success, else what failed (a CUDA or cuBLAS error string). A function, not a pointer:
/// a user kernel's launcher holds the module it loaded and the manifest it plans from.
using LaunchFn = std::function<std::string(const GemmArgs& args)>;
/// The __global__ function of this variant for a dtype (for cudaFuncGetAttributes and the
/// occupancy calculator; a user kernel's cudaKernel_t, which those accept), or nullptr for
/// library entries such as cuBLAS.
using KernelFn = std::function<const void*(DType dtype)>;

/// Code a variant brings that is not in any binary of the service: a user kernel's build for this
/// variant (kernels/user/manifest.h). The daemon sends it with every task that names the
/// variant; the worker loads the cubin and plans each launch from the manifest.
struct LoadedCode {
  std::string manifest;  ///< the kernel's manifest (TOML)
  /// The cubin's bytes, read where they are kept when a task needs them ("" where they cannot
  /// be): the daemon keeps its builds in its database, not every cubin in memory.
  std::function<std::string()> cubin = [] { return std::string(); };
  std::string cubin_sha256;
  int64_t cubin_bytes = 0;
  int64_t build_id = 0;  ///< user_kernel_builds.id: what measurements point at
  std::string entry;     ///< the extern "C" __global__ function
  int registers = -1;    ///< ptxas' report of the build (-1: it did not say)
  int64_t static_smem_bytes = 0;
};

/// A kernel of its own contract against its reference (Variant::verify_own).
struct OwnCheck {
  bool passed = false;
  int64_t elements = 0;    ///< output elements compared
  int64_t mismatches = 0;  ///< outside the tolerance (NaN and unwritten included)
  double max_abs_error = 0, max_rel_error = 0;
  /// The first element outside the tolerance, or the first canary changed ("a write outside its
  /// buffers: 12 bytes after y changed"), in the user's words; "" when it passed.
  std::string detail;
};

/// Threads per block and dynamic shared memory of one launch.
struct LaunchSize {
  int64_t threads = 0;
  int64_t dynamic_smem_bytes = 0;
};

struct Tile {
  int m = 0;
  int n = 0;
  int k = 0;
};

/// What one launch does at a problem, the numerators of the rates a measurement reports (each
/// divided by the median time). A quantity a variant does not model is 0 and is not reported.
struct WorkModel {
  double flops = 0;           ///< arithmetic operations, a multiply-add counting two
  double bytes = 0;           ///< bytes moved from shared memory into registers
  double fragment_loads = 0;  ///< per-warp load instructions issued (ldmatrix or ld.shared)
  /// Bytes moved to and from device memory, as a user kernel's work model counts them (its
  /// tensors read and written once): the numerator of its GB/s and its place on the roofline.
  double memory_bytes = 0;
  /// Its operations are held against the CUDA cores' fp32 rate (a softmax, a norm), not the
  /// tensor cores' rate of the problem's dtype.
  bool fp32_peak = false;
};

/// One parameter's value: a number (stages, tile sizes, switches as 0/1) or a word (an API, a
/// mode). Numbers stay numbers, so that a reader asks for one (NumberParam) instead of parsing
/// text that a catalog wrote from a number.
class ParamValue {
 public:
  ParamValue(int64_t number) : number_(number), is_number_(true) {}
  ParamValue(int number) : ParamValue(int64_t(number)) {}
  ParamValue(bool flag) : ParamValue(int64_t(flag ? 1 : 0)) {}
  ParamValue(std::string text) : text_(std::move(text)) {}
  ParamValue(const char* text) : text_(text) {}

  bool is_number() const { return is_number_; }
  /// The number; unset for a word.
  std::optional<int64_t> number() const {
    return is_number_ ? std::optional<int64_t>(number_) : std::nullopt;
  }
  /// As shown: a number's digits, or the word.
  std::string Text() const { return is_number_ ? std::to_string(number_) : text_; }

 private:
  int64_t number_ = 0;
  bool is_number_ = false;
  std::string text_;
};

/// What a device holds of a persistent grid at once: CTAs of one per SM (its SM count) and
/// clusters of two CTAs (the occupancy calculator's count: two free SMs of one GPC). An H200:
/// 132 and 66. Zeros: unknown (no device), where a plan assumes one cluster.
struct Residency {
  int sms = 0;
  int pair_clusters = 0;
};

struct Variant {
  std::string name;  ///< canonical name, the key everywhere
  /// Another name a run or a listing may give it: a user variant's short name
  /// ("tiled_s3_sw1", from its knobs' short names); "" for the built-in families, whose short
  /// names are parsed (common/variant_names.h).
  std::string short_name;
  std::string family;  ///< "ablation", "cublas", "pipe", "simt", "tf32", "smem2reg", ...
  std::string description;
  std::vector<std::pair<std::string, ParamValue>> params;  ///< in display order
  std::vector<DType> dtypes;
  Tile tile;
  int threads = 0;         ///< per block; 0 for library entries
  int64_t smem_bytes = 0;  ///< dynamic shared memory per block
  BLayout b_layout = BLayout::kKN;
  /// Variants of one family that only move data differently promise bit-identical outputs.
  bool bit_exact_family = false;
  /// "" if the variant can run this problem, else the reason it cannot (names the field).
  std::function<std::string(const Problem&)> can_implement;
  /// Device memory a launch allocates at a problem beyond the worker's buffers, per buffer the
  /// process keeps and grows (the sm90 family's padded copies of A, B and C, for operands whose
  /// rows are not whole 16-byte chunks); unset: none.
  std::function<std::vector<int64_t>(const Problem&)> scratch_bytes;
  /// The work of one launch at a problem. Unset means a GEMM: flops = 2*M*N*K, nothing else.
  std::function<WorkModel(const Problem&)> work;
  LaunchFn launch = nullptr;  ///< bound in the worker only (BindLaunchers)
  KernelFn kernel = nullptr;  ///< bound in the worker only
  /// The kernel a launch at a problem runs, where that depends on more than the dtype (the sm90
  /// family: its guarded build off the tile, the build without clusters where the grid is fitted
  /// to its rounds); bound in the worker only. Unset: kernel(p.dtype). Read through KernelAt.
  std::function<const void*(const Problem&)> kernel_at;
  /// The build that runs a problem on a device holding `r`, in words (the sm90 family's plan,
  /// sm90_plan.h: own, guarded or padded, its grid); unset: the variant has one build.
  std::function<std::string(const Problem&, const Residency&)> build;
  /// The entry of the registry whose launch runs a problem, for a variant that runs other
  /// entries' (a per-bucket rung: its table's pick, or its default); unset: its own launch.
  /// Stored with each row it measures (Measurement.dispatched_to).
  std::function<std::string(const Problem&)> dispatched_to;
  /// Set for a user kernel's variant: the build it runs. Null for the built-in families.
  std::shared_ptr<const LoadedCode> code;
  /// A kernel of its own contract (kernels/user/contract.h): it launches on tensors of its own
  /// (the worker makes none of the GEMM's A, B, C for it), a problem's M, N, K are its named
  /// sizes in the contract's order, and it is checked against its own reference (verify_own).
  bool own_contract = false;
  /// Bound in the worker for a kernel of its own contract: runs it and its reference on the same
  /// fresh inputs (seeded by `seed`), the outputs poisoned first and canaries around every
  /// buffer, and compares; "" with *verdict filled, or why it could not be checked.
  std::function<std::string(const Problem& p, void* stream, uint64_t seed, OwnCheck* verdict)>
      verify_own;
  /// Bound in the worker for a kernel of its own contract: fresh values into the inputs its
  /// timed launches read (from `seed`: a batch's), enqueued on `stream` outside the timed
  /// intervals, so that no launch can pass off a result kept from an earlier one.
  std::function<std::string(uint64_t seed, void* stream)> refresh_own;
  /// Bound in the worker for a kernel of its own contract: behind a batch of timed launches on
  /// `stream` (before the next batch's fresh values), the outputs the last launch left are kept
  /// and the reference runs on the same inputs; judge_own_check waits for that and compares,
  /// the canaries included ("" with *verdict, or why it could not be checked).
  std::function<std::string(void* stream)> enqueue_own_check;
  std::function<std::string(OwnCheck* verdict)> judge_own_check;
  /// A user variant's launch at a problem it can run (the manifest's block and dynamic shared
  /// memory there); unset for the built-in families, whose threads and smem_bytes are fixed.
  std::function<LaunchSize(const Problem&)> launch_at;

  bool Supports(DType d) const;
  /// The value of parameter `key` as shown, or "" when the variant has none.
  std::string Param(std::string_view key) const;
  /// The value of a numeric parameter; unset when the variant has none or it is a word.
  std::optional<int64_t> NumberParam(std::string_view key) const;
  /// `work` at `p`, or the GEMM default when unset: 2MNK flops, A and B read and C written once.
  WorkModel Work(const Problem& p) const;
  /// The kernel a launch at `p` runs (kernel_at, else kernel(p.dtype)); nullptr for library
  /// entries and where nothing is bound.
  const void* KernelAt(const Problem& p) const;
};

class Registry {
 public:
  /// Adds an entry; a duplicate name is a programming error (throws std::logic_error).
  void Add(Variant v);
  const Variant* Find(std::string_view canonical_name) const;
  Variant* FindMutable(std::string_view canonical_name);
  const std::vector<Variant>& All() const { return variants_; }

 private:
  std::vector<Variant> variants_;
  std::map<std::string, size_t, std::less<>> index_;
};

/// Registers every family's entries (metadata and can_implement). Host-only: the daemon calls it.
void RegisterCatalog(Registry& registry);

/// Fills in launch/kernel of every entry. Defined in the CUDA library; the worker calls it after
/// RegisterCatalog. Entries with no launcher keep launch == nullptr and are refused at run time.
void BindLaunchers(Registry& registry);

}  // namespace ablation::kernels
