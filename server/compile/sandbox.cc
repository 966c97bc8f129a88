#include "server/compile/sandbox.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace ablation::compile {
namespace {

// Landlock's interface as of Linux 6.12 (ABI 6), declared here because Debian 12's headers stop
// at ABI 2: the ruleset grew a network and a scope field, the file system two more rights.
struct LandlockRulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};
struct __attribute__((packed)) LandlockPathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};
constexpr uint64_t kFsReadFile = 1ull << 2, kFsReadDir = 1ull << 3;
constexpr uint64_t kFsAbi1 = (1ull << 13) - 1;  // execute .. make_sym
constexpr uint64_t kFsRefer = 1ull << 13, kFsTruncate = 1ull << 14, kFsIoctlDev = 1ull << 15;
constexpr uint64_t kNetBindTcp = 1ull << 0, kNetConnectTcp = 1ull << 1;
constexpr uint64_t kScopeAbstractUnixSocket = 1ull << 0, kScopeSignal = 1ull << 1;
constexpr uint32_t kCreateRulesetVersion = 1u << 0;
constexpr int kRulePathBeneath = 1;

std::string Failed(const std::string& what) { return what + ": " + std::strerror(errno); }

bool WriteText(const char* path, const std::string& text) {
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) == ssize_t(text.size());
  ::close(fd);
  return ok;
}

std::string DropToUser(uid_t uid, gid_t gid) {
  if (::setgroups(0, nullptr) != 0) return Failed("setgroups");
  if (::setresgid(gid, gid, gid) != 0) return Failed("setresgid " + std::to_string(gid));
  if (::setresuid(uid, uid, uid) != 0) return Failed("setresuid " + std::to_string(uid));
  return "";
}

// Inside a user namespace the process holds every capability of it: dropped once the mounts are
// made, bounding set first (which needs CAP_SETPCAP), so that nothing can take them back.
std::string DropCapabilities() {
  for (int cap = 0; cap <= 63; ++cap)
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
      return Failed("dropping capability " + std::to_string(cap) + " from the bounding set");
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capset, &header, data) != 0) return Failed("capset");
  return "";
}

// The flags a bind mount keeps when remounted read-only: in a user namespace those of the mount
// it was made from are locked, and a remount that would clear one is refused.
unsigned long LockedFlags(const std::string& path) {
  struct statvfs s {};
  if (::statvfs(path.c_str(), &s) != 0) return 0;
  unsigned long flags = 0;
  if (s.f_flag & ST_NOSUID) flags |= MS_NOSUID;
  if (s.f_flag & ST_NODEV) flags |= MS_NODEV;
  if (s.f_flag & ST_NOEXEC) flags |= MS_NOEXEC;
  if (s.f_flag & ST_NOATIME) flags |= MS_NOATIME;
  if (s.f_flag & ST_NODIRATIME) flags |= MS_NODIRATIME;
  if (s.f_flag & ST_RELATIME) flags |= MS_RELATIME;
  return flags;
}

