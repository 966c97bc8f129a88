#include "server/worker/device.h"

#include <dlfcn.h>

#include <library_types.h>

#include <algorithm>

#include "kernels/sm90/sm90_launchers.h"
#include "server/worker/diagnostics.h"
#include "server/worker/identity.h"
#include "server/worker/l2_flush.h"
#include "server/worker/sample_plan.h"
#include "server/worker/timing_kernels.h"

namespace ablation::worker {

namespace {

/// cuBLAS recommends 32 MiB of workspace on Hopper (4 MiB is enough before); one per process.
constexpr size_t kWorkspaceBytes = 32u << 20;

}  // namespace

Device::~Device() {
  if (!present) return;
  // Best effort; after a sticky error these fail, and the process is about to exit anyway.
  if (cublaslt) cublasLtDestroy(cublaslt);
  if (cublas) cublasDestroy(cublas);
  for (cudaEvent_t e : sample_events) cudaEventDestroy(e);
  for (cudaEvent_t e : batch_done) cudaEventDestroy(e);
  if (probes_host) cudaFreeHost(probes_host);
  if (gate) cudaFreeHost(const_cast<int*>(gate));
  if (stream) cudaStreamDestroy(stream);
}

std::string NoDriverReason(cudaError_t e) {
  // The runtime reports a machine without any NVIDIA driver as an "insufficient" driver: it could
  // not load one at all. Say what is really missing, so that nobody upgrades a driver that is
  // not there.
  if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice) {
    void* driver = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (driver == nullptr) {
      const char* why = ::dlerror();
      return "no NVIDIA driver on this machine (libcuda.so.1 cannot be loaded: " +
             std::string(why ? why : "not found") + ")";
    }
    ::dlclose(driver);
  }
  return "cudaGetDeviceCount: " + std::string(cudaGetErrorString(e));
}

int Device::Open(int dev) {
  index = dev;
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    no_device_reason = "no CUDA device: " + NoDriverReason(e);
    return 0;
  }
  if (count == 0) {
    no_device_reason = "no CUDA device: cudaGetDeviceCount found no CUDA-capable device";
  } else if (dev < 0 || dev >= count) {
    no_device_reason = "no CUDA device: --device " + std::to_string(dev) + " is out of range (" +
                       std::to_string(count) + " device" + (count == 1 ? "" : "s") + ")";
  } else if (std::string err = CreateResources(); !err.empty()) {
    no_device_reason = "no usable CUDA device " + std::to_string(dev) + ": " + err;
  } else {
    present = true;
    no_device_reason.clear();
  }
  return count;
}

