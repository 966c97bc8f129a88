#include "server/core/gpu/clock_lock.h"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ablation::core {

namespace {

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Status Errno(const std::string& what, const std::string& path) {
  return {Code::kInternal, what + " " + path + ": " + std::strerror(errno)};
}

// fsync of a path opened read-only: enough for a file's data and for a directory's entries.
bool SyncPath(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

std::string DirOf(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

// The journal's lock between processes, held for one read-modify-write: an flock on
// "<journal>.lock" (a file of its own, because the journal itself is replaced by rename). When the
// lock file cannot be made (a read-only directory), the caller goes on unlocked: a write there
// fails anyway, with its own error.
class JournalFileLock {
 public:
  explicit JournalFileLock(const std::string& journal)
      : fd_(::open((journal + ".lock").c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0600)) {
    if (fd_ >= 0)
      while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
      }
  }
  ~JournalFileLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the flock
  }
  JournalFileLock(const JournalFileLock&) = delete;
  JournalFileLock& operator=(const JournalFileLock&) = delete;

 private:
  int fd_;
};

bool ParseInt(const std::string& text, int64_t* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

// ---- ClockLockJournal

Status ClockLockJournal::ReadLocked(std::vector<JournalEntry>* entries) {
  entries->clear();
  std::ifstream in(path_);
  if (!in) {
    if (errno == ENOENT || !std::filesystem::exists(path_)) return Status::Ok();
    return Errno("cannot read the clock-lock journal", path_);
  }
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    JournalEntry e;
    fields >> e.uuid;
    std::string field;
    bool ok = !e.uuid.empty();
    while (ok && fields >> field) {
      auto eq = field.find('=');
      int64_t v = 0;
      if (eq == std::string::npos || !ParseInt(field.substr(eq + 1), &v)) {
        ok = false;
        break;
      }
      std::string key = field.substr(0, eq);
      if (key == "sm") {
        e.sm_mhz = int(v);
      } else if (key == "mem") {
        e.mem_mhz = int(v);
      } else if (key == "pid") {
        e.pid = v;
      } else if (key == "time_ms") {
        e.time_ms = v;
      }  // unknown keys: written by a newer daemon; the uuid is what matters
    }
    if (!ok) {
      return {Code::kInternal, "clock-lock journal " + path_ + " line " + std::to_string(line_no) +
                                   " is malformed: '" + line + "'"};
    }
    entries->push_back(e);
  }
  return Status::Ok();
}

Status ClockLockJournal::WriteLocked(const std::vector<JournalEntry>& entries) {
  if (entries.empty()) {
    // No locks in force: no file, so that its mere presence means "something to reset".
    if (::unlink(path_.c_str()) != 0 && errno != ENOENT) {
      return Errno("cannot remove the clock-lock journal", path_);
    }
    SyncPath(DirOf(path_));
    return Status::Ok();
  }
  std::string tmp = path_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return Errno("cannot write the clock-lock journal", tmp);
    out << "# GPU clock locks taken by ablationd and not yet reset; `ablationd --reset-clocks`\n"
           "# resets them (the daemon also does at start). One line per GPU.\n";
    for (const auto& e : entries) {
      out << e.uuid << " sm=" << e.sm_mhz << " mem=" << e.mem_mhz << " pid=" << e.pid
          << " time_ms=" << e.time_ms << "\n";
    }
    out.flush();
    if (!out) return Errno("cannot write the clock-lock journal", tmp);
  }
  // Durable before the caller goes on to lock: data, then the rename, then the directory entry.
  if (!SyncPath(tmp)) return Errno("cannot fsync the clock-lock journal", tmp);
  if (::rename(tmp.c_str(), path_.c_str()) != 0) {
    return Errno("cannot rename the clock-lock journal to", path_);
  }
  if (!SyncPath(DirOf(path_))) return Errno("cannot fsync the directory of", path_);
  return Status::Ok();
}

