// What the command line says around its commands: the global options repeated under every
// command's help, and "did you mean" for a command that does not exist.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace ablation::client {

// "Global options (before or after the command):" and one line per option of `app` (the root),
// as its own --help lists them; --help and --version left out.
std::string GlobalOptionsHelp(const CLI::App& app);

// Sets every command's (and subcommand's) footer: what its Setup put there (its examples), the
// global options of `app`, and `trailer` (the exit codes).
void AddFooters(CLI::App& app, const std::string& trailer);

// For a command line whose command (or a command's subcommand) is not one `app` knows: "unknown
// command 'rnu'; did you mean 'run' or 'runs'?" (the closest by edit distance, when close) and
// where the commands are listed. "" when every command on it is known. `args` without the
// program's name.
std::string UnknownCommand(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace ablation::client
