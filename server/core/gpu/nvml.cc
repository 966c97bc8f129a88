#include "server/core/gpu/nvml.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>

namespace ablation::core {

using namespace nvml_abi;

namespace {

// Names for NVML's own codes, used only when nvmlErrorString is unavailable.
std::string FallbackErrorString(nvmlReturn_t rc) {
  switch (rc) {
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
      return "Insufficient Permissions";
    case NVML_ERROR_NOT_FOUND:
      return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "Insufficient Size";
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return "Function Not Found";
    default:
      return "NVML error " + std::to_string(rc);
  }
}

}  // namespace

// The function pointers, resolved once. Optional ones stay null where an older driver lacks them;
// calls through a null pointer report FUNCTION_NOT_FOUND naming the function.
struct Nvml::Api {
  nvmlReturn_t (*Init)() = nullptr;
  nvmlReturn_t (*Shutdown)() = nullptr;
  const char* (*ErrorString)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*SystemGetDriverVersion)(char*, unsigned) = nullptr;
  nvmlReturn_t (*GetHandleByUUID)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*GetClockInfo)(nvmlDevice_t, nvmlClockType_t, unsigned*) = nullptr;
  nvmlReturn_t (*GetMaxClockInfo)(nvmlDevice_t, nvmlClockType_t, unsigned*) = nullptr;
  nvmlReturn_t (*GetDefaultApplicationsClock)(nvmlDevice_t, nvmlClockType_t, unsigned*) = nullptr;
  nvmlReturn_t (*GetPowerUsage)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*GetTotalEnergyConsumption)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*GetTemperature)(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned*) = nullptr;
  nvmlReturn_t (*GetClocksEventReasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  const char* clocks_event_reasons_name = "nvmlDeviceGetCurrentClocksEventReasons";
  nvmlReturn_t (*GetSupportedMemoryClocks)(nvmlDevice_t, unsigned*, unsigned*) = nullptr;
  nvmlReturn_t (*GetSupportedGraphicsClocks)(nvmlDevice_t, unsigned, unsigned*,
                                             unsigned*) = nullptr;
  nvmlReturn_t (*SetGpuLockedClocks)(nvmlDevice_t, unsigned, unsigned) = nullptr;
  nvmlReturn_t (*ResetGpuLockedClocks)(nvmlDevice_t) = nullptr;
  nvmlReturn_t (*SetMemoryLockedClocks)(nvmlDevice_t, unsigned, unsigned) = nullptr;
  nvmlReturn_t (*ResetMemoryLockedClocks)(nvmlDevice_t) = nullptr;
  nvmlReturn_t (*GetVbiosVersion)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*GetEnforcedPowerLimit)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*GetEccMode)(nvmlDevice_t, int*, int*) = nullptr;  // nvmlEnableState_t: 0 / 1
};

namespace {

template <typename F>
void ResolveSymbol(void* library, const char* name, F* fn) {
  *fn = reinterpret_cast<F>(dlsym(library, name));
}

// Calls an optional function, or reports that this NVML lacks it.
template <typename F, typename... Args>
nvmlReturn_t CallOptional(F fn, Args... args) {
  return fn ? fn(args...) : NVML_ERROR_FUNCTION_NOT_FOUND;
}

}  // namespace

std::vector<std::string> ReasonNames(uint64_t reasons) {
  static constexpr std::pair<uint64_t, const char*> kNames[] = {
      {kReasonGpuIdle, "gpu_idle"},
      {kReasonApplicationsClocksSetting, "applications_clocks"},
      {kReasonSwPowerCap, "sw_power_cap"},
      {kReasonHwSlowdown, "hw_slowdown"},
      {kReasonSyncBoost, "sync_boost"},
      {kReasonSwThermalSlowdown, "sw_thermal"},
      {kReasonHwThermalSlowdown, "hw_thermal"},
      {kReasonHwPowerBrakeSlowdown, "hw_power_brake"},
      {kReasonDisplayClockSetting, "display_clocks"},
  };
  std::vector<std::string> names;
  uint64_t known = 0;
  for (const auto& [bit, name] : kNames) {
    known |= bit;
    if (reasons & bit) names.emplace_back(name);
  }
  // Newer drivers add reasons; keep them visible rather than dropping them.
  for (int i = 0; i < 64; ++i) {
    uint64_t bit = uint64_t{1} << i;
    if ((reasons & bit) && !(known & bit)) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "reason_0x%llx", static_cast<unsigned long long>(bit));
      names.emplace_back(buf);
    }
  }
  return names;
}

