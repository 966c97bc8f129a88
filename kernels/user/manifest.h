// A user kernel: CUDA device code the service did not write, and the manifest that says what it
// computes and how to launch it (kernels/user/README.md has the format and an example). This is
// the manifest's model: read from TOML with every key checked, its knob axes expanded into the
// variants they name, its launch geometry and shape conditions evaluated per problem. Host-only
// and free of the service: the daemon reads manifests with it, the worker evaluates the geometry.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/variant_names.h"
#include "kernels/common/problem.h"
#include "kernels/registry.h"
#include "kernels/user/contract.h"
#include "kernels/user/expression.h"

namespace ablation::kernels::user {

/// What one caller's kernel may be: bounded so that a manifest cannot make the daemon plan,
/// compile or store without end.
struct ManifestLimits {
  size_t max_source_bytes = 256 * 1024;
  /// The manifest's own text, and how deep its tables may nest, checked before it is parsed
  /// (common/toml_shape.h: a key nested 50,000 deep overflowed the parser's stack).
  size_t max_manifest_bytes = 64 * 1024;
  int max_manifest_depth = 16;
  int max_knobs = 8;
  int max_values_per_knob = 16;
  int max_knob_sets = 64;  ///< the product of the knobs' value counts
  size_t max_expression_chars = 256;
  int max_conditions = 16;

