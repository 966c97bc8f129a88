// NVRTC, in the compiler process only (ablation-compile, main.cc): one knob set of a user kernel's
// source (kernels/user/build.h) into a cubin for one architecture, with ptxas' report of
// registers, spills and shared memory. The daemon never links this: it runs ablation-compile as
// a confined child (server/core/userkernels/compiler.h).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/user/build.h"

namespace ablation::compile {

using kernels::user::CompileRequest;
using kernels::user::CompileResult;
using kernels::user::PtxasReport;

/// The compiler's options for `request`: the architecture, C++17, the knob set's -D flags, line
/// information, and ptxas' -v report.
std::vector<std::string> CompileOptions(const CompileRequest& request);

/// "nvrtc 13.0": what a build made here records as its compiler.
std::string CompilerVersion();

/// Compiles in this process (the child's side). A log longer than `max_log_bytes` is cut, saying
/// so. Not ok, with the log, when NVRTC refuses the source or the entry is not in the cubin.
CompileResult Compile(const CompileRequest& request, size_t max_log_bytes);

/// "" when every #include, #include_next and __has_include of `source` that names its header
/// with a literal names one by a relative path without "..": the CUDA headers and the project's
/// (ablation/ptx.cuh). Else the refusal of the first other, naming it and its line
/// in the form of the compiler's errors ("kernel.cu:3:1: error: #include \"/etc/passwd\" is
/// refused: ..."). A header named through a macro is not seen here; the compiler's sandbox finds
/// nothing outside those folders either, and UniformIncludeErrors makes what it says of that
/// the same whether the file exists or not.
std::string IncludeRefusal(const std::string& source, const std::string& source_name);

/// `log` with every "cannot open source file" error made the same whether the file is missing,
/// unreadable or a folder: where only Landlock confines the compile, "Permission denied" would
/// tell that a path exists.
std::string UniformIncludeErrors(const std::string& log);

/// The compiler's log in the form editors and CI problem matchers read, naming the user's file:
/// "kernel.cu(33): error: x" becomes "tiled.cu:33:7: error: x" (the column from the caret line
/// NVRTC prints under the echoed source line, 1 where there is none; a line that names no kind
/// is an error). Control characters other than newline and tab are
/// dropped (NVRTC's log may carry a NUL).
std::string InUserWords(const std::string& log, const std::string& source_name);

/// `log` cut to `max_log_bytes`, saying so where it was.
std::string CutLog(std::string log, size_t max_log_bytes);

/// Whether the cubin of `out` has request.entry and every one of request.also_entries as kernels;
/// where one is missing, the cubin is dropped and the log starts with the cause ("kernel.cu:
/// error: entry 'x' is not a kernel of this source: <how> ..."), the compiler's report after it.
/// `how` says what makes a kernel in the source's language.
bool HasEntries(const CompileRequest& request, const std::string& how, CompileResult* out);

/// ptxas' -v lines for `entry` in `log` (pure, for the tests and for logs read back).
PtxasReport ParsePtxasReport(const std::string& log, const std::string& entry);

}  // namespace ablation::compile