std::unique_ptr<Nvml> Nvml::Load(const std::string& library_path, std::string* why_not) {
  auto fail = [&](const std::string& why) -> std::unique_ptr<Nvml> {
    if (why_not) *why_not = "NVML is not available: " + why;
    return nullptr;
  };
  // RTLD_LOCAL: NVML's symbols stay out of the global namespace, so a stand-in library in tests
  // cannot be confused with (or shadow) a real one loaded by something else.
  void* library = dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* err = dlerror();
    return fail("cannot load " + library_path + " (" + (err ? err : "unknown error") +
                "); is the NVIDIA driver installed?");
  }
  auto api = std::make_unique<Api>();
  ResolveSymbol(library, "nvmlInit_v2", &api->Init);
  ResolveSymbol(library, "nvmlShutdown", &api->Shutdown);
  ResolveSymbol(library, "nvmlErrorString", &api->ErrorString);
  ResolveSymbol(library, "nvmlSystemGetDriverVersion", &api->SystemGetDriverVersion);
  ResolveSymbol(library, "nvmlDeviceGetHandleByUUID", &api->GetHandleByUUID);
  ResolveSymbol(library, "nvmlDeviceGetClockInfo", &api->GetClockInfo);
  ResolveSymbol(library, "nvmlDeviceGetMaxClockInfo", &api->GetMaxClockInfo);
  ResolveSymbol(library, "nvmlDeviceGetDefaultApplicationsClock",
                &api->GetDefaultApplicationsClock);
  ResolveSymbol(library, "nvmlDeviceGetPowerUsage", &api->GetPowerUsage);
  ResolveSymbol(library, "nvmlDeviceGetTotalEnergyConsumption", &api->GetTotalEnergyConsumption);
  ResolveSymbol(library, "nvmlDeviceGetTemperature", &api->GetTemperature);
  // Renamed in R535; drivers before it only have the throttle-reasons name (same signature).
  ResolveSymbol(library, "nvmlDeviceGetCurrentClocksEventReasons", &api->GetClocksEventReasons);
  if (!api->GetClocksEventReasons) {
    ResolveSymbol(library, "nvmlDeviceGetCurrentClocksThrottleReasons",
                  &api->GetClocksEventReasons);
    api->clocks_event_reasons_name = "nvmlDeviceGetCurrentClocksThrottleReasons";
  }
  ResolveSymbol(library, "nvmlDeviceGetSupportedMemoryClocks", &api->GetSupportedMemoryClocks);
  ResolveSymbol(library, "nvmlDeviceGetSupportedGraphicsClocks", &api->GetSupportedGraphicsClocks);
  ResolveSymbol(library, "nvmlDeviceSetGpuLockedClocks", &api->SetGpuLockedClocks);
  ResolveSymbol(library, "nvmlDeviceResetGpuLockedClocks", &api->ResetGpuLockedClocks);
  ResolveSymbol(library, "nvmlDeviceSetMemoryLockedClocks", &api->SetMemoryLockedClocks);
  ResolveSymbol(library, "nvmlDeviceResetMemoryLockedClocks", &api->ResetMemoryLockedClocks);
  ResolveSymbol(library, "nvmlDeviceGetVbiosVersion", &api->GetVbiosVersion);
  ResolveSymbol(library, "nvmlDeviceGetEnforcedPowerLimit", &api->GetEnforcedPowerLimit);
  ResolveSymbol(library, "nvmlDeviceGetEccMode", &api->GetEccMode);

  // Without these nothing works; the rest are checked where used.
  for (auto [fn, name] : {std::pair<bool, const char*>{api->Init != nullptr, "nvmlInit_v2"},
                          {api->Shutdown != nullptr, "nvmlShutdown"},
                          {api->GetHandleByUUID != nullptr, "nvmlDeviceGetHandleByUUID"}}) {
    if (!fn) {
      dlclose(library);
      return fail(library_path + " lacks " + name + " (driver too old?)");
    }
  }
  nvmlReturn_t rc = api->Init();
  if (rc != NVML_SUCCESS) {
    std::string err = api->ErrorString ? api->ErrorString(rc) : FallbackErrorString(rc);
    dlclose(library);
    return fail("nvmlInit_v2: " + err);
  }
  return std::unique_ptr<Nvml>(new Nvml(library, library_path, std::move(api)));
}

