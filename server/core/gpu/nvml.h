// NVML, loaded at run time with dlopen: the daemon has no link-time dependency on the driver, so
// it also runs (without telemetry or clock locking) where there is none, and it can reset locked
// clocks even after a worker died, since the worker owns CUDA but the daemon owns the clocks.
//
// Devices are addressed by UUID ("GPU-..." from the worker's hello), never by index: CUDA orders
// GPUs fastest first (unless CUDA_DEVICE_ORDER=PCI_BUS_ID) while NVML orders them by PCI bus.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "server/core/base/status.h"

namespace ablation::core {

/// The few NVML definitions used, declared here so that no NVML header is needed to build.
/// Values as in NVIDIA's nvml.h (they are part of its stable C ABI).
namespace nvml_abi {
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
using nvmlReturn_t = int;  // a C enum: int-sized
inline constexpr nvmlReturn_t NVML_SUCCESS = 0;
inline constexpr nvmlReturn_t NVML_ERROR_INVALID_ARGUMENT = 2;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
inline constexpr nvmlReturn_t NVML_ERROR_NO_PERMISSION = 4;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_FOUND = 6;
inline constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
inline constexpr nvmlReturn_t NVML_ERROR_FUNCTION_NOT_FOUND = 13;

using nvmlClockType_t = int;
inline constexpr nvmlClockType_t NVML_CLOCK_GRAPHICS = 0;
inline constexpr nvmlClockType_t NVML_CLOCK_SM = 1;
inline constexpr nvmlClockType_t NVML_CLOCK_MEM = 2;

using nvmlTemperatureSensors_t = int;
inline constexpr nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU = 0;

/// nvmlClocksEventReason* (formerly nvmlClocksThrottleReason*) bits.
inline constexpr uint64_t kReasonGpuIdle = 0x1;
inline constexpr uint64_t kReasonApplicationsClocksSetting = 0x2;
inline constexpr uint64_t kReasonSwPowerCap = 0x4;
inline constexpr uint64_t kReasonHwSlowdown = 0x8;
inline constexpr uint64_t kReasonSyncBoost = 0x10;
inline constexpr uint64_t kReasonSwThermalSlowdown = 0x20;
inline constexpr uint64_t kReasonHwThermalSlowdown = 0x40;
inline constexpr uint64_t kReasonHwPowerBrakeSlowdown = 0x80;
inline constexpr uint64_t kReasonDisplayClockSetting = 0x100;
}  // namespace nvml_abi

/// The reasons that mean the clocks are held below what was asked for, i.e. that a timing taken
/// meanwhile is not comparable. Idle, application clocks, sync boost and display clocks are not.
inline constexpr uint64_t kThrottleReasonsMask =
    nvml_abi::kReasonSwPowerCap | nvml_abi::kReasonHwSlowdown | nvml_abi::kReasonSwThermalSlowdown |
    nvml_abi::kReasonHwThermalSlowdown | nvml_abi::kReasonHwPowerBrakeSlowdown;

/// Snake-case names of the set bits, lowest bit first: "gpu_idle", "applications_clocks",
/// "sw_power_cap", "hw_slowdown", "sync_boost", "sw_thermal", "hw_thermal", "hw_power_brake",
/// "display_clocks"; unknown bits as "reason_0x200". Never a comma (stored comma-separated).
std::vector<std::string> ReasonNames(uint64_t reasons);

/// One reading of a device. A field NVML cannot give on this device (NOT_SUPPORTED) is empty.
struct NvmlSample {
  std::chrono::system_clock::time_point time;
  std::optional<double> sm_mhz;
  std::optional<double> mem_mhz;
  std::optional<double> power_w;
  std::optional<double> temp_c;
  std::optional<uint64_t> reasons;  ///< clock-event (throttle) reason bits
};

struct SupportedClocks {
  std::vector<int> mem_mhz;  ///< descending, as NVML lists them
  /// SM (graphics) clocks supported at each memory clock, descending.
  std::map<int, std::vector<int>> sm_mhz_by_mem;
};

struct ClockPair {
  int sm_mhz = 0;
  int mem_mhz = 0;
};

/// The loaded library and the NVML session (nvmlInit_v2 .. nvmlShutdown). Thread-safe: NVML
/// itself is, and the handle cache is guarded.
class Nvml {
 public:
  static constexpr const char* kDefaultLibrary = "libnvidia-ml.so.1";

