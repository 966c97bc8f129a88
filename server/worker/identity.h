// Formatting of the device identity fields, as pure functions (tested without a GPU).
#pragma once

#include <cstdint>
#include <string>

namespace ablation::worker {

/// 16 UUID bytes as nvidia-smi prints them: "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
std::string FormatGpuUuid(const unsigned char bytes[16]);

/// A CUDA driver/runtime version number (major * 1000 + minor * 10) as "13.0".
std::string FormatCudaVersion(int version);

/// cuBLAS version parts as "13.1.0".
std::string FormatLibraryVersion(int major, int minor, int patch);

}  // namespace ablation::worker
