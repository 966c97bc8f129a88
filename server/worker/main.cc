// ablation-worker: the per-GPU worker process of ablationd. Speaks framed protobuf (ipc.h) on
// stdin/stdout: a Hello first, then one reply per request; exits 0 on EOF of stdin. Logs go to
// stderr only. Exits non-zero after a sticky CUDA error so that the daemon starts a fresh one.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <unistd.h>

#include <thread>

#include "ablation/v1/worker.pb.h"
#include "server/protocol/framing.h"
#include "server/worker/profile.h"
#include "server/worker/worker.h"

namespace {

// Exit codes the daemon may tell apart (all but 0 mean "start a fresh worker").
constexpr int kExitUsage = 2;
constexpr int kExitProtocol = 3;     // a malformed frame or a dead reply pipe
constexpr int kExitStickyError = 4;  // the CUDA context is unusable
constexpr int kExitOrphaned = 5;     // the daemon that started us is gone

// The daemon asks for SIGKILL at its death (PR_SET_PDEATHSIG, set before exec); this is the
// second line for a worker started otherwise, or whose parent thread ended: a worker whose
// parent changed (re-parented to init or a subreaper) exits at once, even in the middle of a
// measurement, instead of holding the GPU for nobody.
void ExitWithParent() {
  const pid_t parent = ::getppid();
  if (parent == 1) ::_exit(kExitOrphaned);
  std::thread([parent] {
    for (;;) {
      if (::getppid() != parent) {
        std::fprintf(stderr, "ablation-worker: the daemon (pid %d) is gone; exiting\n", parent);
        ::_exit(kExitOrphaned);
      }
      ::usleep(200 * 1000);
    }
  }).detach();
}

void Usage(FILE* f) {
  std::fprintf(f,
               "usage: ablation-worker --device N\n"
               "\n"
               "The per-GPU worker process of ablationd; started by the daemon, not by hand.\n"
               "Reads length-prefixed ablation.worker.v1.WorkerRequest messages on stdin and\n"
               "writes WorkerReply messages on stdout (a Hello first). Exits 0 at EOF of stdin.\n"
               "\n"
               "  --device N   CUDA device index to own (default 0)\n"
               "  --help       this text\n"
               "\n"
               "ablation-worker --profile-once --variant V --shape MxNxK [--dtype D] [--device N]\n"
               "[--warmup W] [--seed S] [--user-code FILE] launches V W times, then once more for\n"
               "a profiler (ncu) watching the process, and exits (server/worker/profile.h); a\n"
               "user variant's build comes in FILE (a serialized UserCode).\n"
               "\n"
               "Test only: ABLATION_WORKER_TEST_FAULT=crash-on-variant:NAME aborts (and\n"
               "hang-on-variant:NAME hangs) when asked to measure NAME.\n");
}

bool ParseInt(const char* s, int* out) {
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (end == s || *end != '\0' || v < 0 || v > 1 << 20) return false;
  *out = int(v);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ablation::worker;
  // The one-shot mode the daemon's profiler runs under ncu: no protocol, no Hello.
  if (argc > 1 && !std::strcmp(argv[1], "--profile-once")) return ProfileOnceMain(argc, argv);
  int device = 0;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (!std::strcmp(a, "--help") || !std::strcmp(a, "-h")) {
      Usage(stdout);
      return 0;
    }
    if (!std::strcmp(a, "--device") && i + 1 < argc) {
      if (!ParseInt(argv[++i], &device)) {
        std::fprintf(stderr, "ablation-worker: --device wants a non-negative integer, got \"%s\"\n",
                     argv[i]);
        return kExitUsage;
      }
      continue;
    }
    if (!std::strncmp(a, "--device=", 9)) {
      if (!ParseInt(a + 9, &device)) {
        std::fprintf(stderr, "ablation-worker: --device wants a non-negative integer, got \"%s\"\n",
                     a + 9);
        return kExitUsage;
      }
      continue;
    }
    std::fprintf(stderr, "ablation-worker: unknown argument \"%s\"\n", a);
    Usage(stderr);
    return kExitUsage;
  }

  ExitWithParent();
  // A dead daemon must show as a write error, not kill us silently mid-reply.
  std::signal(SIGPIPE, SIG_IGN);
  // The protocol owns the original stdout; fd 1 then points at stderr, so that anything else
  // printing to stdout (device printf, a library's diagnostics) cannot corrupt the framing.
  const int out_fd = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
  if (out_fd < 0 || ::dup2(2, 1) < 0) {
    std::perror("ablation-worker: setting up the reply pipe");
    return kExitProtocol;
  }

  Worker worker;
  ablation::worker::v1::WorkerReply hello;
  *hello.mutable_hello() = worker.Open(device);
  std::string err = ablation::protocol::WriteMessage(out_fd, hello);
  if (!err.empty()) {
    std::fprintf(stderr, "ablation-worker: writing Hello: %s\n", err.c_str());
    return kExitProtocol;
  }

  for (;;) {
    ablation::worker::v1::WorkerRequest request;
    ablation::protocol::ReadStatus st = ablation::protocol::ReadMessage(0, &request, &err);
    if (st == ablation::protocol::ReadStatus::kEof) return 0;
    if (st == ablation::protocol::ReadStatus::kError) {
      std::fprintf(stderr, "ablation-worker: reading a request: %s\n", err.c_str());
      return kExitProtocol;
    }
    ablation::worker::v1::WorkerReply reply;
    switch (request.request_case()) {
      case ablation::worker::v1::WorkerRequest::kMeasure:
        *reply.mutable_measure() = worker.Measure(request.measure());
        break;
      case ablation::worker::v1::WorkerRequest::kVerify:
        *reply.mutable_verify() = worker.Verify(request.verify());
        break;
      case ablation::worker::v1::WorkerRequest::kDescribe:
        *reply.mutable_describe() = worker.Describe(request.describe());
        break;
      case ablation::worker::v1::WorkerRequest::kRelease:
        *reply.mutable_release() = worker.Release(request.release());
        break;
      default:
        // An empty request (a newer daemon's kind we do not know): answer so the daemon never
        // waits forever, as a failed measurement.
        reply.mutable_measure()->set_ok(false);
        reply.mutable_measure()->set_error("unknown request kind");
        break;
    }
    err = ablation::protocol::WriteMessage(out_fd, reply);
    if (!err.empty()) {
      std::fprintf(stderr, "ablation-worker: writing a reply: %s\n", err.c_str());
      return kExitProtocol;
    }
    if (worker.fatal()) {
      std::fprintf(stderr, "ablation-worker: exiting after a sticky CUDA error (%s)\n",
                   worker.fatal_error().c_str());
      // No teardown: destroying handles and freeing memory in a broken context can block, and
      // the driver releases everything when the process ends.
      ::_exit(kExitStickyError);
    }
  }
}
