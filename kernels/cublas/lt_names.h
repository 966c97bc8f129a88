// The words of cuBLASLt's configuration ids: a tile id as "256x128", a stages id as "64x4", a
// cluster-shape id as "1x2x1"; "" for undefined, automatic or unknown ids. Generated at build time
// from the toolkit's cublasLt.h (lt_names.py). Host-only, no CUDA types.
#pragma once

namespace ablation::kernels {

const char* LtTileName(unsigned id);
const char* LtStagesName(unsigned id);
const char* LtClusterName(unsigned id);

}  // namespace ablation::kernels