  /// dlopens `library_path`, resolves the functions and initialises NVML. On failure returns
  /// null and says why in `why_not` (e.g. "NVML is not available: cannot load
  /// libnvidia-ml.so.1 (...)"), a sentence fit for Telemetry.unavailable_reason.
  static std::unique_ptr<Nvml> Load(const std::string& library_path, std::string* why_not);
  static std::unique_ptr<Nvml> Load(std::string* why_not) { return Load(kDefaultLibrary, why_not); }

  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  const std::string& library_path() const { return library_path_; }
  /// The driver version ("550.54.15"), or "" where NVML cannot tell.
  std::string DriverVersion();

  /// What a run's provenance records of the board: VBIOS, enforced power limit, ECC mode. Each
  /// left empty / unset where this NVML or this board cannot tell (never an error).
  struct Provenance {
    std::string vbios_version;
    std::optional<double> power_limit_w;
    std::string ecc_mode;  ///< "on", "off", or ""
  };
  Provenance DeviceProvenance(const std::string& uuid);

  /// Reads clocks, power, temperature and clock-event reasons. Fails only when the device cannot
  /// be found or nothing at all could be read.
  Status Sample(const std::string& uuid, NvmlSample* out);
  /// The board's energy since the driver was loaded, in millijoules
  /// (nvmlDeviceGetTotalEnergyConsumption, Volta and later): the difference of two readings is
  /// the energy between them, however the power moved meanwhile, which a power sampled every few
  /// tens of milliseconds cannot give. Fails where the device or this NVML cannot tell.
  Status TotalEnergyMj(const std::string& uuid, uint64_t* millijoules);
  Status GetSupportedClocks(const std::string& uuid, SupportedClocks* out);
  Status MaxClocks(const std::string& uuid, ClockPair* out);
  /// The default application clocks, used as "base". NVML exposes no other base clock; note that
  /// on Hopper (H100/H200, driver 580) these equal the max clocks (1980/3201 on an H200).
  Status BaseClocks(const std::string& uuid, ClockPair* out);

  /// Locks the SM clock (if sm_mhz > 0) and the memory clock (if mem_mhz > 0) to single values.
  /// All or nothing: if the second lock fails the first is reset before returning. A memory lock
  /// that the device does not support (HBM parts with one memory clock) is skipped when the
  /// requested value is the only supported one, since the clock cannot move anyway.
  Status LockClocks(const std::string& uuid, int sm_mhz, int mem_mhz);
  /// Resets both locks (a reset of a clock that is not locked is harmless). Tries both; the first
  /// error is returned.
  Status ResetClocks(const std::string& uuid);

  /// The core::Status for an NVML return code: "<call>: <NVML's error string>", code chosen by
  /// the error; NO_PERMISSION becomes a sentence that says what to do. One place for all calls.
  Status Check(nvml_abi::nvmlReturn_t rc, const char* call) const;

 private:
  struct Api;
  Nvml(void* library, std::string library_path, std::unique_ptr<Api> api);
  Status Handle(const std::string& uuid, nvml_abi::nvmlDevice_t* device);
  Status ClockList(nvml_abi::nvmlDevice_t device, int mem_mhz, std::vector<int>* out);
  Status MemClockList(nvml_abi::nvmlDevice_t device, std::vector<int>* out);

  void* library_;
  std::string library_path_;
  std::unique_ptr<Api> api_;
  std::mutex mu_;
  std::map<std::string, nvml_abi::nvmlDevice_t> handles_;  ///< by UUID, guarded by mu_
};

/// What a user reads when the daemon may not change clocks.
inline constexpr const char* kNoPermissionSentence =
    "locking clocks needs root or the CAP_SYS_ADMIN capability: run ablationd as root, or use "
    "clocks.mode=observe";

}  // namespace ablation::core
