// How a command names the run it is about, the same way in every command: the run is the
// command's argument (`show 5`, `report latest`, `watch 42`, `results 7`; `compare A B` takes
// two). `--run ID`, the spelling `report` and `results` had, is still accepted as a deprecated
// alias: it does the same, and a warning on stderr says what to write instead.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace ablation::client {

struct RunArgument {
  std::string help;           // of the positional: "The run to follow"
  bool allow_latest = false;  // 'latest' names the newest run
  bool required = false;      // else `run_id`'s initial value is the default (empty: none)
};

// Adds the positional RUN and the deprecated --run to `sub`, both into `run_id`. Giving both
// with different values, or neither when required, is a usage error.
void AddRunArgument(CLI::App* sub, std::string& run_id, const RunArgument& spec);

// "warning: `report --run 5` is deprecated; write `report 5`" for each deprecated spelling the
// parsed command line used.
std::vector<std::string> DeprecationWarnings(CLI::App& app);

}  // namespace ablation::client
