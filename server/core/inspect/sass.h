// Reading SASS, to confirm that a pipelined kernel's loads overlap its compute in the final
// machine code (the compiler may move them behind the compute). Pure functions over the text that
// `cuobjdump -sass` or `nvdisasm` print: split a listing into functions and instructions, find
// loops (a backward BRA), pick the main loop (the one with the most HMMA/IMMA, or FFMA where the
// kernel has no tensor-core instructions), classify its instructions and judge whether global
// loads overlap the compute.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ablation::core {

enum class SassClass {
  kOther,
  kGlobalLoad,   ///< LDG (to registers), LDGSTS (cp.async), UTMALDG (TMA)
  kSharedStore,  ///< STS
  kSharedLoad,   ///< LDS, LDSM
  kTensorCore,   ///< HMMA, IMMA, HGMMA, IGMMA, QGMMA, DMMA
  kFfma,         ///< FFMA (the compute of a SIMT kernel)
  kBarrier,      ///< BAR.SYNC / BAR.RED: every thread of the block waits
  kAsyncWait,    ///< LDGDEPBAR, DEPBAR: cp.async commit / wait_group
  kLocal,        ///< LDL, STL: local memory (register spills, or a local array)
  kBranch,       ///< BRA, JMP
  kExit,         ///< EXIT, RET
};
std::string_view ToString(SassClass c);

struct SassInstruction {
  int64_t offset = -1;    ///< byte offset in the function (the /*0870*/ column)
  std::string predicate;  ///< "@!P0", or empty
  std::string opcode;     ///< "LDG.E.128.CONSTANT"
  std::string mnemonic;   ///< "LDG": the opcode up to its first dot
  std::string operands;   ///< "R72, [R72.64]"
  SassClass cls = SassClass::kOther;
  int64_t target = -1;  ///< a branch's target offset, when known
  std::string text;     ///< "@!P0 BRA 0xdc0" (predicate, opcode, operands)
};

struct SassFunction {
  std::string name;  ///< the mangled symbol
  std::string arch;  ///< "sm_90" when the listing says so
  std::vector<SassInstruction> instructions;
};

SassClass ClassifyOpcode(std::string_view opcode);

/// Splits a cuobjdump -sass or nvdisasm listing into functions. Branch targets given as labels
/// (nvdisasm's `(.L_x_3)) are resolved to offsets. Lines that are not instructions are skipped.
std::vector<SassFunction> ParseSass(std::string_view listing);

struct SassLoop {
  size_t head = 0;  ///< index of the first instruction (the back branch's target)
  size_t tail = 0;  ///< index of the backward branch
  int tensor = 0;   ///< tensor-core instructions inside, nested loops included
  int ffma = 0;
};

/// Every backward branch to an instruction of the function makes a loop, outermost first where
/// they share a head.
std::vector<SassLoop> FindLoops(const SassFunction& function);

/// One line of the annotated excerpt. Markers: LOAD> (a global load that reaches the compute
/// with no barrier), LOAD (one that does not), MMA / FFMA (compute), BAR (barrier), WAIT
/// (cp.async wait), STS, LDS, LOCAL! (local memory), LOOP^ (the back branch), LOOP (an inner
/// loop's bounds), "" for the rest; `...` lines stand for runs left out.
struct SassLine {
  int64_t offset = -1;  ///< -1 for a `...` line
  std::string marker;
  std::string text;
};

struct SassVerdict {
  bool loop_found = false;
  int64_t loop_start = -1;  ///< offsets of the main loop's first instruction and back branch
  int64_t loop_end = -1;
  int loop_instructions = 0;
  std::string compute_opcode;       ///< "HMMA", "IMMA", "FFMA", ... (the main loop's compute)
  int compute_per_iteration = 0;    ///< static count in the main loop, nested loops included
  int compute_in_inner_loops = 0;   ///< of those, how many sit in loops nested in the main loop
  int loads = 0;                    ///< global loads in the main loop
  std::string load_opcode;          ///< "LDGSTS", "LDG", "LDG+LDGSTS"
  int overlapping_loads = 0;        ///< loads that reach the compute with no BAR.SYNC between
  int64_t first_overlap_load = -1;  ///< offset of the first such load
  int64_t overlap_compute = -1;     ///< offset of the compute instruction it reaches
  int64_t blocking_barrier = -1;    ///< a barrier that separates a load from the compute
  bool overlap = false;
  bool barrier_after_compute = false;
  int64_t barrier_after = -1;
  /// Every refill of shared memory in the main loop (LDGSTS, STS) is reached from the shared
  /// loads before it (walking back around the loop) only through a BAR.SYNC: what a loop whose
  /// last k-step computes from fragments already in registers needs instead of a barrier after
  /// the compute. refill_barrier: that barrier, for the first refill.
  bool barrier_before_refill = false;
  int64_t refill_barrier = -1;
  int local_loads = 0;   ///< LDL in the whole function
  int local_stores = 0;  ///< STL in the whole function
  int local_in_loop = 0;
  std::vector<SassLine> excerpt;  ///< the main loop, annotated
};

/// Judges one function's main loop: global loads issued before the compute with no BAR.SYNC
/// between them, a barrier after the compute, the compute count per iteration, local memory.
SassVerdict InspectFunction(const SassFunction& function);

/// An offset in a listing as the verdicts print it (0x0870).
std::string HexOffset(int64_t offset);

/// The verdict and its reasons as text, for logs and tests (the client renders its own).
std::string DescribeVerdict(const SassVerdict& verdict);

}  // namespace ablation::core
