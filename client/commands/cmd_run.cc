#include "client/commands/cmd_run.h"

#include "client/cli/dtype.h"
#include "client/cli/exit_codes.h"
#include "client/runs/follow.h"

namespace ablation::client {

CLI::App* SetupRun(CLI::App& app, RunOptions& options) {
  CLI::App* sub = app.add_subcommand(
      "run",
      "Run variants x shapes on a GPU, showing progress live; Ctrl-C cancels the run (a client "
      "that merely disconnects leaves it running)");
  AddSelectionOptions(sub, options, VariantsAs::kOption);
  sub->add_option("--tag,-t", options.tags, "Tag stored with the run (nightly); repeatable")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  AddMeasureOptions(sub, options);
  sub->footer(
      "Examples:\n"
      "  ablation-client run -v L1_R1_s3 -v cublas_bf16 --shape 4096\n      a rung against cuBLAS "
      "at 4096^3\n"
      "  ablation-client run -v 'abl_L1_*' --verify --rounds 3\n      a glob, verified first, 3 "
      "rounds\n"
      "  ablation-client run -v L1_R1_s3 --regime burst\n      from a cooled GPU, before the power "
      "cap\n"
      "  ablation-client run --detach -v 'abl_*' --shape 8192\n      queue it; `watch RUN` follows "
      "it");
  return sub;
}

int ExecuteRun(const RunOptions& options, const CommandContext& context) {
  DTypeChoice dtype;
  if (!ResolveSelectionDType(options, context, &dtype)) return kExitUsage;
  RunOptions resolved = options;
  resolved.dtype = dtype.dtype;
  const int code = resolved.detach ? DetachRun(BuildRunRequest(resolved), context)
                                   : FollowRun(BuildRunRequest(resolved), context, nullptr);
  // A refusal (a variant without that dtype) reads better knowing where the dtype came from.
  if (code == kExitDataError && !InferredDTypeNote(dtype).empty())
    context.err << InferredDTypeNote(dtype) << '\n';
  return code;
}

}  // namespace ablation::client
