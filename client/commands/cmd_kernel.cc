#include "client/commands/cmd_kernel.h"

#include <filesystem>

#include "client/output/escape.h"

#include "client/cli/calls.h"
#include "client/cli/exit_codes.h"
#include "client/output/output.h"
#include "client/output/table.h"

namespace ablation::client {
namespace {

Table KernelsTable(const std::vector<v1::UserKernel>& kernels) {
  Table t;
  t.columns = {{"name", "name"},
               {"owner", "owner"},
               {"dtype", "dtype"},
               {"variants", "variants", Align::kRight},
               {"entry", "entry"},
               {"source_sha256", "source sha256"},
               {"description", "description"}};
  for (const v1::UserKernel& k : kernels)
    t.rows.push_back({k.name(), k.owner().empty() ? Cell("-", "") : Cell(k.owner()), k.dtype(),
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
    t.rows.push_back({b.variant(), b.arch(),
                      b.registers() < 0 ? Cell("-", "") : Cell(std::to_string(b.registers())),
                      std::to_string(b.spill_store_bytes()), std::to_string(b.spill_load_bytes()),
                      std::to_string(b.static_smem_bytes()), b.compiler(), b.options()});
  return t;
}

void ShowKernel(const v1::UserKernel& k, bool with_source, const CommandContext& context) {
  if (context.global.format == Format::kJson) {
    context.out << JsonEnvelope("kernel", k);
    return;
  }
  if (context.global.format == Format::kTable) {
    // What a kernel's owner wrote reaches the terminal with its controls escaped: bidirectional
    // overrides and C1 controls could make the source read as other code than the one compiled.
    context.out << "user kernel " << OneLine(k.name()) << " (entry " << OneLine(k.entry()) << ", "
                << OneLine(k.dtype()) << ", owner "
                << (k.owner().empty() ? "-" : OneLine(k.owner())) << ")\n";
    if (!k.description().empty()) context.out << Printable(k.description()) << '\n';
    context.out << "source sha256 " << k.source_sha256() << ", manifest sha256 "
                << k.manifest_sha256() << "\n\n";
  }
  context.out << RenderTableAs(context.global.format, BuildsTable(k));
  if (with_source && context.global.format == Format::kTable)
    context.out << "\n" << Printable(k.manifest()) << "\n" << Printable(k.source());
}

}  // namespace

CLI::App* SetupKernel(CLI::App& app, KernelOptions& options, KernelCommands* commands) {
  CLI::App* sub = app.add_subcommand(
      "kernel", "User kernels: CUDA device code and a manifest the daemon compiles and runs");
  sub->require_subcommand(1);
  commands->add =
      sub->add_subcommand("add", "Add a kernel: every knob set is compiled, or nothing is kept");
  commands->add->add_option("source", options.source_path, "The CUDA source (device code only)")
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
  commands->check->add_option("source", options.source_path, "The CUDA source (device code only)")
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
  commands->show = sub->add_subcommand("show", "One kernel: its builds (registers, spills, smem)");
  commands->show->add_option("name", options.name, "The kernel's name")->required();
  commands->show->add_flag("--source", options.with_source, "Also print its manifest and source");
  commands->remove =
      sub->add_subcommand("remove", "Remove a kernel (its owner or an admin; its rows are kept)");
  commands->remove->add_option("name", options.name, "The kernel's name")->required();
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
                  << OneLine(response.kernel().name()) << ": " << response.kernel().variants_size()
                  << " variants compiled"
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