Nvml::Nvml(void* library, std::string library_path, std::unique_ptr<Api> api)
    : library_(library), library_path_(std::move(library_path)), api_(std::move(api)) {}

Nvml::~Nvml() {
  api_->Shutdown();
  dlclose(library_);
}

Status Nvml::Check(nvmlReturn_t rc, const char* call) const {
  if (rc == NVML_SUCCESS) return Status::Ok();
  std::string text = api_->ErrorString ? api_->ErrorString(rc) : FallbackErrorString(rc);
  if (rc == NVML_ERROR_FUNCTION_NOT_FOUND) text = "not in this NVML library (driver too old?)";
  std::string message = std::string(call) + ": " + text;
  switch (rc) {
    case NVML_ERROR_NO_PERMISSION:
      return FailedPrecondition(std::string(kNoPermissionSentence) + " (" + message + ")");
    case NVML_ERROR_INVALID_ARGUMENT:
      return InvalidArgument(message);
    case NVML_ERROR_NOT_FOUND:
      return NotFound(message);
    case NVML_ERROR_NOT_SUPPORTED:
      return FailedPrecondition(message + " on this device");
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return FailedPrecondition(message);
    default:
      return {Code::kInternal, message};
  }
}

std::string Nvml::DriverVersion() {
  char buf[96] = {};
  if (CallOptional(api_->SystemGetDriverVersion, buf, unsigned{sizeof buf}) != NVML_SUCCESS) {
    return "";
  }
  return buf;
}

Nvml::Provenance Nvml::DeviceProvenance(const std::string& uuid) {
  Provenance out;
  nvmlDevice_t device;
  if (!Handle(uuid, &device).ok()) return out;
  char vbios[96] = {};
  if (CallOptional(api_->GetVbiosVersion, device, vbios, unsigned{sizeof vbios}) == NVML_SUCCESS) {
    out.vbios_version = vbios;
  }
  unsigned mw = 0;
  if (CallOptional(api_->GetEnforcedPowerLimit, device, &mw) == NVML_SUCCESS) {
    out.power_limit_w = mw / 1000.0;  // NVML reports milliwatts
  }
  int current = 0, pending = 0;
  if (CallOptional(api_->GetEccMode, device, &current, &pending) == NVML_SUCCESS) {
    out.ecc_mode = current ? "on" : "off";
  }
  return out;
}

Status Nvml::Handle(const std::string& uuid, nvmlDevice_t* device) {
  std::lock_guard lock(mu_);
  auto it = handles_.find(uuid);
  if (it != handles_.end()) {
    *device = it->second;
    return Status::Ok();
  }
  Status s = Check(api_->GetHandleByUUID(uuid.c_str(), device), "nvmlDeviceGetHandleByUUID");
  if (!s.ok()) return {s.code(), s.message() + " (device " + uuid + ")"};
  handles_[uuid] = *device;
  return Status::Ok();
}

