// PTX from any compiler (Triton, CuTe's Python DSL, TileLang, nvcc -ptx, by hand), in the compiler
// process only: one user kernel's PTX into a cubin for one architecture with the toolkit's PTX
// compiler (through nvJitLink, which carries ptxas), so that the architecture, ptxas' -v report
// (registers, spills, shared memory) and the entry check come out as NVRTC's builds do.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/user/build.h"

namespace ablation::compile {

/// The PTX compiler's options for `request`: the architecture, line information, ptxas' -v.
std::vector<std::string> PtxOptions(const kernels::user::CompileRequest& request);

/// "nvjitlink 13.0": the PTX compiler of this toolkit.
std::string PtxCompilerVersion();

/// Compiles `request.source` as PTX in this process (the child's side). Not ok, with the log in
/// the user's words ("softmax.ptx:47:1: error: Not a name of any known instruction: 'rett'"),
/// when the PTX does not assemble, targets another architecture, or has no entry of that name.
kernels::user::CompileResult CompilePtx(const kernels::user::CompileRequest& request,
                                        size_t max_log_bytes);

/// ptxas' messages as the PTX compiler gives them ("ptxas application ptx input, line 47; error
/// : x") in the form editors read ("softmax.ptx:47:1: error: x"); other lines as they are, control
/// characters other than newline and tab dropped (pure, for the tests).
std::string PtxInUserWords(const std::string& log, const std::string& source_name);

}  // namespace ablation::compile
