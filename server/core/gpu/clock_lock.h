// Clock locking that is always undone.
//
// A run with clocks.mode=lock holds a ScopedClockLock from before its first measurement to after
// its last; its destructor resets the clocks, so every way out of the run's scope (end, cancel,
// error, an exception, a dead worker: the daemon owns the clocks, not the worker) resets them.
// SIGTERM/SIGINT: the daemon's shutdown path ends the runs and so destroys the lock; nothing is
// done in the signal handler itself. A fatal signal (abort, SIGSEGV, SIGBUS, SIGFPE, SIGILL)
// cannot unwind: InstallFatalSignalClockReset's handler resets every lock held at that moment,
// then re-raises the signal. That is best effort: NVML is not async-signal-safe (a crash inside
// NVML or malloc may deadlock the reset; an alarm ends the process after 2 s then), and a stack
// overflow leaves the handler no stack. SIGKILL or a power cut cannot run anything: for all of
// these the lock is written to a journal file (and fsynced) BEFORE it is taken. The daemon's clock
// guard (clock_guard.h), a process of its own, resets what the journal lists of its daemon as soon
// as the daemon has ended, however it ended; the next daemon start (or `ablationd --reset-clocks`,
// e.g. as a systemd ExecStopPost=) resets every lock the journal still lists (a power cut, a
// guard that was killed too).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "server/core/base/status.h"
#include "server/core/gpu/nvml.h"

namespace ablation::core {

/// One lock in force (or about to be): what to reset after a crash.
struct JournalEntry {
  std::string uuid;
  int sm_mhz = 0;   ///< 0: SM clock not locked
  int mem_mhz = 0;  ///< 0: memory clock not locked
  int64_t pid = 0;  ///< the daemon that took it
  int64_t time_ms = 0;
};

/// The file of locks in force, one line per GPU:
///   GPU-8c1f...  sm=1980 mem=3201 pid=4242 time_ms=1718000000000
/// rewritten whole (temp file, fsync, rename, fsync of the directory) on each change, so that a
/// crash leaves either the old or the new list, never half of one. Thread-safe within a process,
/// and between processes (the daemon, its clock guard, a restarted daemon, --reset-clocks): each
/// read-modify-write holds an flock on "<path>.lock".
class ClockLockJournal {
 public:
  /// The default place: next to the database, "<db_path>.clocks".
  static std::string DefaultPath(const std::string& db_path) { return db_path + ".clocks"; }

  explicit ClockLockJournal(std::string path) : path_(std::move(path)) {}
  const std::string& path() const { return path_; }

  /// Adds (or replaces) the entry of `uuid` and makes it durable. Call BEFORE locking.
  Status RecordIntent(const std::string& uuid, int sm_mhz, int mem_mhz);
  /// Removes the entry of `uuid`. Call AFTER a successful reset.
  Status Clear(const std::string& uuid);
  /// The entries now listed. A missing file is an empty list; a malformed line is an error.
  Status Read(std::vector<JournalEntry>* entries);

  /// Resets the clocks of every listed GPU and removes the entries that were reset, or whose GPU
  /// is no longer there. Entries whose reset failed stay, for the next try; the error names them.
  /// `reset` (optional) receives the UUIDs that were reset. With no NVML (null), fails if the
  /// journal lists anything, and keeps it. `only_pid` (not 0): only the entries that process
  /// recorded (the clock guard's reset of its daemon's locks); the others are left as they are.
  Status ResetAll(Nvml* nvml, std::vector<std::string>* reset = nullptr, int64_t only_pid = 0);

 private:
  Status ReadLocked(std::vector<JournalEntry>* entries);
  Status WriteLocked(const std::vector<JournalEntry>& entries);

  std::string path_;
  std::mutex mu_;
};

/// Installs the fatal-signal handler (SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL) that resets the
/// clock locks ScopedClockLock holds at that moment (best effort, see above), says so on stderr
/// and re-raises the signal with its default action (core dump and all). Once per process.
void InstallFatalSignalClockReset();

/// The resolved clocks of a lock request.
struct ClockTarget {
  int sm_mhz = 0;   ///< 0: leave the SM clock alone
  int mem_mhz = 0;  ///< 0: leave the memory clock alone
};

/// Resolves clocks.sm_mhz / clocks.mem_mhz specs ("" = leave alone, "base", "max" or a number
/// of MHz) against what the device supports. A number that is not a supported clock is refused
/// (InvalidArgument naming the field and listing the nearest supported values) rather than
/// rounded: NVML would silently pick a nearby clock and the run would record a lie.
Status ResolveClockSpecs(Nvml& nvml, const std::string& uuid, const std::string& sm_spec,
                         const std::string& mem_spec, ClockTarget* out);

/// The same, from given tables (pure: for tests and for validating a request early).
/// "max" is the highest supported clock; "base" the default application clock, snapped to the
/// nearest supported one.
Status ResolveClockSpecs(const SupportedClocks& supported, const ClockPair& base,
                         const std::string& sm_spec, const std::string& mem_spec, ClockTarget* out);

/// The policy as recorded with a run: "observe", or "lock sm=1980 mem=3201" (an unlocked clock
/// is left out: "lock sm=1980").
std::string ClockPolicyString(const ClockTarget* locked);

/// Holds a clock lock on one GPU; its destruction resets it (RAII).
class ScopedClockLock {
 public:
  /// Resolves the specs, records the intent in the journal (durably), then locks. On any failure
  /// nothing stays locked and the journal is as before; no permission is FailedPrecondition with
  /// kNoPermissionSentence. Never falls back to observing silently.
  static Status Acquire(Nvml& nvml, ClockLockJournal& journal, const std::string& uuid,
                        const std::string& sm_spec, const std::string& mem_spec,
                        std::unique_ptr<ScopedClockLock>* out);

  /// Resets unless already released; a failure is logged (the journal keeps the entry, so the
  /// next start retries).
  ~ScopedClockLock();
  ScopedClockLock(const ScopedClockLock&) = delete;
  ScopedClockLock& operator=(const ScopedClockLock&) = delete;

  /// Resets the clocks now and clears the journal entry; returns the reset's status. Later
  /// calls (and the destructor) do nothing and return Ok.
  Status Release();

  const std::string& uuid() const { return uuid_; }
  const ClockTarget& target() const { return target_; }
  /// "lock sm=... mem=...", for Run.clock_policy.
  std::string PolicyString() const { return ClockPolicyString(&target_); }

 private:
  ScopedClockLock(Nvml& nvml, ClockLockJournal& journal, std::string uuid, ClockTarget target,
                  int held_slot)
      : nvml_(nvml),
        journal_(journal),
        uuid_(std::move(uuid)),
        target_(target),
        held_slot_(held_slot) {}

  Nvml& nvml_;
  ClockLockJournal& journal_;
  std::string uuid_;
  ClockTarget target_;
  bool released_ = false;
  int held_slot_ = -1;  ///< its place in the fatal-signal handler's table; -1: none
};

}  // namespace ablation::core