Status Nvml::Sample(const std::string& uuid, NvmlSample* out) {
  *out = {};
  out->time = std::chrono::system_clock::now();
  nvmlDevice_t device;
  if (Status s = Handle(uuid, &device); !s.ok()) return s;
  Status first_error;
  auto read = [&](nvmlReturn_t rc, const char* call) {
    if (rc != NVML_SUCCESS && first_error.ok()) first_error = Check(rc, call);
    return rc == NVML_SUCCESS;
  };
  unsigned v = 0;
  if (read(CallOptional(api_->GetClockInfo, device, NVML_CLOCK_SM, &v), "nvmlDeviceGetClockInfo")) {
    out->sm_mhz = v;
  }
  if (read(CallOptional(api_->GetClockInfo, device, NVML_CLOCK_MEM, &v),
           "nvmlDeviceGetClockInfo")) {
    out->mem_mhz = v;
  }
  if (read(CallOptional(api_->GetPowerUsage, device, &v), "nvmlDeviceGetPowerUsage")) {
    out->power_w = v / 1000.0;  // NVML reports milliwatts
  }
  if (read(CallOptional(api_->GetTemperature, device, NVML_TEMPERATURE_GPU, &v),
           "nvmlDeviceGetTemperature")) {
    out->temp_c = v;
  }
  unsigned long long reasons = 0;
  if (read(CallOptional(api_->GetClocksEventReasons, device, &reasons),
           api_->clocks_event_reasons_name)) {
    out->reasons = reasons;
  }
  if (!out->sm_mhz && !out->mem_mhz && !out->power_w && !out->temp_c && !out->reasons) {
    return first_error;
  }
  return Status::Ok();
}

Status Nvml::TotalEnergyMj(const std::string& uuid, uint64_t* millijoules) {
  nvmlDevice_t device;
  if (Status s = Handle(uuid, &device); !s.ok()) return s;
  unsigned long long mj = 0;
  if (Status s = Check(CallOptional(api_->GetTotalEnergyConsumption, device, &mj),
                       "nvmlDeviceGetTotalEnergyConsumption");
      !s.ok())
    return s;
  *millijoules = mj;
  return Status::Ok();
}

namespace {

// NVML's list calls: a buffer and its size in, the count out; INSUFFICIENT_SIZE (with the count
// needed) when the buffer is too small. A generous buffer first, so that one call is the norm and
// no null buffer is ever passed (the documentation does not promise that a null one is accepted).
template <typename Call>
nvmlReturn_t ReadList(Call call, std::vector<int>* out) {
  std::vector<unsigned> clocks(512);
  unsigned count = unsigned(clocks.size());
  nvmlReturn_t rc = call(&count, clocks.data());
  if (rc == NVML_ERROR_INSUFFICIENT_SIZE && count > clocks.size()) {
    clocks.resize(count);
    rc = call(&count, clocks.data());
  }
  if (rc != NVML_SUCCESS) return rc;
  out->assign(clocks.begin(), clocks.begin() + std::min<size_t>(count, clocks.size()));
  std::sort(out->rbegin(), out->rend());
  return NVML_SUCCESS;
}

}  // namespace

Status Nvml::MemClockList(nvmlDevice_t device, std::vector<int>* out) {
  return Check(ReadList(
                   [&](unsigned* count, unsigned* clocks) {
                     return CallOptional(api_->GetSupportedMemoryClocks, device, count, clocks);
                   },
                   out),
               "nvmlDeviceGetSupportedMemoryClocks");
}

Status Nvml::ClockList(nvmlDevice_t device, int mem_mhz, std::vector<int>* out) {
  return Check(ReadList(
                   [&](unsigned* count, unsigned* clocks) {
                     return CallOptional(api_->GetSupportedGraphicsClocks, device,
                                         unsigned(mem_mhz), count, clocks);
                   },
                   out),
               "nvmlDeviceGetSupportedGraphicsClocks");
}

Status Nvml::GetSupportedClocks(const std::string& uuid, SupportedClocks* out) {
  *out = {};
  nvmlDevice_t device;
  if (Status s = Handle(uuid, &device); !s.ok()) return s;
  if (Status s = MemClockList(device, &out->mem_mhz); !s.ok()) return s;
  for (int mem : out->mem_mhz) {
    if (Status s = ClockList(device, mem, &out->sm_mhz_by_mem[mem]); !s.ok()) return s;
  }
  return Status::Ok();
}

