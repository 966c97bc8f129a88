#include "client/app.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <sstream>

#include "ablation/version.h"
#include "client/cli/app_help.h"
#include "client/cli/completion.h"
#include "client/cli/exit_codes.h"
#include "client/cli/options.h"
#include "client/cli/run_arg.h"
#include "client/cli/validators.h"
#include "client/commands/cmd_advise.h"
#include "client/commands/cmd_budget.h"
#include "client/commands/cmd_cancel.h"
#include "client/commands/cmd_compare.h"
#include "client/commands/cmd_device.h"
#include "client/commands/cmd_history.h"
#include "client/commands/cmd_kernel.h"
#include "client/commands/cmd_presets.h"
#include "client/commands/cmd_profile.h"
#include "client/commands/cmd_report.h"
#include "client/commands/cmd_results.h"
#include "client/commands/cmd_run.h"
#include "client/commands/cmd_runs.h"
#include "client/commands/cmd_sass.h"
#include "client/commands/cmd_show.h"
#include "client/commands/cmd_sweep.h"
#include "client/commands/cmd_variants.h"
#include "client/commands/cmd_verify.h"
#include "client/commands/cmd_watch.h"
#include "client/output/output.h"
#include "client/output/table.h"
#include "client/sources/channel.h"
#include "db/fleet/conninfo.h"

namespace ablation::client {
namespace {

// "ablation-client 0.1.0 (git 1a2b3c4d5e6f)": the project's version and the revision the build
// was configured at (CMakeLists.txt writes both into ablation/version.h, as for the daemon).
std::string VersionText() {
  const std::string revision = kGitRevision;
  return std::string("ablation-client ") + kDaemonVersion +
         (revision == "unknown" ? " (git revision unknown)" : " (git " + revision + ")");
}

// What a command may take beside its own options.
struct Traits {
  bool results = false;  // reads stored results: --fleet-db (ABLATION_FLEET_DB) serves it too
  bool html = false;     // --format html
};

// One subcommand: its parser and what runs it.
struct Command {
  CLI::App* parser = nullptr;
  std::function<int(const CommandContext&)> execute;
  Traits traits;
};

// Every subcommand with its options, in the order `--help` lists them. The options live here, so
// that each command's function reads what the parser filled in.
class Commands {
 public:
  explicit Commands(CLI::App& app) {
    Add(app, variants_, SetupVariants, ExecuteVariants);
    Add(app, device_, SetupDevice, ExecuteDevice);
    Add(app, run_, SetupRun, ExecuteRun);
    Add(app, runs_, SetupRuns, ExecuteRuns, {.results = true});
    Add(app, show_, SetupShow, ExecuteShow, {.results = true});
    Add(app, results_, SetupResults, ExecuteResults, {.results = true});
    Add(app, history_, SetupHistory, ExecuteHistory, {.results = true, .html = true});
    Add(app, cancel_, SetupCancel, ExecuteCancel);
    Add(app, verify_, SetupVerify, ExecuteVerify);
    Add(app, advise_, SetupAdvise, ExecuteAdvise);
    Add(app, sass_, SetupSass, ExecuteSass);
    Add(app, presets_, SetupPresets, ExecutePresets);
    Add(app, sweep_, SetupSweep, ExecuteSweep);
    Add(app, report_, SetupReport, ExecuteReport, {.results = true, .html = true});
    Add(app, compare_, SetupCompare, ExecuteCompare, {.results = true});
    Add(app, budget_, SetupBudget, ExecuteBudget);
    Add(app, watch_, SetupWatch, ExecuteWatch);
    Add(app, profile_, SetupProfile, ExecuteProfile);
    commands_.push_back(
        {SetupKernel(app, kernel_, &kernel_commands_),
         [this](const CommandContext& c) { return ExecuteKernel(kernel_, kernel_commands_, c); },
         {}});
    completion_ = SetupCompletion(app, completion_options_);
  }

  // The command the command line chose; null for `completion` (which needs no daemon).
  const Command* Chosen() const {
    for (const Command& c : commands_)
      if (*c.parser) return &c;
    return nullptr;
  }
  bool completion() const { return completion_ != nullptr && *completion_; }
  const CompletionOptions& completion_options() const { return completion_options_; }

 private:
  template <class Options, class Setup, class Execute>
  void Add(CLI::App& app, Options& options, Setup setup, Execute execute, Traits traits = {}) {
    commands_.push_back(
        {setup(app, options),
         [&options, execute](const CommandContext& c) { return execute(options, c); }, traits});
  }

