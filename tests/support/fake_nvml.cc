// A stand-in for libnvidia-ml.so: the same C symbols, one simulated GPU, and a log of every call,
// so that tests can check that each clock lock is followed by its reset without ever touching a
// real GPU's clocks. Built as a shared library (libfake-nvml.so) and loaded through
// Nvml::Load(path), exactly as the daemon loads the real one.
//
// Environment:
//   FAKE_NVML_UUID           the device's UUID (default GPU-00000000-0000-0000-0000-000000000000)
//   FAKE_NVML_LOG            file to append one line per call to ("lock_gpu 1980 1980 rc=0")
//   FAKE_NVML_NO_PERMISSION  1: the Set*/Reset* calls return NVML_ERROR_NO_PERMISSION
//   FAKE_NVML_THROTTLE       hex clock-event reasons to report (e.g. 0x4)
//   FAKE_NVML_SM_MHZ         the SM clock to report when not locked (default 1980)
//   FAKE_NVML_INIT_FAIL      1: nvmlInit_v2 returns NVML_ERROR_DRIVER_NOT_LOADED
//   FAKE_NVML_MEM_LOCK_UNSUPPORTED  1: the memory lock calls return NVML_ERROR_NOT_SUPPORTED, as
//                            on HBM parts
//   FAKE_NVML_WATCH_FILE     a path; each lock call logs whether it exists then ("file=yes"),
//                            which shows that the clock-lock journal is written before a lock
//   FAKE_NVML_GPU_LOCK_RC    a return code for nvmlDeviceSetGpuLockedClocks (to fail it alone)
//   ABLATION_FAKE_GPU_STATE  the fake worker's board (fake_power.h): while the worker was busy in
//                            the last 0.1 s, power, SM clock and the power-cap reason are its;
//                            the energy counter is its always (NOT_SUPPORTED without the file)
//   FAKE_NVML_OVERFLOW_FILE  a path; while it exists, nvmlDeviceGetClockInfo (which the daemon's
//                            telemetry thread calls during a measurement) recurses until the
//                            calling thread's stack overflows: a real stack overflow in the daemon
// Everything is read at each call, so a test can change it between calls.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "tests/support/fake_power.h"