Status Nvml::MaxClocks(const std::string& uuid, ClockPair* out) {
  nvmlDevice_t device;
  if (Status s = Handle(uuid, &device); !s.ok()) return s;
  unsigned sm = 0, mem = 0;
  if (Status s = Check(CallOptional(api_->GetMaxClockInfo, device, NVML_CLOCK_SM, &sm),
                       "nvmlDeviceGetMaxClockInfo");
      !s.ok()) {
    return s;
  }
  if (Status s = Check(CallOptional(api_->GetMaxClockInfo, device, NVML_CLOCK_MEM, &mem),
                       "nvmlDeviceGetMaxClockInfo");
      !s.ok()) {
    return s;
  }
  *out = {int(sm), int(mem)};
  return Status::Ok();
}

Status Nvml::BaseClocks(const std::string& uuid, ClockPair* out) {
  nvmlDevice_t device;
  if (Status s = Handle(uuid, &device); !s.ok()) return s;
  // Application clocks are set on the graphics domain; SM follows it.
  unsigned sm = 0, mem = 0;
  if (Status s =
          Check(CallOptional(api_->GetDefaultApplicationsClock, device, NVML_CLOCK_GRAPHICS, &sm),
                "nvmlDeviceGetDefaultApplicationsClock");
      !s.ok()) {
    return s;
  }
  if (Status s =
          Check(CallOptional(api_->GetDefaultApplicationsClock, device, NVML_CLOCK_MEM, &mem),
                "nvmlDeviceGetDefaultApplicationsClock");
      !s.ok()) {
    return s;
  }
  *out = {int(sm), int(mem)};
  return Status::Ok();
}

Status Nvml::LockClocks(const std::string& uuid, int sm_mhz, int mem_mhz) {
  nvmlDevice_t device;
  if (Status s = Handle(uuid, &device); !s.ok()) return s;
  // Memory first: a GPU lock followed by a refused memory lock would need an undo, and the
  // memory lock is the one that is commonly unsupported.
  bool mem_locked = false;
  if (mem_mhz > 0) {
    nvmlReturn_t rc =
        CallOptional(api_->SetMemoryLockedClocks, device, unsigned(mem_mhz), unsigned(mem_mhz));
    if (rc == NVML_ERROR_NOT_SUPPORTED) {
      // HBM parts typically have one memory clock and refuse to lock it; that is fine when the
      // request is that one clock (it cannot move), not otherwise.
      std::vector<int> mems;
      if (!MemClockList(device, &mems).ok() || mems.size() != 1 || mems[0] != mem_mhz) {
        return Check(rc, "nvmlDeviceSetMemoryLockedClocks");
      }
    } else if (Status s = Check(rc, "nvmlDeviceSetMemoryLockedClocks"); !s.ok()) {
      return s;
    } else {
      mem_locked = true;
    }
  }
  if (sm_mhz > 0) {
    Status s =
        Check(CallOptional(api_->SetGpuLockedClocks, device, unsigned(sm_mhz), unsigned(sm_mhz)),
              "nvmlDeviceSetGpuLockedClocks");
    if (!s.ok()) {
      if (mem_locked) CallOptional(api_->ResetMemoryLockedClocks, device);
      return s;
    }
  }
  return Status::Ok();
}

Status Nvml::ResetClocks(const std::string& uuid) {
  nvmlDevice_t device;
  if (Status s = Handle(uuid, &device); !s.ok()) return s;
  Status gpu =
      Check(CallOptional(api_->ResetGpuLockedClocks, device), "nvmlDeviceResetGpuLockedClocks");
  nvmlReturn_t mem_rc = CallOptional(api_->ResetMemoryLockedClocks, device);
  // A device that cannot lock its memory clock cannot have it locked either.
  Status mem = mem_rc == NVML_ERROR_NOT_SUPPORTED
                   ? Status::Ok()
                   : Check(mem_rc, "nvmlDeviceResetMemoryLockedClocks");
  return gpu.ok() ? mem : gpu;
}

}  // namespace ablation::core
