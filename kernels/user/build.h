// One knob set's build of a user kernel, as the daemon asks for it and the compiler process
// (server/compile/, NVRTC) answers: the source, entry, architecture and -D flags in; the cubin,
// ptxas' report and the compiler's log out. The daemon and the compiler process both use these;
// only the compiler process links NVRTC.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ablation::kernels::user {

struct CompileRequest {
  std::string source;
  std::string source_name = "kernel.cu";  ///< what the compiler's log calls the file
  std::string entry;                      ///< the extern "C" __global__ function
  /// Other kernels the source must have (a kernel's own contract: its reference entry).
  std::vector<std::string> also_entries;
  std::string arch = "sm_90a";  ///< --gpu-architecture
  /// "cuda" (NVRTC), "ptx" (the toolkit's PTX compiler) or "cubin" (base64 of a built ELF, read
  /// and checked, not compiled); defines and headers apply to "cuda" alone.
  std::string language = "cuda";
  std::vector<std::pair<std::string, int64_t>> defines;  ///< the knob set: -DNAME=value
  /// Where #include finds headers: CUDA's (cuda_bf16.h, cuda_fp16.h, ...) and nothing else.
  std::vector<std::string> include_dirs;
  /// Headers given by name and text, found before any folder: the project's PTX helpers
  /// ("ablation/ptx.cuh").
  std::vector<std::pair<std::string, std::string>> headers;
};

/// What ptxas said of the entry (-v). Unset fields: it did not say (registers -1).
struct PtxasReport {
  bool found = false;  ///< the log has ptxas' report of an entry of that name
  int registers = -1;
  int64_t stack_bytes = 0, spill_store_bytes = 0, spill_load_bytes = 0;
  int64_t static_smem_bytes = 0;
};

struct CompileResult {
  bool ok = false;
  std::string log;    ///< the compiler's log (errors with the source's line numbers)
  std::string cubin;  ///< with ok
  PtxasReport ptxas;
  std::string compiler;  ///< "nvrtc 13.0"
  std::string options;   ///< the options, space-separated, as given to the compiler
  /// The entry's parameters' bytes as the build records them (a cubin's .nv.info); empty where
  /// the compiler did not read them.
  std::vector<size_t> param_bytes;
};

/// The name messages call a user's file: its own name where it is a plain one ("tiled_gemm.cu":
/// letters, digits, '.', '_', '-' and '+', at most 64, no folder), its last path component where
/// a path was given, else `fallback` ("kernel.cu" for a source, "manifest.toml" for a manifest).
/// A source's reaches the compiler's command line, so nothing else passes.
inline std::string SourceFileName(std::string_view given, std::string_view fallback = "kernel.cu") {
  const size_t slash = given.find_last_of('/');
  if (slash != std::string_view::npos) given = given.substr(slash + 1);
  if (given.empty() || given.size() > 64 || given[0] == '.' || given[0] == '-')
    return std::string(fallback);
  for (char c : given) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '.' || c == '_' || c == '-' || c == '+';
    if (!plain) return std::string(fallback);
  }
  return std::string(given);
}

}  // namespace ablation::kernels::user