Status ClockLockJournal::RecordIntent(const std::string& uuid, int sm_mhz, int mem_mhz) {
  std::lock_guard lock(mu_);
  JournalFileLock file_lock(path_);
  std::vector<JournalEntry> entries;
  if (Status s = ReadLocked(&entries); !s.ok()) return s;
  std::erase_if(entries, [&](const JournalEntry& e) { return e.uuid == uuid; });
  entries.push_back({uuid, sm_mhz, mem_mhz, int64_t(::getpid()), WallMs()});
  return WriteLocked(entries);
}

Status ClockLockJournal::Clear(const std::string& uuid) {
  std::lock_guard lock(mu_);
  JournalFileLock file_lock(path_);
  std::vector<JournalEntry> entries;
  if (Status s = ReadLocked(&entries); !s.ok()) return s;
  if (std::erase_if(entries, [&](const JournalEntry& e) { return e.uuid == uuid; }) == 0) {
    return Status::Ok();
  }
  return WriteLocked(entries);
}

Status ClockLockJournal::Read(std::vector<JournalEntry>* entries) {
  std::lock_guard lock(mu_);
  JournalFileLock file_lock(path_);
  return ReadLocked(entries);
}

Status ClockLockJournal::ResetAll(Nvml* nvml, std::vector<std::string>* reset, int64_t only_pid) {
  std::lock_guard lock(mu_);
  JournalFileLock file_lock(path_);
  if (reset) reset->clear();
  std::vector<JournalEntry> listed, entries, kept;
  if (Status s = ReadLocked(&listed); !s.ok()) return s;
  for (const auto& e : listed) (only_pid == 0 || e.pid == only_pid ? entries : kept).push_back(e);
  if (entries.empty()) return Status::Ok();
  if (!nvml) {
    return FailedPrecondition("the clock-lock journal " + path_ + " lists " +
                              std::to_string(entries.size()) +
                              " locked GPU(s) but NVML is not available to reset them");
  }
  const size_t others = kept.size();
  std::string errors;
  for (const auto& e : entries) {
    Status s = nvml->ResetClocks(e.uuid);
    if (s.ok()) {
      if (reset) reset->push_back(e.uuid);
      spdlog::warn(
          "reset the clocks of {} (sm={} mem={} locked by pid {}), left by a daemon "
          "that did not reset them",
          e.uuid, e.sm_mhz, e.mem_mhz, e.pid);
    } else if (s.code() == Code::kNotFound) {
      // The GPU is gone (removed, or the journal came from another machine); a driver reload
      // resets clocks anyway, and keeping the entry would fail every start from now on.
      spdlog::warn("clock-lock journal lists {} which NVML does not find; dropping it", e.uuid);
    } else {
      kept.push_back(e);
      errors += (errors.empty() ? "" : "; ") + e.uuid + ": " + s.message();
    }
  }
  if (Status s = WriteLocked(kept); !s.ok()) return s;
  if (!errors.empty()) {
    return {kept.size() - others == entries.size() ? Code::kFailedPrecondition : Code::kInternal,
            "cannot reset locked clocks (" + errors + "); they stay in " + path_};
  }
  return Status::Ok();
}

// ---- Resolution of clock specs

namespace {

// The supported values nearest to `mhz`: the one below and the one above (for a message).
std::string Nearest(const std::vector<int>& desc, int mhz) {
  std::vector<int> picks;
  int below = -1, above = -1;
  for (int v : desc) {
    if (v <= mhz && (below < 0 || v > below)) below = v;
    if (v >= mhz && (above < 0 || v < above)) above = v;
  }
  std::string out;
  for (int v : {below, above}) {
    if (v < 0 || std::find(picks.begin(), picks.end(), v) != picks.end()) continue;
    picks.push_back(v);
    out += (out.empty() ? "" : ", ") + std::to_string(v);
  }
  return out;
}

int SnapNearest(const std::vector<int>& desc, int mhz) {
  int best = desc.front();
  for (int v : desc) {
    if (std::abs(v - mhz) < std::abs(best - mhz) ||
        (std::abs(v - mhz) == std::abs(best - mhz) && v < best)) {
      best = v;
    }
  }
  return best;
}

Status ResolveOne(const std::string& field, const char* what, const std::string& spec,
                  const std::vector<int>& desc, int base, int* out) {
  *out = 0;
  if (spec.empty()) return Status::Ok();
  if (desc.empty()) {
    return FailedPrecondition(field + ": the device lists no supported " + what + " clocks");
  }
  if (spec == "max") {
    // The table's top, not nvmlDeviceGetMaxClockInfo: that may exceed what a lock accepts.
    *out = *std::max_element(desc.begin(), desc.end());
    return Status::Ok();
  }
  if (spec == "base") {
    if (base <= 0) {
      return FailedPrecondition(field +
                                ": the device does not report a base (default "
                                "application) " +
                                what + " clock; give a number of MHz");
    }
    *out = SnapNearest(desc, base);
    return Status::Ok();
  }
  int64_t mhz = 0;
  if (!ParseInt(spec, &mhz) || mhz <= 0) {
    return InvalidArgument(field + ": '" + spec + "' is neither a number of MHz, base nor max");
  }
  if (std::find(desc.begin(), desc.end(), int(mhz)) == desc.end()) {
    return InvalidArgument(field + ": " + spec + " MHz is not a supported " + what +
                           " clock of this GPU; nearest supported: " + Nearest(desc, int(mhz)) +
                           " (or base, max)");
  }
  *out = int(mhz);
  return Status::Ok();
}

}  // namespace

