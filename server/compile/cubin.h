// A cubin from any compiler (nvcc -cubin, a DSL's own ptxas run, a vendor library's build), in the
// compiler process only: the ELF the user brings, read with Debian's libelf, never loaded here.
// It travels and is stored as base64 text (RFC 4648: proto strings and the database's source
// column hold text); this side decodes it, checks it is a CUDA ELF for the architecture the
// daemon's GPU is, that the entry and every other kernel asked for are global functions of it,
// and reads what NVIDIA's toolchain records per kernel in its .nv.info sections: the registers,
// the stack frame, each parameter's bytes (the contract's check) and, from .nv.shared.<entry>,
// the static shared memory. A cubin carries no record of spills: those stay unknown (-1).
//
// The .nv.info records are not documented by NVIDIA: their layout (a format byte, an attribute
// byte, a 16-bit size, the value) and the attributes read here (0x2f REGCOUNT: symbol, registers;
// 0x11 FRAME_SIZE: symbol, bytes; 0x17 KPARAM_INFO: index, ordinal, offset, and the size in bits
// 18..31 of its last word) were checked against ptxas -v on nvcc 13.0's cubins for sm_80, sm_90a
// (cubin_test.cc holds those cubins to ptxas' figures).
#pragma once

#include <cstddef>
#include <string>

#include "kernels/user/build.h"

namespace ablation::compile {

/// `request.source` (base64 of a cubin) checked and read as above. Not ok, with the log saying
/// why, when it is not base64, not a CUDA ELF, for another architecture than request.arch, or
/// lacks an entry.
kernels::user::CompileResult ReadCubin(const kernels::user::CompileRequest& request);

}  // namespace ablation::compile
