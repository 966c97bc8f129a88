// `completion bash|zsh`: a shell completion script generated from the CLI11 definition of the
// client itself (the subcommands, their options, what each option's validator accepts), so the
// completion cannot drift from the parser. Variant and preset names come from the daemon at
// completion time (`variants`, `presets`, with a short --timeout).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace ablation::client {

struct CompletionOptions {
  std::string shell;
};

CLI::App* SetupCompletion(CLI::App& app, CompletionOptions& options);

// What completes the value of an option or a positional, read from its CLI11 definition.
struct CompletedValue {
  std::vector<std::string> words;  // fixed words: "json", "latest", "bf16"
  bool files = false;              // type name FILE
  bool variants = false;           // type name VARIANT (also a word of "cpu|cublas|VARIANT")
  bool presets = false;            // type name PRESET
};
// From the option's type name and its validators' descriptions: "TEXT:table|json|csv" gives
// table, json, csv; upper-case alternatives (MHZ, RUN_ID) are placeholders, not words.
CompletedValue ValueCompletion(const CLI::Option& option);

// The script for `shell` ("bash" or "zsh") completing `app`'s command line; `program` is the
// command it completes (ablation-client).
std::string CompletionScript(CLI::App& app, std::string_view shell, std::string_view program);

}  // namespace ablation::client