  VariantsOptions variants_;
  DeviceOptions device_;
  RunOptions run_;
  RunsOptions runs_;
  ShowOptions show_;
  ResultsOptions results_;
  HistoryOptions history_;
  CancelOptions cancel_;
  VerifyOptions verify_;
  AdviseOptions advise_;
  SassOptions sass_;
  PresetsOptions presets_;
  SweepOptions sweep_;
  ReportOptions report_;
  CompareOptions compare_;
  BudgetOptions budget_;
  WatchOptions watch_;
  ProfileOptions profile_;
  KernelOptions kernel_;
  KernelCommands kernel_commands_;
  CompletionOptions completion_options_;
  CLI::App* completion_ = nullptr;
  std::vector<Command> commands_;
};

// The options every command takes (before or after its name).
void AddGlobalOptions(CLI::App& app, GlobalOptions& global) {
  app.add_option("--server", global.server, "Daemon address HOST:PORT")
      ->envname("ABLATION_SERVER")
      ->capture_default_str();
  app.add_option("--format,-f", global.format,
                 "Output format: table, json, csv, markdown (md); html for report and history")
      ->transform(FormatTransformer())
      ->default_str("table");
  app.add_option("--output,-o", global.output,
                 "Write the command's output to FILE instead of stdout (whole, once it is done)")
      ->type_name("FILE");
  app.add_option("--width", global.width,
                 "Fit tables to this many columns (0: no limit; default: the terminal's, else "
                 "$COLUMNS)")
      ->check(WholeNumber(0));
  app.add_option("--timeout", global.timeout_s,
                 "Deadline in seconds for unary calls (default 30; verify: none)")
      ->check(RealNumber());
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
                 "runs, show, results, history, compare and report read this fleet database "
                 "(PostgreSQL, postgresql://USER@HOST/DB; read-only) across its daemons instead "
                 "of asking one; also ABLATION_FLEET_DB, which only those commands read")
      ->type_name("CONNINFO");
  if (const char* token = std::getenv("ABLATION_TOKEN")) global.token = token;
}

// What the chosen command cannot take of the global options: "" when it takes them all. The
// environment's fleet database serves the commands that read results and is no error for others.
std::string CheckGlobalOptions(const Command* chosen, GlobalOptions& global) {
  const bool results = chosen != nullptr && chosen->traits.results;
  if (!global.fleet_db.empty() && !results)
    return "--fleet-db is read by runs, show, results, history, compare and report only";
  // Given as --fleet-db (the environment is not read yet): on the command line, which every
  // local user reads.
  if (!global.fleet_db.empty() && fleet::HasPassword(global.fleet_db))
    std::fprintf(stderr,
                 "warning: --fleet-db holds a password, which other users of this host can read "
                 "on the command line (ps); keep it in ABLATION_FLEET_DB or ~/.pgpass instead\n");
  if (const char* fleet_db = std::getenv("ABLATION_FLEET_DB");
      global.fleet_db.empty() && results && fleet_db != nullptr)
    global.fleet_db = fleet_db;
  if (global.format == Format::kHtml && (chosen == nullptr || !chosen->traits.html))
    return "--format html is for report and history; use table, json, csv or markdown";
  if (!global.output.empty() && global.output != "-")
    if (std::string why = CheckOutputPath(global.output); !why.empty()) return "-o: " + why;
  return "";
}

// The chosen command against the daemon (or its source of results), its output into `target`.
int Execute(const Commands& commands, CLI::App& app, const GlobalOptions& global,
            std::ostream& target, std::ostream& err, const std::atomic<bool>* interrupted) {
  if (commands.completion()) {  // from the parser alone: no daemon needed
    target << CompletionScript(app, commands.completion_options().shell, "ablation-client");
    return kExitOk;
  }
  const Command* chosen = commands.Chosen();
  if (chosen == nullptr) {
    err << "error: no subcommand\n";
    return kExitUsage;
  }
  std::string channel_error;
  std::shared_ptr<grpc::Channel> channel = MakeChannel(global, &channel_error);
  if (!channel) {
    err << "error: " << channel_error << '\n';
    return kExitUsage;
  }
  std::unique_ptr<v1::Ablation::Stub> stub = v1::Ablation::NewStub(channel);
  return chosen->execute(CommandContext{global, *stub, target, err, interrupted});
}

}  // namespace

int RunApp(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
           const std::atomic<bool>* interrupted) {
  CLI::App app("ablation-client: run and query GEMM kernel ablations on an ablationd daemon",
               args.empty() ? "ablation-client" : args[0]);
  app.require_subcommand(1);
  // Global options also after the subcommand: `ablation-client runs --format json`.
  app.fallthrough();
  app.set_version_flag("--version", VersionText());
  GlobalOptions global;
  AddGlobalOptions(app, global);
  const Commands commands(app);
  // Every command's help ends with its examples, the global options and the exit codes (set
  // after the commands: CLI11 copies a parent's footer into the commands made after it).
  AddFooters(app, std::string(ExitCodesHelp()));
  app.footer(std::string(ExitCodesHelp()));
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend() - (args.empty() ? 0 : 1));
    app.parse(reversed);  // CLI11 takes the arguments reversed, without the program name
  } catch (const CLI::ParseError& e) {
    // A mistyped command: named, with the closest one, rather than "a subcommand is required".
    if (e.get_exit_code() != static_cast<int>(CLI::ExitCodes::Success)) {
      const std::vector<std::string> words(args.begin() + (args.empty() ? 0 : 1), args.end());
      if (std::string unknown = UnknownCommand(app, words); !unknown.empty()) {
        err << "error: " << unknown << '\n';
        return kExitUsage;
      }
    }
    const int code = app.exit(e, out, err);
    // --help and --version are successes; every other parse error is bad usage.
    return code == static_cast<int>(CLI::ExitCodes::Success) ? kExitOk : kExitUsage;
  }
  if (!global.quiet)
    for (const std::string& warning : DeprecationWarnings(app)) err << warning << '\n';
  if (std::string why = CheckGlobalOptions(commands.Chosen(), global); !why.empty()) {
    err << "error: " << why << '\n';
    return kExitUsage;
  }
  // -o FILE: checked before anything runs (a long run should not end in "cannot write"), then
  // written whole once the command is done.
  const bool to_file = !global.output.empty() && global.output != "-";
  std::ostringstream buffered;
  std::ostream& target = to_file ? buffered : out;
  SetTextWidth(OutputWidth(global.width, !to_file && &out == &std::cout));
  const int code = Execute(commands, app, global, target, err, interrupted);
  // What a failed command printed is still its output (a run's table before a failure); a
  // command refused before it printed anything leaves the file as it was.
  if (to_file && (code == kExitOk || !buffered.str().empty())) {
    if (std::string why = WriteOutputFile(global.output, buffered.str()); !why.empty()) {
      err << "error: -o: " << why << '\n';
      return kExitCantCreate;
    }
  }
  return code;
}

}  // namespace ablation::client