namespace {

using nvmlReturn_t = int;
constexpr nvmlReturn_t kSuccess = 0;
constexpr nvmlReturn_t kInvalidArgument = 2;
constexpr nvmlReturn_t kNotSupported = 3;
constexpr nvmlReturn_t kNoPermission = 4;
constexpr nvmlReturn_t kNotFound = 6;
constexpr nvmlReturn_t kInsufficientSize = 7;
constexpr nvmlReturn_t kDriverNotLoaded = 9;
constexpr nvmlReturn_t kUninitialized = 1;

constexpr unsigned kMemClock = 3201;
constexpr unsigned kSmMax = 1980;
constexpr unsigned kSmMin = 345;
constexpr unsigned kSmStep = 15;  // 1980, 1965, ..., 345: 110 clocks
constexpr unsigned kSmBase = 1590;

struct Device {
  int dummy;
};
Device g_device;

std::mutex g_mu;
int g_init_count = 0;
unsigned g_locked_sm = 0;   // 0: not locked
unsigned g_locked_mem = 0;  // 0: not locked

std::string Env(const char* name, const char* fallback = "") {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

void Log(const std::string& line) {
  std::string path = Env("FAKE_NVML_LOG");
  if (path.empty()) return;
  if (FILE* f = std::fopen(path.c_str(), "a")) {
    std::fprintf(f, "%s\n", line.c_str());
    std::fclose(f);
  }
}

// " file=yes" / " file=no" where FAKE_NVML_WATCH_FILE is set, else "".
std::string Watch() {
  std::string path = Env("FAKE_NVML_WATCH_FILE");
  if (path.empty()) return "";
  FILE* f = std::fopen(path.c_str(), "r");
  if (f) std::fclose(f);
  return f ? " file=yes" : " file=no";
}

// Recurses until the stack is gone (FAKE_NVML_OVERFLOW_FILE). Each frame's page is written and
// read back after the call, so the compiler can neither drop it nor make the recursion a loop;
// the stop depth is a volatile the compiler cannot see through (it is never reached).
volatile int g_overflow_stop = -1;
__attribute__((noinline)) int Overflow(int depth) {
  volatile char frame[4096];
  frame[depth % 4096] = char(depth);
  if (depth == g_overflow_stop) return 0;
  return Overflow(depth + 1) + frame[depth % 4096];
}

bool NoPermission() { return Env("FAKE_NVML_NO_PERMISSION") == "1"; }

nvmlReturn_t MemRc() {
  if (Env("FAKE_NVML_MEM_LOCK_UNSUPPORTED") == "1") return kNotSupported;
  return NoPermission() ? kNoPermission : kSuccess;
}

/// The fake worker's board, when there is one (ABLATION_FAKE_GPU_STATE) and it was busy lately.
bool BusyBoard(ablation::fake::BoardState* board) {
  const std::string path = ablation::fake::StatePath();
  if (path.empty() || !ablation::fake::ReadBoardState(path, board)) return false;
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  return board->Busy(now);
}

nvmlReturn_t CheckDevice(Device* device) {
  if (g_init_count == 0) return kUninitialized;
  return device == &g_device ? kSuccess : kInvalidArgument;
}

nvmlReturn_t FillList(unsigned* count, unsigned* out, unsigned n, unsigned first, unsigned step) {
  if (!count) return kInvalidArgument;
  if (!out || *count < n) {
    *count = n;
    return kInsufficientSize;
  }
  for (unsigned i = 0; i < n; ++i) out[i] = first - i * step;
  *count = n;
  return kSuccess;
}

}  // namespace

extern "C" {

// Lets a test confirm that what it loaded is this stand-in before it asks for any clock change.
__attribute__((visibility("default"))) int fake_nvml_is_fake() { return 1; }

__attribute__((visibility("default"))) nvmlReturn_t nvmlInit_v2() {
  std::lock_guard lock(g_mu);
  if (Env("FAKE_NVML_INIT_FAIL") == "1") return kDriverNotLoaded;
  ++g_init_count;
  Log("init");
  return kSuccess;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlShutdown() {
  std::lock_guard lock(g_mu);
  if (g_init_count == 0) return kUninitialized;
  --g_init_count;
  Log("shutdown");
  return kSuccess;
}

__attribute__((visibility("default"))) const char* nvmlErrorString(nvmlReturn_t rc) {
  switch (rc) {
    case kSuccess:
      return "Success";
    case kUninitialized:
      return "Uninitialized";
    case kInvalidArgument:
      return "Invalid Argument";
    case kNotSupported:
      return "Not Supported";
    case kNoPermission:
      return "Insufficient Permissions";
    case kNotFound:
      return "Not Found";
    case kInsufficientSize:
      return "Insufficient Size";
    case kDriverNotLoaded:
      return "Driver Not Loaded";
    default:
      return "Unknown Error";
  }
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlSystemGetDriverVersion(char* version,
                                                                               unsigned length) {
  const char* v = "999.99.99-fake";
  if (length < std::strlen(v) + 1) return kInsufficientSize;
  std::strcpy(version, v);
  return kSuccess;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid,
                                                                              Device** device) {
  std::lock_guard lock(g_mu);
  if (g_init_count == 0) return kUninitialized;
  if (Env("FAKE_NVML_UUID", "GPU-00000000-0000-0000-0000-000000000000") != uuid) {
    Log(std::string("handle_not_found ") + uuid);
    return kNotFound;
  }
  *device = &g_device;
  return kSuccess;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetClockInfo(Device* device, int type,
                                                                           unsigned* clock) {
  if (const std::string path = Env("FAKE_NVML_OVERFLOW_FILE"); !path.empty())
    if (FILE* f = std::fopen(path.c_str(), "r")) {
      std::fclose(f);
      Overflow(0);
    }
  std::lock_guard lock(g_mu);
  if (nvmlReturn_t rc = CheckDevice(device)) return rc;
  ablation::fake::BoardState board;
  if (type == 2) {
    *clock = kMemClock;
  } else if (!g_locked_sm && BusyBoard(&board)) {
    *clock = static_cast<unsigned>(board.sm_mhz + 0.5);
  } else {
    *clock = g_locked_sm ? g_locked_sm
                         : static_cast<unsigned>(std::stoul(Env("FAKE_NVML_SM_MHZ", "1980")));
  }
  return kSuccess;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetMaxClockInfo(Device* device,
                                                                              int type,
                                                                              unsigned* clock) {
  std::lock_guard lock(g_mu);
  if (nvmlReturn_t rc = CheckDevice(device)) return rc;
  *clock = type == 2 ? kMemClock : kSmMax;
  return kSuccess;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetDefaultApplicationsClock(
    Device* device, int type, unsigned* clock) {
  std::lock_guard lock(g_mu);
  if (nvmlReturn_t rc = CheckDevice(device)) return rc;
  *clock = type == 2 ? kMemClock : kSmBase;
  return kSuccess;
}

// Provenance: a fixed VBIOS, a 700 W limit, ECC on.
__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetVbiosVersion(Device* device,
                                                                              char* buf,
                                                                              unsigned n) {
  std::lock_guard lock(g_mu);
  if (nvmlReturn_t rc = CheckDevice(device)) return rc;
  std::snprintf(buf, n, "%s", "96.00.FA.KE.01");
  return kSuccess;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(Device* device,
                                                                                    unsigned* mw) {
  std::lock_guard lock(g_mu);
  if (nvmlReturn_t rc = CheckDevice(device)) return rc;
  *mw = 700000;
  return kSuccess;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetEccMode(Device* device,
                                                                         int* current,
                                                                         int* pending) {
  std::lock_guard lock(g_mu);
  if (nvmlReturn_t rc = CheckDevice(device)) return rc;
  *current = 1;
  *pending = 1;
  return kSuccess;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetPowerUsage(Device* device,
                                                                            unsigned* mw) {
  std::lock_guard lock(g_mu);
  if (nvmlReturn_t rc = CheckDevice(device)) return rc;
  ablation::fake::BoardState board;
  *mw = BusyBoard(&board) ? static_cast<unsigned>(1e3 * board.power_w) : 350500;
  Log("sample");  // one line per Sample(): power is read once per sample
  return kSuccess;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetTemperature(Device* device,
                                                                             int sensor,
                                                                             unsigned* c) {
  std::lock_guard lock(g_mu);
  if (nvmlReturn_t rc = CheckDevice(device)) return rc;
  if (sensor != 0) return kInvalidArgument;
  *c = 61;
  return kSuccess;
}

// Only the new name: the library under test must find it before trying the old one.
__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(
    Device* device, unsigned long long* reasons) {
  std::lock_guard lock(g_mu);
  if (nvmlReturn_t rc = CheckDevice(device)) return rc;
  *reasons = std::strtoull(Env("FAKE_NVML_THROTTLE", "0").c_str(), nullptr, 16);
  ablation::fake::BoardState board;
  if (BusyBoard(&board) && board.capped) *reasons |= 0x4;  // sw_power_cap
  return kSuccess;
}

// The fake worker's energy counter; NOT_SUPPORTED where it keeps none, as on boards before Volta.
__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(
    Device* device, unsigned long long* mj) {
  std::lock_guard lock(g_mu);
  if (nvmlReturn_t rc = CheckDevice(device)) return rc;
  ablation::fake::BoardState board;
  const std::string path = ablation::fake::StatePath();
  if (path.empty()) return kNotSupported;
  if (!ablation::fake::ReadBoardState(path, &board)) board = {};  // nothing run yet: 0
  *mj = static_cast<unsigned long long>(board.energy_mj);
  return kSuccess;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetSupportedMemoryClocks(
    Device* device, unsigned* count, unsigned* clocks) {
  std::lock_guard lock(g_mu);
  if (nvmlReturn_t rc = CheckDevice(device)) return rc;
  return FillList(count, clocks, 1, kMemClock, 0);
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetSupportedGraphicsClocks(
    Device* device, unsigned mem_mhz, unsigned* count, unsigned* clocks) {
  std::lock_guard lock(g_mu);
  if (nvmlReturn_t rc = CheckDevice(device)) return rc;
  if (mem_mhz != kMemClock) return kNotFound;
  return FillList(count, clocks, (kSmMax - kSmMin) / kSmStep + 1, kSmMax, kSmStep);
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceSetGpuLockedClocks(Device* device,
                                                                                 unsigned min_mhz,
                                                                                 unsigned max_mhz) {
  std::lock_guard lock(g_mu);
  if (nvmlReturn_t rc = CheckDevice(device)) return rc;
  nvmlReturn_t rc = NoPermission() ? kNoPermission : kSuccess;
  if (rc == kSuccess) rc = std::atoi(Env("FAKE_NVML_GPU_LOCK_RC", "0").c_str());
  Log("lock_gpu " + std::to_string(min_mhz) + " " + std::to_string(max_mhz) +
      " rc=" + std::to_string(rc) + Watch());
  if (rc == kSuccess) g_locked_sm = max_mhz;
  return rc;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceResetGpuLockedClocks(Device* device) {
  std::lock_guard lock(g_mu);
  if (nvmlReturn_t rc = CheckDevice(device)) return rc;
  nvmlReturn_t rc = NoPermission() ? kNoPermission : kSuccess;
  Log("reset_gpu rc=" + std::to_string(rc));
  if (rc == kSuccess) g_locked_sm = 0;
  return rc;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceSetMemoryLockedClocks(
    Device* device, unsigned min_mhz, unsigned max_mhz) {
  std::lock_guard lock(g_mu);
  if (nvmlReturn_t rc = CheckDevice(device)) return rc;
  nvmlReturn_t rc = MemRc();
  Log("lock_mem " + std::to_string(min_mhz) + " " + std::to_string(max_mhz) +
      " rc=" + std::to_string(rc) + Watch());
  if (rc == kSuccess) g_locked_mem = max_mhz;
  return rc;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceResetMemoryLockedClocks(
    Device* device) {
  std::lock_guard lock(g_mu);
  if (nvmlReturn_t rc = CheckDevice(device)) return rc;
  nvmlReturn_t rc = MemRc();
  Log("reset_mem rc=" + std::to_string(rc));
  if (rc == kSuccess) g_locked_mem = 0;
  return rc;
}

}  // extern "C"
