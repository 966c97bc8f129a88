#include "client/commands/cmd_kernel.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "absl/strings/escaping.h"
#include "client/output/escape.h"
#include "client/output/format.h"
#include "common/cubin_text.h"
#include "common/variant_names.h"

#include "client/cli/calls.h"
#include "client/cli/exit_codes.h"
#include "client/output/output.h"
#include "client/output/table.h"

namespace ablation::client {
namespace {

Table KernelsTable(const std::vector<v1::UserKernel>& kernels) {
  Table t;
  t.columns = {{"name", "name"},
               {"version", "version", Align::kRight},
               {"versions", "versions", Align::kRight},
               {"owner", "owner"},
               {"dtype", "dtype"},
               {"variants", "variants", Align::kRight},
               {"entry", "entry"},
               {"source_sha256", "source sha256"},
               {"description", "description"}};
  for (const v1::UserKernel& k : kernels)
    t.rows.push_back({k.name(), std::to_string(k.version()), std::to_string(k.versions_size()),
                      k.owner().empty() ? Cell("-", "") : Cell(k.owner()), k.dtype(),
                      std::to_string(k.variants_size()), k.entry(), k.source_sha256().substr(0, 12),
                      k.description()});
  return t;
}

Table BuildsTable(const v1::UserKernel& k) {
  Table t;
  t.columns = {{"variant", "variant"},
               {"arch", "arch"},
               {"registers", "registers", Align::kRight},
               {"spill_store_bytes", "spill stores", Align::kRight},
               {"spill_load_bytes", "spill loads", Align::kRight},
               {"static_smem_bytes", "static smem", Align::kRight},
               {"compiler", "compiler"},
               {"options", "options"}};
  for (const v1::KernelBuild& b : k.builds())
    t.rows.push_back(
        {b.variant(), b.arch(),
         b.registers() < 0 ? Cell("-", "") : Cell(std::to_string(b.registers())),
         // A cubin does not record its spills: -1, shown as "-".
         b.spill_store_bytes() < 0 ? Cell("-", "") : Cell(std::to_string(b.spill_store_bytes())),
         b.spill_load_bytes() < 0 ? Cell("-", "") : Cell(std::to_string(b.spill_load_bytes())),
         std::to_string(b.static_smem_bytes()), b.compiler(), b.options()});
  return t;
}

// Every version held: which one is shown, and each one's digests.
Table VersionsTable(const v1::UserKernel& k) {
  Table t;
  t.columns = {{"version", "version", Align::kRight},
               {"owner", "owner"},
               {"created", "created"},
               {"source_sha256", "source sha256"},
               {"manifest_sha256", "manifest sha256"},
               {"runs_as", "runs as"}};
  for (const v1::KernelVersion& v : k.versions()) {
    const std::string first = v.variants_size() > 0 ? v.variants(0) : "";
    // "user.tiled@1.stages=2 ..." : the first name stands for the rest.
    t.rows.push_back({std::to_string(v.version()) + (v.version() == k.version() ? " *" : ""),
                      v.owner().empty() ? Cell("-", "") : Cell(v.owner()),
                      FormatTimeMs(v.created_at_ms()), v.source_sha256().substr(0, 12),
                      v.manifest_sha256().substr(0, 12),
                      first + (v.variants_size() > 1 ? " ..." : "")});
  }
  return t;
}

// A kernel's source as a person reads it: its text, or for a cubin (stored as base64 of its ELF
// file) one line naming it, so that `show --source` and `diff` print no pages of base64.
std::string SourceText(const v1::UserKernel& k) {
  if (!common::IsCubinText(k.source())) return k.source();
  std::string bytes;
  if (!absl::Base64Unescape(k.source(), &bytes)) return k.source();
  return "(a cubin of " + std::to_string(bytes.size()) + " bytes, source sha256 " +
         k.source_sha256() + ": binary, not shown)\n";
}

void ShowKernel(const v1::UserKernel& k, bool with_source, const CommandContext& context) {
  if (context.global.format == Format::kJson) {
    context.out << JsonEnvelope("kernel", k);
    return;
  }
  if (context.global.format == Format::kTable) {
    // What a kernel's owner wrote reaches the terminal with its controls escaped: bidirectional
    // overrides and C1 controls could make the source read as other code than the one compiled.
    context.out << "user kernel " << OneLine(k.name()) << " version " << k.version() << " of "
                << k.versions_size() << " (entry " << OneLine(k.entry()) << ", "
                << OneLine(k.dtype()) << ", owner "
                << (k.owner().empty() ? "-" : OneLine(k.owner())) << ")\n";
    if (!k.description().empty()) context.out << Printable(k.description()) << '\n';
    context.out << "source sha256 " << k.source_sha256() << ", manifest sha256 "
                << k.manifest_sha256() << "\n\n";
    if (k.versions_size() > 1)
      context.out << RenderTableAs(context.global.format, VersionsTable(k)) << '\n';
  }
  context.out << RenderTableAs(context.global.format, BuildsTable(k));
  if (with_source && context.global.format == Format::kTable)
    context.out << "\n" << Printable(k.manifest()) << "\n" << Printable(SourceText(k));
}

// `diff -u` of two texts (diffutils, essential on Debian: its output is what reviewers and
// editors read, and a diff written here would be a worse copy of it), run without a shell on
// two files of a private folder. Returns "" and the diff in `out` (empty: the same), else why not.
std::string UnifiedDiff(const std::string& a, const std::string& b, const std::string& label_a,
                        const std::string& label_b, std::string* out) {
  char folder[] = "/tmp/ablation-diff-XXXXXX";
  if (::mkdtemp(folder) == nullptr) return std::string("cannot make a folder: ") + strerror(errno);
  const std::string dir = folder, pa = dir + "/a", pb = dir + "/b", po = dir + "/out";
  std::string why;
  for (const auto& [path, text] : {std::pair{&pa, &a}, std::pair{&pb, &b}}) {
    std::ofstream f(*path, std::ios::binary);
    f << *text;
    if (!f) why = "cannot write " + *path;
  }
  int status = -1;
  if (why.empty()) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, po.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const std::vector<std::string> args = {"diff",    "-u",    "--label", label_a,
                                           "--label", label_b, pa,        pb};
    std::vector<char*> argv;
    for (const std::string& x : args) argv.push_back(const_cast<char*>(x.c_str()));
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (const int e = posix_spawnp(&pid, "diff", &actions, nullptr, argv.data(), environ); e != 0)
      why = std::string("cannot run diff (diffutils): ") + strerror(e);
    else if (::waitpid(pid, &status, 0) < 0)
      why = std::string("waiting for diff: ") + strerror(errno);
    posix_spawn_file_actions_destroy(&actions);
  }
  if (why.empty() && !(WIFEXITED(status) && WEXITSTATUS(status) <= 1))
    why = "diff failed (status " + std::to_string(status) + ")";
  if (why.empty() && !ReadFile(po, out)) why = "cannot read diff's output";
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return why;
}

// `kernel diff NAME [V1 V2]`: the source and the manifest of two versions (the two newest where
// none are named), as unified diffs. 0: the same; 1: they differ.
int DiffKernel(const KernelOptions& options, const CommandContext& context) {
  if (!options.versions.empty() && options.versions.size() != 2) {
    context.err << "error: kernel diff takes two versions or none (the two newest)\n";
    return kExitUsage;
  }
  const auto get = [&](const std::string& name, v1::UserKernel* k) {
    grpc::ClientContext call;
    v1::GetKernelRequest request;
    request.set_name(name);
    v1::GetKernelResponse response;
    SetDeadline(call, context.global, kDefaultQueryTimeoutS);
    grpc::Status status = context.stub.GetKernel(&call, request, &response);
    if (!status.ok()) return ReportRpcError(status, context);
    *k = response.kernel();
    if (!k->source_withheld().empty()) {
      context.err << "error: " << OneLine(k->source_withheld()) << '\n';
      return kExitDataError;
    }
    return kExitOk;
  };
  v1::UserKernel newest, a, b;
  std::vector<int64_t> versions = options.versions;
  if (versions.empty()) {
    if (int rc = get(options.name, &newest); rc != kExitOk) return rc;
    if (newest.versions_size() < 2) {
      context.err << "error: user kernel " << OneLine(newest.name())
                  << " has one version; nothing to compare it with\n";
      return kExitDataError;
    }
    versions = {newest.versions(newest.versions_size() - 2).version(),
                newest.versions(newest.versions_size() - 1).version()};
  }
  const std::string name = common::WithoutVersion(options.name);
  const std::string na = name + "@" + std::to_string(versions[0]),
                    nb = name + "@" + std::to_string(versions[1]);
  if (int rc = get(na, &a); rc != kExitOk) return rc;
  if (int rc = get(nb, &b); rc != kExitOk) return rc;
  bool differ = false;
  const std::string source_a = SourceText(a), source_b = SourceText(b);
  for (const auto& [what, ta, tb] : {std::tuple{"source", &source_a, &source_b},
                                     std::tuple{"manifest", &a.manifest(), &b.manifest()}}) {
    std::string diff;
    if (std::string why = UnifiedDiff(*ta, *tb, na + "/" + what, nb + "/" + what, &diff);
        !why.empty()) {
      context.err << "error: " << why << '\n';
      return kExitSoftware;
    }
    differ = differ || !diff.empty();
    // The owners' texts, with their controls escaped as `kernel show --source` does.
    context.out << Printable(diff);
  }
  if (!differ && !context.global.quiet)
    context.err << na << " and " << nb << ": the same source and manifest\n";
  return differ ? kExitFailed : kExitOk;
}

}  // namespace

