#include "client/commands/cmd_budget.h"

#include "client/cli/calls.h"
#include "client/cli/exit_codes.h"
#include "client/output/render.h"

namespace ablation::client {
namespace {

std::string Kb(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, bytes % 1024 ? "%.1f KB" : "%.0f KB", double(bytes) / 1024.0);
  return buf;
}

}  // namespace

CLI::App* SetupBudget(CLI::App& app, BudgetOptions& options) {
  CLI::App* sub = app.add_subcommand(
      "budget", "Shared memory budget of a variant: bytes per stage count, blocks per SM, cliff");
  sub->add_option("variant", options.variant, "Variant (canonical or short name)")
      ->type_name("VARIANT")
      ->required();
  sub->add_option("--arch", options.arch,
                  "sm_80 (A100, 164 KB/SM), sm_86 (GA104, 100 KB/SM, 50 KB cliff), "
                  "sm_89, sm_90 (H100/H200, 228 KB/SM)")
      ->capture_default_str();
  return sub;
}

int ExecuteBudget(const BudgetOptions& options, const CommandContext& context) {
  v1::BudgetRequest request;
  request.set_variant(options.variant);
  request.set_arch(options.arch);
  v1::BudgetResponse response;
  grpc::ClientContext call;
  SetDeadline(call, context.global, kDefaultQueryTimeoutS);
  grpc::Status status = context.stub.GetBudget(&call, request, &response);
  if (!status.ok()) return ReportRpcError(status, context);
  if (context.global.format == Format::kJson) {
    context.out << JsonEnvelope("budget", response);
    return kExitOk;
  }
  Table table;
  table.columns = {{"stages", "stages", Align::kRight},
                   {"buffering", "buffering"},
                   {"smem", "smem per block", Align::kRight},
                   {"blocks", "blocks/SM", Align::kRight},
                   {"cliff", "cliff crossed"},
                   {"variant", ""}};
  for (const auto& r : response.rows()) {
    table.rows.push_back({std::to_string(r.stages()), r.stages() == 1 ? "single" : "multi",
                          Cell(Kb(r.bytes()), std::to_string(r.bytes())),
                          r.fits() ? std::to_string(r.blocks_per_sm()) : "does not fit",
                          r.over_cliff() ? "yes" : "no",
                          r.this_variant() ? "<- " + response.variant() : ""});
  }
  if (context.global.format == Format::kTable || context.global.format == Format::kMarkdown) {
    context.out << response.variant() << " on " << response.arch() << " (" << response.gpus()
                << "): " << Kb(response.smem_per_sm()) << " per SM, at most "
                << Kb(response.smem_per_block_max()) << " per block, cliff above "
                << Kb(response.cliff_bytes()) << "\n\n";
  }
  context.out << RenderTableAs(context.global.format, table);
  if (context.global.format == Format::kTable || context.global.format == Format::kMarkdown)
    context.out << "\n" << response.verdict() << "\n";
  return kExitOk;
}

}  // namespace ablation::client
