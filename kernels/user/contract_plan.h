// The host side of running a kernel of its own contract (contract.h) at one problem, free of CUDA
// so that every rule is tested without a GPU: the problem's named sizes ("rows=8192,cols=4096"),
// each tensor's bytes with the canary bytes around it, the entry's argument block as
// cuLaunchKernel takes it, the reference's launch, the check of an output against the
// reference's within the stated tolerance, and the roofline figures of a timed launch.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kernels/user/contract.h"
#include "kernels/user/manifest.h"

namespace ablation::kernels::user {

/// A problem of named sizes.
using Sizes = std::map<std::string, int64_t>;

/// "rows=8192,cols=4096" into `out`, every size of `c` given once (or taken from its
/// default_sizes), each a whole number from 1 to 2^40. "" or why not, naming the size.
std::string ParseSizes(const std::string& text, const GeneralContract& c, Sizes* out);
/// "rows=8192,cols=4096", in the contract's order.
std::string FormatSizes(const GeneralContract& c, const Sizes& sizes);

/// The problem a run of these sizes is: its sizes in the contract's order as M, N and K (a
/// contract has at most three, kMaxSizes; the rest are 1), so that rows, history and compare keep
/// them in their M, N, K columns. The dtype is the contract's.
Problem ProblemOfSizes(const GeneralContract& c, DType dtype, const Sizes& sizes);
/// The sizes a problem holds, or why it is not one of this contract's (an M, N or K past its
/// sizes that is not 1, a size below 1).
std::string SizesOfProblem(const GeneralContract& c, const Problem& p, Sizes* out);

/// The work model at `sizes`: operations and bytes moved. "" or why not (naming the key).
std::string WorkAt(const GeneralContract& c, const Sizes& sizes, double* ops, double* bytes);

/// Bytes of canary before and after every buffer: a kernel that writes outside its outputs (or
/// into an input) changes them.
inline constexpr int64_t kCanaryBytes = 256;
/// The canary's byte at offset i of a guard (a pattern no arithmetic result repeats by chance).
uint8_t CanaryByte(int64_t i);

struct TensorBuffer {
  std::string name;
  int64_t elements = 0, bytes = 0;  ///< the tensor's own
  int64_t offset = 0;               ///< of its first byte in the arena (after its front canary)
};

/// Where every tensor lies in one device arena: each one 256-byte aligned, between canaries.
struct BufferPlan {
  std::vector<TensorBuffer> tensors;  ///< in the contract's order
  int64_t arena_bytes = 0;
};

/// The buffers at `sizes`. "" or why not (a dimension that is not a whole number >= 1, or more
/// than `max_bytes` in all).
std::string PlanBuffers(const GeneralContract& c, const Sizes& sizes, int64_t max_bytes,
                        BufferPlan* out);

/// The entry's arguments as one block: each parameter at its natural alignment (pointers and
/// int64 8 bytes, int32 and fp32 4), `offsets[i]` where parameter i lies; `device_base` is the
/// arena's address, so a tensor's pointer is device_base + its offset.
struct ArgumentBlock {
  std::vector<uint8_t> bytes;
  std::vector<size_t> offsets;  ///< per parameter: &bytes[offsets[i]] is cuLaunchKernel's args[i]
};
ArgumentBlock PackArguments(const GeneralContract& c, const Sizes& sizes, const BufferPlan& plan,
                            uint64_t device_base);

/// The reference in a message: its entry's name, or "the built-in row_softmax".
std::string ReferenceName(const GeneralContract& c);

/// The bytes of each of the entry's parameters as the contract passes them (PackArguments).
std::vector<size_t> ParameterBytes(const GeneralContract& c);
/// The entry's parameters as its code declares them (`bytes`: each one's size, from
/// cudaFuncGetParamInfo or the PTX's .entry) against the contract's: "" when they agree, else
/// which differs ("the entry row_softmax takes 6 parameters; contract.params names 4").
std::string CheckEntryParameters(const GeneralContract& c, const std::string& entry,
                                 const std::vector<size_t>& bytes);

/// The GEMM contract's parameters' bytes: const A*, const B*, C*, int M, int N, int K.
inline const std::vector<size_t> kGemmParameterBytes = {8, 8, 8, 4, 4, 4};
/// `entry` of `m` (its entry, or its own contract's reference entry) as its code declares its
/// parameters against what the manifest passes: its own contract's (above), or the GEMM
/// contract's. "" when they agree, else which differs. The daemon asks it of a PTX's `.entry`
/// and a cubin's records before adding a kernel, the worker of the loaded kernel before launching.
std::string CheckEntryParameters(const Manifest& m, const std::string& entry,
                                 const std::vector<size_t>& bytes);

/// The bytes of each parameter of `.entry NAME (...)` in PTX text (.u64/.b64/.s64/.f64 8,
/// 32-bit 4, 16-bit 2, `.b8 name[N]` N), for the check above before a PTX source is assembled.
/// "" or why not (no such entry).
std::string PtxEntryParameterBytes(const std::string& ptx, const std::string& entry,
                                   std::vector<size_t>* out);

/// A built-in reference at `sizes`: its tensors (indices into the contract's) and the rows and
/// columns it reads (the input's last dimension a row, the others counted as rows).
struct BuiltinPlan {
  int input = -1, output = -1, weight = -1;
  int64_t rows = 0, cols = 0;
};
/// "" or why its tensors do not fit it at `sizes` (an output not of the input's shape, a weight
/// not of its columns, a row sum not of its rows).
std::string PlanBuiltinReference(const GeneralContract& c, const Sizes& sizes, BuiltinPlan* out);

/// A launch of the reference entry at `sizes` (a built-in reference: its tensors checked, no
/// launch of the manifest's). "" or why not.
std::string PlanReference(const GeneralContract& c, const Sizes& sizes, LaunchGeometry* out);

/// The first element of `out` not within the tolerance of `ref` (elements of `dtype`, as the
/// device wrote them), as "y[3][17] = 0.25, the reference 0.5 (tolerance 0.006)"; "" when every
/// element is. NaN matches nothing (a poisoned output never written reads NaN); bit_identical
/// compares the bytes.
/// With `stats`, every element is compared and counted (the first outside is still the text).
struct OutputStats {
  int64_t elements = 0, mismatches = 0;
  double max_abs_error = 0, max_rel_error = 0;  ///< max_abs infinite where a NaN was met
};
std::string CompareOutput(const TensorSpec& spec, const Sizes& sizes, DType dtype,
                          const std::vector<uint8_t>& out, const std::vector<uint8_t>& ref,
                          const Tolerance& tolerance, OutputStats* stats = nullptr);

/// The bytes of an arena a launch must not write (inputs, canaries, the gaps between buffers:
/// everything but its outputs and inouts) that differ between `before` and `after`, the arena's
/// bytes around the launch: "" when none, else how many and where the first is, in the user's
/// words ("a write outside its outputs: 2 bytes changed, the first at byte 1 past the end of y",
/// "... the first in its input x").
std::string ForeignWrites(const GeneralContract& c, const BufferPlan& plan,
                          const std::vector<uint8_t>& before, const std::vector<uint8_t>& after);
/// Elements of `bytes` (of `width` bytes each) still as the poison wrote them: every byte 0xFF.
int64_t Unwritten(const std::vector<uint8_t>& bytes, int width);

/// A launch's figures against its roofs: operations and bytes from the work model at `sizes`,
/// achieved per second over `seconds`, each as a share of its roof (the compute peak at the
/// clock, the device's measured bandwidth), and which roof is the nearer: "memory" or "compute".
struct Roofline {
  double ops = 0, bytes = 0;
  double ops_per_second = 0, bytes_per_second = 0;
  double compute_share = 0, memory_share = 0;
  double intensity = 0;  ///< ops per byte
  std::string bound;
};
std::string ComputeRoofline(const GeneralContract& c, const Sizes& sizes, double seconds,
                            double peak_ops_per_second, double bandwidth_bytes_per_second,
                            Roofline* out);

}  // namespace ablation::kernels::user