Status ResolveClockSpecs(const SupportedClocks& supported, const ClockPair& base,
                         const std::string& sm_spec, const std::string& mem_spec,
                         ClockTarget* out) {
  *out = {};
  if (sm_spec.empty() && mem_spec.empty()) {
    return InvalidArgument(
        "clocks: mode lock needs clocks.sm_mhz and/or clocks.mem_mhz (a number of MHz, base or "
        "max)");
  }
  if (Status s = ResolveOne("clocks.mem_mhz", "memory", mem_spec, supported.mem_mhz, base.mem_mhz,
                            &out->mem_mhz);
      !s.ok()) {
    return s;
  }
  // Supported SM clocks depend on the memory clock: those at the locked one, or at the highest
  // (the one the board runs at under load) when memory is left alone.
  int mem_for_sm = out->mem_mhz;
  if (mem_for_sm <= 0 && !supported.mem_mhz.empty()) {
    mem_for_sm = *std::max_element(supported.mem_mhz.begin(), supported.mem_mhz.end());
  }
  auto it = supported.sm_mhz_by_mem.find(mem_for_sm);
  static const std::vector<int> kNone;
  const std::vector<int>& sm_list = it == supported.sm_mhz_by_mem.end() ? kNone : it->second;
  return ResolveOne("clocks.sm_mhz", "SM", sm_spec, sm_list, base.sm_mhz, &out->sm_mhz);
}

Status ResolveClockSpecs(Nvml& nvml, const std::string& uuid, const std::string& sm_spec,
                         const std::string& mem_spec, ClockTarget* out) {
  SupportedClocks supported;
  if (Status s = nvml.GetSupportedClocks(uuid, &supported); !s.ok()) return s;
  // Base is needed only for that word; a device that lacks it fails there, with a message.
  ClockPair base;
  if (!nvml.BaseClocks(uuid, &base).ok()) base = {};
  return ResolveClockSpecs(supported, base, sm_spec, mem_spec, out);
}

std::string ClockPolicyString(const ClockTarget* locked) {
  if (!locked || (locked->sm_mhz <= 0 && locked->mem_mhz <= 0)) return "observe";
  std::string s = "lock";
  if (locked->sm_mhz > 0) s += " sm=" + std::to_string(locked->sm_mhz);
  if (locked->mem_mhz > 0) s += " mem=" + std::to_string(locked->mem_mhz);
  return s;
}

// ---- The locks held, for a fatal signal's handler

