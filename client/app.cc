#include "client/app.h"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include "ablation/version.h"
#include "client/cmd_advise.h"
#include "client/cmd_budget.h"
#include "client/cmd_cancel.h"
#include "client/cmd_compare.h"
#include "client/cmd_device.h"
#include "client/cmd_history.h"
#include "client/cmd_kernel.h"
#include "client/cmd_presets.h"
#include "client/cmd_profile.h"
#include "client/cmd_report.h"
#include "client/cmd_results.h"
#include "client/cmd_run.h"
#include "client/cmd_runs.h"
#include "client/cmd_sass.h"
#include "client/cmd_show.h"
#include "client/cmd_sweep.h"
#include "client/cmd_variants.h"
#include "client/cmd_verify.h"
#include "client/cmd_watch.h"
#include "client/completion.h"
#include "client/exit_codes.h"
#include "client/options.h"
#include "client/output.h"
#include "client/rpc.h"
#include "client/run_arg.h"
#include "client/table.h"
#include "client/validators.h"

namespace ablation::client {
namespace {

// "ablation-client 0.1.0 (git 1a2b3c4d5e6f)": the project's version and the revision the build
// was configured at (CMakeLists.txt writes both into ablation/version.h, as for the daemon).
std::string VersionText() {
  const std::string revision = kGitRevision;
  return std::string("ablation-client ") + kDaemonVersion +
         (revision == "unknown" ? " (git revision unknown)" : " (git " + revision + ")");
}

}  // namespace

int RunApp(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
           const std::atomic<bool>* interrupted) {
  CLI::App app("ablation-client: run and query GEMM kernel ablations on an ablationd daemon",
               args.empty() ? "ablation-client" : args[0]);
  app.footer(std::string(ExitCodesHelp()));
  app.require_subcommand(1);
  // Global options also after the subcommand: `ablation-client runs --format json`.
  app.fallthrough();
  app.set_version_flag("--version", VersionText());

  GlobalOptions global;
  app.add_option("--server", global.server, "Daemon address HOST:PORT")
      ->envname("ABLATION_SERVER")
      ->capture_default_str();
  app.add_option("--format,-f", global.format,
                 "Output format: table, json, csv, markdown (md); html for report")
      ->transform(FormatTransformer())
      ->default_str("table");
  app.add_option("--output,-o", global.output,
                 "Write the command's output to FILE instead of stdout (whole, once it is done)")
      ->type_name("FILE");
  app.add_option("--width", global.width,
                 "Fit tables to this many columns (0: no limit; default: the terminal's, else "
                 "$COLUMNS)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--timeout", global.timeout_s,
                 "Deadline in seconds for unary calls (default 30; verify: none)")
      ->check(CLI::PositiveNumber);
  app.add_flag("--quiet,-q", global.quiet, "No progress lines on stderr");
  app.add_option("--token-file", global.token_file,
                 "File whose first line is the bearer token (else ABLATION_TOKEN)")
      ->envname("ABLATION_TOKEN_FILE")
      ->type_name("FILE");
  app.add_flag("--tls", global.tls, "TLS to the daemon (also: an https:// or grpcs:// --server)")
      ->envname("ABLATION_TLS");
  app.add_option("--ca", global.ca_file, "PEM CA that signed the daemon's certificate")
      ->envname("ABLATION_CA")
      ->type_name("FILE");
  app.add_option("--cert", global.cert_file, "PEM client certificate (with --key)")
      ->type_name("FILE");
  app.add_option("--key", global.key_file, "PEM private key of --cert")->type_name("FILE");
  app.add_option("--tls-server-name", global.tls_server_name,
                 "Check the daemon's certificate against this name rather than the address's "
                 "(one pod of a Service, by its IP)")
      ->envname("ABLATION_TLS_SERVER_NAME")
      ->type_name("NAME");
  app.add_option("--fleet-db", global.fleet_db,
                 "history, results and compare read this fleet database (PostgreSQL, "
                 "postgresql://USER@HOST/DB; read-only) across its daemons instead of asking one; "
                 "also ABLATION_FLEET_DB, which only those commands read")
      ->type_name("CONNINFO");
  if (const char* token = std::getenv("ABLATION_TOKEN")) global.token = token;

  VariantsOptions variants;
  DeviceOptions device;
  RunOptions run;
  RunsOptions runs;
  ShowOptions show;
  ResultsOptions results;
  HistoryOptions history;
  CancelOptions cancel;
  VerifyOptions verify;
  AdviseOptions advise;
  SassOptions sass;
  PresetsOptions presets;
  SweepOptions sweep;
  ReportOptions report;
  CompareOptions compare;
  BudgetOptions budget;
  WatchOptions watch;
  ProfileOptions profile;
  KernelOptions kernel;
  KernelCommands kernel_commands;
  CompletionOptions completion;
  CLI::App* variants_cmd = SetupVariants(app, variants);
  CLI::App* device_cmd = SetupDevice(app, device);
  CLI::App* run_cmd = SetupRun(app, run);
  CLI::App* runs_cmd = SetupRuns(app, runs);
  CLI::App* show_cmd = SetupShow(app, show);
  CLI::App* results_cmd = SetupResults(app, results);
  CLI::App* history_cmd = SetupHistory(app, history);
  CLI::App* cancel_cmd = SetupCancel(app, cancel);
  CLI::App* verify_cmd = SetupVerify(app, verify);
  CLI::App* advise_cmd = SetupAdvise(app, advise);
  CLI::App* sass_cmd = SetupSass(app, sass);
  CLI::App* presets_cmd = SetupPresets(app, presets);
  CLI::App* sweep_cmd = SetupSweep(app, sweep);
  CLI::App* report_cmd = SetupReport(app, report);
  CLI::App* compare_cmd = SetupCompare(app, compare);
  CLI::App* budget_cmd = SetupBudget(app, budget);
  CLI::App* watch_cmd = SetupWatch(app, watch);
  CLI::App* profile_cmd = SetupProfile(app, profile);
  CLI::App* kernel_cmd = SetupKernel(app, kernel, &kernel_commands);
  CLI::App* completion_cmd = SetupCompletion(app, completion);

  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend() - (args.empty() ? 0 : 1));
    app.parse(reversed);  // CLI11 takes the arguments reversed, without the program name
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e, out, err);
    // --help and --version are successes; every other parse error is bad usage.
    return code == static_cast<int>(CLI::ExitCodes::Success) ? kExitOk : kExitUsage;
  }

  auto execute = [&](const CommandContext& context) {
    if (*variants_cmd) return ExecuteVariants(variants, context);
    if (*device_cmd) return ExecuteDevice(device, context);
    if (*run_cmd) return ExecuteRun(run, context);
    if (*runs_cmd) return ExecuteRuns(runs, context);
    if (*show_cmd) return ExecuteShow(show, context);
    if (*results_cmd) return ExecuteResults(results, context);
    if (*history_cmd) return ExecuteHistory(history, context);
    if (*cancel_cmd) return ExecuteCancel(cancel, context);
    if (*verify_cmd) return ExecuteVerify(verify, context);
    if (*advise_cmd) return ExecuteAdvise(advise, context);
    if (*sass_cmd) return ExecuteSass(sass, context);
    if (*presets_cmd) return ExecutePresets(presets, context);
    if (*sweep_cmd) return ExecuteSweep(sweep, context);
    if (*report_cmd) return ExecuteReport(report, context);
    if (*compare_cmd) return ExecuteCompare(compare, context);
    if (*budget_cmd) return ExecuteBudget(budget, context);
    if (*watch_cmd) return ExecuteWatch(watch, context);
    if (*profile_cmd) return ExecuteProfile(profile, context);
    if (*kernel_cmd) return ExecuteKernel(kernel, kernel_commands, context);
    context.err << "error: no subcommand\n";
    return kExitUsage;
  };

  if (!global.quiet)
    for (const std::string& warning : DeprecationWarnings(app)) err << warning << '\n';
  const bool reads_fleet = *history_cmd || *results_cmd || *compare_cmd;
  if (!global.fleet_db.empty() && !reads_fleet) {
    err << "error: --fleet-db is read by history, results and compare only\n";
    return kExitUsage;
  }
  // The environment's fleet database serves those commands and is no error for the others.
  if (const char* fleet_db = std::getenv("ABLATION_FLEET_DB");
      global.fleet_db.empty() && reads_fleet && fleet_db != nullptr)
    global.fleet_db = fleet_db;
  if (global.format == Format::kHtml && !*report_cmd && !*history_cmd) {
    err << "error: --format html is for report and history; use table, json, csv or markdown\n";
    return kExitUsage;
  }
  // -o FILE: checked before anything runs (a long run should not end in "cannot write"), then
  // written whole once the command is done.
  const bool to_file = !global.output.empty() && global.output != "-";
  if (to_file) {
    if (std::string why = CheckOutputPath(global.output); !why.empty()) {
      err << "error: -o: " << why << '\n';
      return kExitUsage;
    }
  }
  std::ostringstream buffered;
  std::ostream& target = to_file ? buffered : out;
  SetTextWidth(OutputWidth(global.width, !to_file && &out == &std::cout));

  int code = kExitUsage;
  if (*completion_cmd) {
    // From the parser alone: no daemon needed.
    target << CompletionScript(app, completion.shell, "ablation-client");
    code = kExitOk;
  } else {
    std::string channel_error;
    std::shared_ptr<grpc::Channel> channel = MakeChannel(global, &channel_error);
    if (!channel) {
      err << "error: " << channel_error << '\n';
      return kExitUsage;
    }
    std::unique_ptr<v1::Ablation::Stub> stub = v1::Ablation::NewStub(channel);
    const CommandContext context{global, *stub, target, err, interrupted};
    code = execute(context);
  }
  // What a failed command printed is still its output (a run's table before a failure); a
  // command refused before it printed anything leaves the file as it was.
  if (to_file && (code != kExitUsage || !buffered.str().empty())) {
    if (std::string why = WriteOutputFile(global.output, buffered.str()); !why.empty()) {
      err << "error: -o: " << why << '\n';
      return kExitUsage;
    }
  }
  return code;
}

}  // namespace ablation::client
