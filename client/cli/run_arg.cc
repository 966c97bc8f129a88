#include "client/cli/run_arg.h"

#include <memory>

#include "client/cli/validators.h"

namespace ablation::client {

void AddRunArgument(CLI::App* sub, std::string& run_id, const RunArgument& spec) {
  CLI::Option* positional =
      sub->add_option("RUN", run_id, spec.help)->check(RunIdValidator(spec.allow_latest));
  if (!run_id.empty()) positional->capture_default_str();
  // Its own storage, so that a positional and an alias that disagree are seen, not overwritten.
  auto alias = std::make_shared<std::string>();
  CLI::Option* old = sub->add_option("--run", *alias,
                                     "Deprecated spelling of the argument: `" + sub->get_name() +
                                         " RUN` does the same")
                         ->check(RunIdValidator(spec.allow_latest))
                         ->group("Deprecated");
  sub->callback([sub, positional, old, alias, &run_id, required = spec.required] {
    if (old->count() > 0) {
      if (positional->count() > 0 && *alias != run_id)
        throw CLI::ValidationError("--run", "the run is given twice ('" + run_id + "' and '" +
                                                *alias + "'); give it once: `" + sub->get_name() +
                                                " RUN`");
      run_id = *alias;
    }
    if (required && run_id.empty())
      throw CLI::RequiredError("RUN (the run, e.g. `" + sub->get_name() + " 42`)");
  });
}

std::vector<std::string> DeprecationWarnings(CLI::App& app) {
  std::vector<std::string> warnings;
  for (CLI::App* sub : app.get_subcommands()) {
    const CLI::Option* old = sub->get_option_no_throw("--run");
    if (old == nullptr || old->count() == 0) continue;
    const std::string value = old->results().empty() ? "RUN" : old->results().back();
    warnings.push_back("warning: `" + sub->get_name() + " --run " + value +
                       "` is deprecated; write `" + sub->get_name() + " " + value + "`");
  }
  return warnings;
}

}  // namespace ablation::client