CLI::App* SetupKernel(CLI::App& app, KernelOptions& options, KernelCommands* commands) {
  CLI::App* sub = app.add_subcommand(
      "kernel", "User kernels: CUDA device code and a manifest the daemon compiles and runs");
  sub->require_subcommand(1);
  commands->add =
      sub->add_subcommand("add", "Add a kernel: every knob set is compiled, or nothing is kept");
  commands->add
      ->add_option("source", options.source_path,
                   "The CUDA source (device code only), PTX or a cubin")
      ->required()
      ->check(CLI::ExistingFile);
  commands->add->add_option("--manifest,-m", options.manifest_path, "The manifest (TOML)")
      ->required()
      ->check(CLI::ExistingFile);
  commands->add->footer(
      "Examples:\n"
      "  ablation-client kernel add examples/user-kernels/pipe_gemm.cu --manifest "
      "examples/user-kernels/pipe_gemm.toml\n      compile every knob set of a kernel "
      "(kernels/user/README.md)\n"
      "  ablation-client run -v 'user.pipe.*' --dtype fp16\n      then measure its variants");
  commands->check = sub->add_subcommand(
      "check", "Check a kernel: the manifest validated, every knob set compiled, nothing kept");
  commands->check
      ->add_option("source", options.source_path,
                   "The CUDA source (device code only), PTX or a cubin")
      ->required()
      ->check(CLI::ExistingFile);
  commands->check->add_option("--manifest,-m", options.manifest_path, "The manifest (TOML)")
      ->required()
      ->check(CLI::ExistingFile);
  commands->check->add_option("--arch", options.arch,
                              "Compile for this architecture (sm_90a, sm_80, ...) rather than "
                              "GPU 0's: a daemon with no GPU can check");
  commands->check->footer(
      "Exit status: 0 every knob set compiles, 1 one does not (the compiler's messages, as\n"
      "file:line:column: error:), 65 the manifest or the request is refused, 64 usage, 69 no\n"
      "daemon.\n"
      "Examples:\n"
      "  ablation-client kernel check tiled_gemm.cu -m tiled_gemm.toml --arch sm_90a\n"
      "      in CI, before the kernel is added: nothing is stored");
  commands->list = sub->add_subcommand("list", "The kernels the daemon holds");
  commands->show =
      sub->add_subcommand("show", "One kernel: its versions and builds (registers, spills, smem)");
  commands->show
      ->add_option("name", options.name, "The kernel's name (its newest version), or NAME@V")
      ->required();
  commands->show->add_flag("--source", options.with_source, "Also print its manifest and source");
  commands->diff = sub->add_subcommand(
      "diff", "The source and manifest of two versions of a kernel, as unified diffs");
  commands->diff->add_option("name", options.name, "The kernel's name")->required();
  commands->diff->add_option("versions", options.versions,
                             "Two versions (1 3); none: the two newest");
  commands->diff->footer(
      "Exit status: 0 the same, 1 they differ (as diff's), 65 refused (one version only, or the\n"
      "source is not shown to this caller), 69 no daemon.\n"
      "Example:\n"
      "  ablation-client kernel diff rowblk 1 2");
  commands->remove = sub->add_subcommand(
      "remove", "Remove a kernel, every version, or NAME@V one (its rows are kept)");
  commands->remove->add_option("name", options.name, "The kernel's name, or NAME@V")->required();
  return sub;
}