  /// No bounds worth the name: for reading a manifest already accepted under the limits of its
  /// day (a stored kernel at start, a build a task carries to the worker).
  static ManifestLimits Unbounded() {
    ManifestLimits l;
    l.max_source_bytes = size_t(1) << 30;
    // Never unbounded: a stored manifest is parsed in the daemon too, at every start.
    l.max_manifest_bytes = size_t(1) << 20;
    l.max_manifest_depth = 64;
    l.max_knobs = l.max_values_per_knob = l.max_knob_sets = l.max_conditions = 1 << 20;
    l.max_expression_chars = size_t(1) << 20;
    return l;
  }
};

/// One knob axis: a macro the source reads (-DNAME=value), and the values to build it with.
struct Knob {
  std::string name;        ///< the macro: upper case, digits, '_'
  std::string short_name;  ///< in short variant names: "s" -> mygemm_s3
  std::string label;       ///< what changing it means, for the ladder ("cp.async stages")
  std::vector<int64_t> values;
};

/// A shape condition: the kernel can run a problem only where `when` is non-zero; else `says`.
struct Condition {
  std::unique_ptr<Expression> when;
  std::string says;
};

struct Manifest {
  std::string name;   ///< [a-z][a-z0-9_]*, at most 32: variants are user.<name>.<knobs>
  std::string entry;  ///< the __global__ function, declared extern "C"
  std::string description;
  /// What the source is: "cuda" (CUDA C++, compiled by NVRTC with each knob set's -D flags) or
  /// "ptx" (PTX from any compiler: Triton, CuTe's DSL, TileLang, nvcc -ptx; assembled by the
  /// toolkit's PTX compiler; one build, so no knob may have two values).
  std::string language = "cuda";
  // The GEMM contract, as the built-in families declare theirs: A is M x K row-major, C is M x N
  // row-major; B is K x N (kKN) or N x K (kNK) row-major. Inputs of `dtype`; bf16 and fp16
  // accumulate in fp32 and write their own type, tf32 and fp32 write fp32, int8 writes int32.
  DType dtype = DType::kBF16;
  BLayout b_layout = BLayout::kKN;
  /// [contract] bit_identical: every knob set computes each output with the same operations in
  /// the same order (the knobs only move data), so their outputs must agree bit for bit.
  bool bit_identical = false;
  // The launch: expressions of M, N, K and the knobs. block_y, block_z, grid_y and grid_z default
  // to 1, smem to 0.
  std::unique_ptr<Expression> block, block_y, block_z, grid_x, grid_y, grid_z, smem;
  std::vector<Condition> conditions;
  std::vector<Knob> knobs;  ///< in the order given: the ladder's order
  /// [contract] kind = "general": the kernel's own contract (contract.h), its launch and
  /// conditions expressions of its sizes and knobs; null for a GEMM (the contract above).
  std::shared_ptr<const GeneralContract> general;
};

/// The architecture user kernels are compiled for on a device of compute capability `cc`
/// ("9.0" -> "sm_90a", whose wgmma and TMA the Hopper helpers need; "8.0" -> "sm_80"); "" for
/// a malformed one. The daemon compiles for it, and the worker names it for the disassembler.
std::string CompileArch(const std::string& cc);

/// Whether `arch` names a real GPU architecture as CompileArch writes them ("sm_" and two or
/// three digits, with "a" or "f" after it where one is given): a check may name one.
bool IsCompileArch(const std::string& arch);

/// Reads a manifest. "" on success, else what is wrong, naming the origin, the line where TOML
/// knows it, and the key: "tiled.toml:7: knob[1].values: expected whole numbers".
std::string ParseManifest(const std::string& text, const std::string& origin,
                          const ManifestLimits& limits, Manifest* out);

/// Most bytes the tensors of a kernel of its own contract may take at one problem (canaries and
/// alignment included): the worker holds them and its reference's outputs at once.
inline constexpr int64_t kMaxOwnTensorBytes = int64_t(32) << 30;

/// One knob set: a value for every knob, in the manifest's order.
struct KnobSet {
  std::vector<int64_t> values;
};

/// Every knob set, the first knob varying slowest (at most limits.max_knob_sets: checked by
/// ParseManifest).
std::vector<KnobSet> KnobSets(const Manifest& m);

/// "user.tiled.stages=3.swizzle=1": the canonical name (knob names in lower case).
std::string VariantName(const Manifest& m, const KnobSet& s);
/// "tiled_s3_sw1": the short name, as the built-in families have theirs.
std::string ShortName(const Manifest& m, const KnobSet& s);
/// The knob set a canonical or short name of this kernel names, of any version ("user.tiled@2.
/// stages=3", "tiled@2_s3"); false when it names none.
bool ParseVariantName(const Manifest& m, const std::string& name, KnobSet* out);

/// A version's name (kernel versions: an add under a held name makes the next): "@<n>" after the
/// kernel's name, canonical or short: "user.tiled@2.stages=3", "tiled@2_s3". The newest version
/// also runs under the name without one, and "@latest" names it.
std::string VersionedName(const Manifest& m, const KnobSet& s, int64_t version);
std::string VersionedShortName(const Manifest& m, const KnobSet& s, int64_t version);
/// The name a knob set of `version` runs under now: VersionedName where it is named by its
/// version (an older one), else the plain VariantName (the newest, or no version at all).
std::string RunsAs(const Manifest& m, const KnobSet& s, int64_t version, bool named_by_version);
/// The name without its version tag: common::WithoutVersion (common/variant_names.h).

/// The launch of one variant at one problem.
struct LaunchGeometry {
  int64_t block = 0;  ///< threads per block along x (block_y and block_z: 1 unless given)
  int64_t block_y = 1, block_z = 1;  ///< x * y * z at most 1024
  int64_t grid_x = 0, grid_y = 1, grid_z = 1;
  int64_t smem_bytes = 0;  ///< dynamic shared memory per block
};

/// "" when the variant can run `p` (every condition holds and the geometry evaluates within its
/// bounds), with `geometry` filled; else the sentence of the first condition that fails, or what
/// is wrong with the geometry ("grid = ceil(M / BM) = 0 is outside 1 to 2147483647").
std::string Plan(const Manifest& m, const KnobSet& s, const Problem& p, LaunchGeometry* geometry);

/// Whether knob set `s` of a kernel of its own contract (`general`) runs problem `p`: its sizes,
/// its tensors within kMaxOwnTensorBytes, its reference's launch, its work model, its own launch
/// and conditions. "" or why not, naming the kernel and the sizes.
std::string CanRunOwn(const Manifest& m, const KnobSet& s, const Problem& p);

/// One rung of the kernel's ladder: rung 0 has every knob at its first value; rung i changes
/// knob i-1 to its last value and keeps the earlier rungs' changes, so each rung is one knob.
struct Rung {
  std::string id;     ///< "U0", "U1", ...
  std::string label;  ///< "baseline", "STAGES 2 -> 4 (cp.async stages)"
  KnobSet knobs;
};
std::vector<Rung> Ladder(const Manifest& m);

/// A kernel's versions as a ladder: each version's variants (the names they run under), oldest
/// first.
struct VersionLadder {
  std::string kernel, dtype;
  std::vector<std::pair<int64_t, std::vector<std::string>>> versions;  ///< version, variants
};

/// The registry entries the manifest names: one per knob set, family "user.<name>", the knob
/// values as numeric parameters, can_implement from Plan. Launchers are bound by the worker.
/// With `version` (> 0) a parameter "version" says which; `named_by_version` names them as that
/// version (VersionedName), else by the plain names the newest version runs under.
std::vector<Variant> Variants(std::shared_ptr<const Manifest> m, int64_t version = 0,
                              bool named_by_version = false);

}  // namespace ablation::kernels::user