namespace {

// A fixed table (no allocation, no lock in the handler): a slot is free (0), being filled or
// emptied (1), held (2), or being reset by the handler (3). The uuid is written before the slot
// is marked held and read only while it is, so the handler never sees half of one.
struct HeldLock {
  std::atomic<int> state{0};
  Nvml* nvml = nullptr;
  std::string uuid;
};
constexpr int kHeldSlots = 16;
HeldLock g_held[kHeldSlots];

int HoldSlot(Nvml& nvml, const std::string& uuid) {
  for (int i = 0; i < kHeldSlots; ++i) {
    int expected = 0;
    if (g_held[i].state.compare_exchange_strong(expected, 1)) {
      g_held[i].nvml = &nvml;
      g_held[i].uuid = uuid;
      g_held[i].state.store(2, std::memory_order_release);
      return i;
    }
  }
  return -1;  // more locks than slots (GPUs): the journal still covers the rest
}

void FreeSlot(int slot) {
  if (slot < 0) return;
  int expected = 2;
  if (!g_held[slot].state.compare_exchange_strong(expected, 1)) return;  // the handler has it
  g_held[slot].uuid.clear();
  g_held[slot].nvml = nullptr;
  g_held[slot].state.store(0, std::memory_order_release);
}

void WriteStderr(const char* text) {
  ssize_t ignored = ::write(2, text, std::strlen(text));
  (void)ignored;
}

extern "C" void ResetClocksOnFatalSignal(int sig) {
  // The handler runs once per signal (SA_RESETHAND); a reset that hangs ends at the alarm.
  ::alarm(2);
  int reset = 0;
  for (HeldLock& held : g_held) {
    int expected = 2;
    if (!held.state.compare_exchange_strong(expected, 3, std::memory_order_acquire)) continue;
    if (held.nvml && held.nvml->ResetClocks(held.uuid).ok()) ++reset;
  }
  char line[160];
  std::snprintf(line, sizeof line,
                "ablationd: fatal signal %d (%s): %d clock lock(s) reset before exiting\n", sig,
                strsignal(sig), reset);
  WriteStderr(line);
  ::raise(sig);  // the default action now (SA_RESETHAND), unblocked (SA_NODEFER)
}

}  // namespace

void InstallFatalSignalClockReset() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action {};
    action.sa_handler = ResetClocksOnFatalSignal;
    action.sa_flags = SA_RESETHAND | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) ::sigaction(sig, &action, nullptr);
  });
}

// ---- ScopedClockLock

Status ScopedClockLock::Acquire(Nvml& nvml, ClockLockJournal& journal, const std::string& uuid,
                                const std::string& sm_spec, const std::string& mem_spec,
                                std::unique_ptr<ScopedClockLock>* out) {
  out->reset();
  ClockTarget target;
  if (Status s = ResolveClockSpecs(nvml, uuid, sm_spec, mem_spec, &target); !s.ok()) return s;
  // Intent first: if the daemon dies between the lock and the next line, the journal knows.
  if (Status s = journal.RecordIntent(uuid, target.sm_mhz, target.mem_mhz); !s.ok()) {
    return {s.code(), "not locking clocks: " + s.message()};
  }
  // Known to the fatal-signal handler before it is taken, as the journal knows it.
  const int slot = HoldSlot(nvml, uuid);
  if (Status s = nvml.LockClocks(uuid, target.sm_mhz, target.mem_mhz); !s.ok()) {
    FreeSlot(slot);
    // LockClocks undid any half of the lock it took; nothing is locked.
    if (Status c = journal.Clear(uuid); !c.ok()) {
      spdlog::warn("after a failed clock lock: {}", c.message());
    }
    return s;
  }
  out->reset(new ScopedClockLock(nvml, journal, uuid, target, slot));
  return Status::Ok();
}

Status ScopedClockLock::Release() {
  if (released_) return Status::Ok();
  released_ = true;
  Status s = nvml_.ResetClocks(uuid_);
  FreeSlot(held_slot_);  // after the reset: a crash during it still has the handler reset it
  if (!s.ok()) {
    // Keep the journal entry: the next daemon start (or --reset-clocks) tries again.
    return {s.code(), "cannot reset the clocks of " + uuid_ + ": " + s.message() +
                          " (the lock stays in " + journal_.path() + " for the next start)"};
  }
  if (Status c = journal_.Clear(uuid_); !c.ok()) {
    // The clocks are reset; a stale entry only causes a harmless second reset at next start.
    spdlog::warn("clocks of {} reset, but {}", uuid_, c.message());
  }
  return Status::Ok();
}

ScopedClockLock::~ScopedClockLock() {
  if (Status s = Release(); !s.ok()) spdlog::error("{}", s.message());
}

}  // namespace ablation::core