std::string Device::CreateResources() {
  cudaError_t e;
  if ((e = cudaSetDevice(index)) != cudaSuccess) return "cudaSetDevice: " + CudaText(e);
  if ((e = cudaGetDeviceProperties(&prop, index)) != cudaSuccess) {
    return "cudaGetDeviceProperties: " + CudaText(e);
  }
  // Creates the primary context now, so that a broken device shows in Hello, not mid-run.
  if ((e = cudaFree(nullptr)) != cudaSuccess) return "creating the CUDA context: " + CudaText(e);
  if ((e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)) != cudaSuccess) {
    return "cudaStreamCreate: " + CudaText(e);
  }
  if ((e = cudaDeviceGetAttribute(&max_sm_khz, cudaDevAttrClockRate, index)) != cudaSuccess) {
    return "cudaDeviceGetAttribute(cudaDevAttrClockRate): " + CudaText(e);
  }
  residency = kernels::sm90::Sm90DeviceResidency();
  residency.sms = prop.multiProcessorCount;
  sample_events.resize(2 * kMaxBatch * kBatchSlots, nullptr);
  for (cudaEvent_t& ev : sample_events) {
    if ((e = cudaEventCreate(&ev)) != cudaSuccess) return "cudaEventCreate: " + CudaText(e);
  }
  batch_done.resize(kBatchSlots, nullptr);
  for (cudaEvent_t& ev : batch_done) {
    if ((e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming)) != cudaSuccess) {
      return "cudaEventCreate: " + CudaText(e);
    }
  }
  const size_t probe_count = size_t(2) * kMaxBatch * kBatchSlots;
  void* host = nullptr;
  if ((e = cudaHostAlloc(&host, probe_count * sizeof(protocol::ClockProbe),
                         cudaHostAllocDefault)) != cudaSuccess) {
    return "allocating the clock probes' host copy: " + CudaText(e);
  }
  probes_host = static_cast<protocol::ClockProbe*>(host);
  // Read by the gate kernels while they spin: host memory the device reads in place.
  if ((e = cudaHostAlloc(&host, 2 * kBatchSlots * sizeof(int), cudaHostAllocMapped)) !=
      cudaSuccess) {
    return "allocating the sampling gates: " + CudaText(e);
  }
  gate = static_cast<volatile int*>(host);
  for (int i = 0; i < kBatchSlots; ++i) {
    gate[2 * i] = 1;
    gate[2 * i + 1] = 0;
  }
  void* on_device = nullptr;
  if ((e = cudaHostGetDevicePointer(&on_device, host, 0)) != cudaSuccess) {
    return "mapping the sampling gates: " + CudaText(e);
  }
  gate_device = static_cast<volatile int*>(on_device);
  cublasStatus_t s;
  if ((s = cublasCreate(&cublas)) != CUBLAS_STATUS_SUCCESS) return "cublasCreate: " + CublasText(s);
  if ((s = cublasSetStream(cublas, stream)) != CUBLAS_STATUS_SUCCESS) {
    return "cublasSetStream: " + CublasText(s);
  }
  if ((s = cublasLtCreate(&cublaslt)) != CUBLAS_STATUS_SUCCESS) {
    return "cublasLtCreate: " + CublasText(s);
  }
  std::string err = probes.Allocate(probe_count * sizeof(protocol::ClockProbe));
  if (!err.empty()) return "allocating the clock probes: " + err;
  err = workspace.Allocate(kWorkspaceBytes);
  if (!err.empty()) return "allocating the cuBLAS workspace: " + err;
  // Writing twice the L2 evicts every line of the previous sample's inputs and output.
  const size_t flush_bytes = std::max<size_t>(2 * size_t(prop.l2CacheSize), 1u << 20);
  err = flush.Allocate(flush_bytes);
  if (!err.empty()) return "allocating the L2 flush buffer: " + err;
  // The gate and probe kernels run once now: a module loads on its kernel's first launch (lazy
  // loading), and that must never happen while a batch is held behind a closed gate.
  if (!(err = EnqueueGate(stream, gate_device, 0)).empty() ||
      !(err = EnqueueProbe(stream, static_cast<protocol::ClockProbe*>(probes.data()))).empty()) {
    return err;
  }
  if ((e = cudaStreamSynchronize(stream)) != cudaSuccess) {
    return "running the timing kernels: " + CudaText(e);
  }
  return "";
}

void Device::Describe(::ablation::v1::DeviceIdentity* id) const {
  id->set_index(index);
  id->set_name(prop.name);
  id->set_uuid(FormatGpuUuid(reinterpret_cast<const unsigned char*>(prop.uuid.bytes)));
  id->set_compute_capability(std::to_string(prop.major) + "." + std::to_string(prop.minor));
  id->set_sm_count(prop.multiProcessorCount);
  id->set_resident_pair_clusters(residency.pair_clusters);
  int v = 0;
  if (cudaDriverGetVersion(&v) == cudaSuccess) id->set_driver_version(FormatCudaVersion(v));
  if (cudaRuntimeGetVersion(&v) == cudaSuccess) id->set_cuda_runtime_version(FormatCudaVersion(v));
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS) {
    id->set_cublas_version(FormatLibraryVersion(major, minor, patch));
  }
  id->set_memory_bytes(int64_t(prop.totalGlobalMem));
  id->set_l2_bytes(prop.l2CacheSize);
  id->set_smem_per_block_optin(int64_t(prop.sharedMemPerBlockOptin));
  id->set_smem_per_sm(int64_t(prop.sharedMemPerMultiprocessor));
}

std::string Device::Failed(const std::string& what) {
  std::string msg = what;
  if (gate) {
    for (int i = 0; i < kBatchSlots; ++i) gate[2 * i] = 1;
  }
  if (present && !fatal) {
    cudaGetLastError();
    cudaError_t s = cudaDeviceSynchronize();
    if (s != cudaSuccess) {
      fatal = true;
      fatal_error = CudaText(s);
      msg += " [sticky CUDA error " + std::string(cudaGetErrorName(s)) +
             ": the worker exits and a fresh one takes over]";
    }
  }
  Log("error: %s", msg.c_str());
  return msg;
}

std::string Device::Check(cudaError_t e, const std::string& what) {
  return e == cudaSuccess ? "" : Failed(what + ": " + CudaText(e));
}

std::string Device::FlushL2(const std::string& what) {
  flush_value = (flush_value + 1) & 0xffu;
  const std::string err = EnqueueL2Flush(stream, flush.data(), flush.bytes(), flush_value);
  return err.empty() ? "" : Failed(what + ": " + err);
}

}  // namespace ablation::worker