int ExecuteKernel(const KernelOptions& options, const KernelCommands& commands,
                  const CommandContext& context) {
  grpc::ClientContext call;
  if (*commands.add || *commands.check) {
    const bool check = bool(*commands.check);
    v1::AddKernelRequest request;
    for (const auto& [path, text] : {std::pair{&options.source_path, request.mutable_source()},
                                     std::pair{&options.manifest_path, request.mutable_manifest()}})
      if (!ReadFile(*path, text)) {
        context.err << "error: cannot read " << *path << '\n';
        return kExitUsage;
      }
    // A cubin (an ELF file) travels as base64 text: a proto string and the stored source are text.
    if (common::IsElf(request.source())) request.set_source(absl::Base64Escape(request.source()));
    // The daemon's messages name the user's files, not kernel.cu and manifest.
    request.set_source_name(std::filesystem::path(options.source_path).filename().string());
    request.set_manifest_name(std::filesystem::path(options.manifest_path).filename().string());
    request.set_check_only(check);
    request.set_arch(options.arch);
    v1::AddKernelResponse response;
    // Compiling every knob set takes seconds each.
    SetDeadline(call, context.global, 900);
    grpc::Status status = context.stub.AddKernel(&call, request, &response);
    if (!status.ok()) {
      // A source that does not compile is the kernel's failure, not a refused request: exit 1,
      // with the compiler's messages as they are (file:line:column: error: ...).
      const auto reason = call.GetServerTrailingMetadata().find("ablation-reason");
      if (reason != call.GetServerTrailingMetadata().end() &&
          std::string(reason->second.data(), reason->second.size()) == "compile_error") {
        context.err << Printable(status.error_message());
        if (!status.error_message().empty() && status.error_message().back() != '\n')
          context.err << '\n';
        return kExitFailed;
      }
      return ReportRpcError(status, context);
    }
    if (context.global.format == Format::kTable && !context.global.quiet)
      context.err << (check ? "checked user kernel " : "added user kernel ")
                  << OneLine(response.kernel().name())
                  << (!check && response.kernel().version() > 1
                          ? " version " + std::to_string(response.kernel().version()) +
                                " (the older ones stay: " + OneLine(response.kernel().name()) +
                                "@1 ...)"
                          : std::string())
                  << ": " << response.kernel().variants_size() << " variants compiled"
                  << (check ? " for " +
                                  OneLine(response.kernel().builds_size() > 0
                                              ? response.kernel().builds(0).arch()
                                              : options.arch) +
                                  ", nothing kept"
                            : "")
                  << '\n';
    ShowKernel(response.kernel(), false, context);
    return kExitOk;
  }
  if (*commands.list) {
    v1::ListKernelsResponse response;
    SetDeadline(call, context.global, kDefaultQueryTimeoutS);
    grpc::Status status = context.stub.ListKernels(&call, v1::ListKernelsRequest(), &response);
    if (!status.ok()) return ReportRpcError(status, context);
    std::vector<v1::UserKernel> kernels(response.kernels().begin(), response.kernels().end());
    context.out << RenderList(context.global.format, "kernels", kernels, &KernelsTable);
    return kExitOk;
  }
  if (*commands.diff) return DiffKernel(options, context);
  if (*commands.show) {
    v1::GetKernelRequest request;
    request.set_name(options.name);
    v1::GetKernelResponse response;
    SetDeadline(call, context.global, kDefaultQueryTimeoutS);
    grpc::Status status = context.stub.GetKernel(&call, request, &response);
    if (!status.ok()) return ReportRpcError(status, context);
    ShowKernel(response.kernel(), options.with_source, context);
    return kExitOk;
  }
  v1::RemoveKernelRequest request;
  request.set_name(options.name);
  v1::RemoveKernelResponse response;
  SetDeadline(call, context.global, kDefaultQueryTimeoutS);
  grpc::Status status = context.stub.RemoveKernel(&call, request, &response);
  if (!status.ok()) return ReportRpcError(status, context);
  if (!context.global.quiet) context.err << "removed user kernel " << options.name << '\n';
  return kExitOk;
}

}  // namespace ablation::client