// The new root: an empty tmpfs mounted on the working folder (the daemon's private scratch
// folder), the allowed folders bound read-only at their own paths in it, then pivoted to and
// made read-only itself. The old root is detached: nothing else of the host's files is reachable.
std::string BuildRoot(const std::vector<std::string>& read_dirs) {
  std::error_code ec;
  const std::string root = std::filesystem::current_path(ec).string();
  if (ec || root.empty() || root == "/") return "no scratch working folder to build the root on";
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return Failed("making the mounts private");
  if (::mount("tmpfs", root.c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
              "size=1m,nr_inodes=1024,mode=0755") != 0)
    return Failed("mounting the new root");
  for (const std::string& dir : read_dirs) {
    const std::string target = root + dir;
    std::filesystem::create_directories(target, ec);
    if (ec) return "creating " + target + ": " + ec.message();
    if (::mount(dir.c_str(), target.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
      return Failed("binding " + dir);
    const unsigned long flags =
        MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | LockedFlags(dir);
    if (::mount(nullptr, target.c_str(), nullptr, flags, nullptr) != 0)
      return Failed("making " + dir + " read-only");
  }
  const std::string old_root = root + "/.old-root";
  if (::mkdir(old_root.c_str(), 0700) != 0) return Failed("mkdir " + old_root);
  if (::syscall(SYS_pivot_root, root.c_str(), old_root.c_str()) != 0) return Failed("pivot_root");
  if (::chdir("/") != 0) return Failed("chdir /");
  if (::umount2("/.old-root", MNT_DETACH) != 0) return Failed("detaching the old root");
  if (::rmdir("/.old-root") != 0) return Failed("rmdir /.old-root");
  if (::mount(nullptr, "/", nullptr, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
              nullptr) != 0)
    return Failed("making the new root read-only");
  return "";
}

// Namespaces of its own: as root directly, else (or where root may not: a container without
// CAP_SYS_ADMIN) in a user namespace, with the unprivileged user taken first where the daemon
// is root so that the namespace's root is that user outside. "" when made; the report says how.
std::string EnterNamespaces(const SandboxOptions& options, SandboxReport* report) {
  const int kinds = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS;
  const bool root = ::geteuid() == 0;
  if (root && ::unshare(kinds) == 0) {
    if (std::string why = BuildRoot(options.read_dirs); !why.empty()) return why;
    report->mount_namespace = true;
    return options.uid == uid_t(-1) ? "" : DropToUser(options.uid, options.gid);
  }
  if (root && options.uid != uid_t(-1))
    if (std::string why = DropToUser(options.uid, options.gid); !why.empty()) return why;
  const uid_t uid = ::geteuid();
  const gid_t gid = ::getegid();
  if (::unshare(CLONE_NEWUSER | kinds) != 0) {
    report->why = Failed("no namespaces (unshare)");
    return "";  // not fatal: Landlock may still confine the compile
  }
  report->user_namespace = true;
  report->uid = uid;  // the namespace's root is this user outside it
  if (!WriteText("/proc/self/setgroups", "deny") ||
      !WriteText("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1\n") ||
      !WriteText("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1\n"))
    return Failed("mapping the user namespace's ids");
  if (std::string why = BuildRoot(options.read_dirs); !why.empty()) return why;
  report->mount_namespace = true;
  return DropCapabilities();
}

// Reading the allowed folders and nothing else, writing nothing, no TCP, and (ABI 6) no signals
// or abstract Unix sockets beyond the sandbox. Returns the ABI applied (0: the kernel has none).
int ApplyLandlock(const std::vector<std::string>& read_dirs, std::string* why) {
  const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  if (abi <= 0) return 0;
  LandlockRulesetAttr attr{};
  attr.handled_access_fs = kFsAbi1 | (abi >= 2 ? kFsRefer : 0) | (abi >= 3 ? kFsTruncate : 0) |
                           (abi >= 5 ? kFsIoctlDev : 0);
  size_t size = sizeof attr.handled_access_fs;
  if (abi >= 4) {
    attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
    size = offsetof(LandlockRulesetAttr, scoped);
  }
  if (abi >= 6) {
    attr.scoped = kScopeAbstractUnixSocket | kScopeSignal;
    size = sizeof attr;
  }
  const int ruleset = int(::syscall(SYS_landlock_create_ruleset, &attr, size, 0));
  if (ruleset < 0) return *why = Failed("landlock_create_ruleset"), 0;
  for (const std::string& dir : read_dirs) {
    LandlockPathBeneathAttr rule{kFsReadFile | kFsReadDir, ::open(dir.c_str(), O_PATH | O_CLOEXEC)};
    const bool added = rule.parent_fd >= 0 &&
                       ::syscall(SYS_landlock_add_rule, ruleset, kRulePathBeneath, &rule, 0) == 0;
    if (rule.parent_fd >= 0) ::close(rule.parent_fd);
    if (!added) return ::close(ruleset), *why = Failed("a Landlock rule for " + dir), 0;
  }
  const bool restricted = ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
                          ::syscall(SYS_landlock_restrict_self, ruleset, 0) == 0;
  ::close(ruleset);
  if (!restricted) return *why = Failed("landlock_restrict_self"), 0;
  return int(abi);
}

// What a compile never needs, refused with EPERM (an error NVRTC reports, not a dead process):
// NVRTC runs the preprocessor, the front end and ptxas in this process (no exec, no fork: seen
// with strace), reads headers and writes its results to memory.
std::string ApplyFilter() {
  scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
  if (filter == nullptr) return "seccomp_init failed";
  const uint32_t refuse = SCMP_ACT_ERRNO(EPERM);
  static const char* const kRefused[] = {"socket",
                                         "socketpair",
                                         "connect",
                                         "bind",
                                         "listen",
                                         "accept",
                                         "accept4",
                                         "execve",
                                         "execveat",
                                         "fork",
                                         "vfork",
                                         "ptrace",
                                         "process_vm_readv",
                                         "process_vm_writev",
                                         "kcmp",
                                         "pidfd_open",
                                         "pidfd_getfd",
                                         "pidfd_send_signal",
                                         "mount",
                                         "umount2",
                                         "pivot_root",
                                         "chroot",
                                         "unshare",
                                         "setns",
                                         "open_tree",
                                         "move_mount",
                                         "fsopen",
                                         "fsmount",
                                         "fsconfig",
                                         "fspick",
                                         "mount_setattr",
                                         "keyctl",
                                         "add_key",
                                         "request_key",
                                         "bpf",
                                         "perf_event_open",
                                         "userfaultfd",
                                         "io_uring_setup",
                                         "io_uring_enter",
                                         "io_uring_register",
                                         "kexec_load",
                                         "kexec_file_load",
                                         "init_module",
                                         "finit_module",
                                         "delete_module",
                                         "reboot",
                                         "swapon",
                                         "swapoff",
                                         "acct",
                                         "quotactl",
                                         "open_by_handle_at",
                                         "name_to_handle_at",
                                         "fanotify_init",
                                         "ioperm",
                                         "iopl",
                                         "setsid",
                                         "setpgid",
                                         "landlock_create_ruleset"};
  int rc = 0;
  for (const char* name : kRefused) {
    const int nr = seccomp_syscall_resolve_name(name);
    if (nr != __NR_SCMP_ERROR) rc |= seccomp_rule_add(filter, refuse, nr, 0);
  }
  // Threads only: a clone without CLONE_THREAD is a new process. clone3 passes its flags in
  // memory a filter cannot read, so it answers ENOSYS and glibc falls back to clone.
  rc |= seccomp_rule_add(filter, refuse, SCMP_SYS(clone), 1,
                         SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
  rc |= seccomp_rule_add(filter, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  // Signals to itself only (abort raises one), never to another process of the same user.
  const scmp_datum_t self = scmp_datum_t(::getpid());
  rc |= seccomp_rule_add(filter, refuse, SCMP_SYS(kill), 1, SCMP_A0(SCMP_CMP_NE, self));
  rc |= seccomp_rule_add(filter, refuse, SCMP_SYS(tkill), 1, SCMP_A0(SCMP_CMP_NE, self));
  rc |= seccomp_rule_add(filter, refuse, SCMP_SYS(tgkill), 1, SCMP_A0(SCMP_CMP_NE, self));
  rc |= seccomp_attr_set(filter, SCMP_FLTATR_CTL_NNP, 1);
  if (rc == 0) rc = seccomp_load(filter);
  seccomp_release(filter);
  return rc == 0 ? ""
                 : "the system-call filter could not be loaded (" +
                       std::string(std::strerror(-rc)) + ")";
}

}  // namespace

std::string SandboxReport::Describe() const {
  std::string out = mount_namespace
                        ? (user_namespace ? "mount-namespace(user-namespace)" : "mount-namespace")
                        : "no-mount-namespace";
  out += landlock_abi > 0 ? " landlock=" + std::to_string(landlock_abi) : " no-landlock";
  out += seccomp ? " seccomp" : " no-seccomp";
  out += " uid=" + std::to_string(uid);
  out += mount_namespace ? " no-network" : "";
  return out;
}

SandboxReport ApplySandbox(const SandboxOptions& options) {
  SandboxReport report;
  auto fail = [&](const std::string& why) {
    report.ok = false;
    report.why = why;
    return report;
  };
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return fail(Failed("no_new_privs"));
  if (!options.namespaces) {
    report.why = "namespaces not asked for (--no-namespaces)";
  } else if (std::string why = EnterNamespaces(options, &report); !why.empty()) {
    return fail(why);
  }
  if (!report.mount_namespace && ::geteuid() == 0 && options.uid != uid_t(-1))
    if (std::string why = DropToUser(options.uid, options.gid); !why.empty()) return fail(why);
  const std::string no_namespace = report.why;
  std::string landlock_why;
  report.landlock_abi = ApplyLandlock(options.read_dirs, &landlock_why);
  if (!landlock_why.empty()) return fail(landlock_why);
  if (!report.mount_namespace && report.landlock_abi == 0)
    return fail("neither a mount namespace (" + no_namespace +
                ") nor Landlock (the kernel has none, or it is not enabled: "
                "/sys/kernel/security/lsm) can confine the compiler here");
  // Last of the credentials: a change of user clears the parent-death signal. Checked after it is
  // set: a daemon that died before this line would otherwise leave the compile running.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) return fail(Failed("PR_SET_PDEATHSIG"));
  if (options.parent > 0 && ::getppid() != options.parent)
    return fail("the daemon that started the compile is gone");
  if (std::string why = ApplyFilter(); !why.empty()) return fail(why);
  report.seccomp = true;
  if (!report.user_namespace) report.uid = ::geteuid();
  report.ok = true;
  report.why.clear();
  return report;
}

void ApplyLimits(int data_mb, int address_space_mb, int cpu_seconds, size_t max_output_bytes) {
  const auto limit = [](int resource, rlim_t value) {
    const rlimit l{value, value};
    ::setrlimit(resource, &l);
  };
  limit(RLIMIT_DATA, rlim_t(data_mb) << 20);
  limit(RLIMIT_AS, rlim_t(address_space_mb) << 20);
  limit(RLIMIT_CPU, rlim_t(cpu_seconds));
  limit(RLIMIT_CORE, 0);
  limit(RLIMIT_FSIZE, rlim_t(max_output_bytes));  // where stdout is a file (run by hand)
  limit(RLIMIT_NOFILE, 64);
  limit(RLIMIT_MEMLOCK, 0);
  limit(RLIMIT_MSGQUEUE, 0);
}

}  // namespace ablation::compile
