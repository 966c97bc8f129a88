// libFuzzer target: a user's cubin as the compiler process reads it (server/compile/cubin.h), on
// any bytes as the ELF file: refused or read, never read past its bytes nor crashed on.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/escaping.h"
#include "server/compile/cubin.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ablation::kernels::user::CompileRequest request;
  request.source = absl::Base64Escape(std::string(reinterpret_cast<const char*>(data), size));
  request.entry = "row_softmax";
  request.also_entries = {"row_softmax_ref"};
  request.arch = "sm_90a";
  request.language = "cubin";
  const ablation::kernels::user::CompileResult r = ablation::compile::ReadCubin(request);
  if (r.ok && r.cubin.size() != size) __builtin_trap();  // what is kept is what was given
  return 0;
}
