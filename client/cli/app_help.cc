#include "client/cli/app_help.h"

#include <algorithm>
#include <sstream>

#include "common/variant_names.h"

namespace ablation::client {
namespace {

bool Hidden(const CLI::Option* option) {
  return option->get_name() == "--help" || option->get_name() == "--version" ||
         option->get_group().empty();
}

// "--format,-f" with its value's name: "--format,-f FORMAT".
std::string OptionName(const CLI::Option* option) {
  std::string name = option->get_name(false, true);
  if (option->get_type_size() != 0 && !option->get_type_name().empty())
    name += " " + option->get_type_name();
  return name;
}

// An option of `app` or of a command above it (global options also follow the command).
const CLI::Option* FindOption(const CLI::App* app, const std::string& name) {
  for (; app != nullptr; app = app->get_parent())
    if (const CLI::Option* option = app->get_option_no_throw(name)) return option;
  return nullptr;
}

std::vector<std::string> CommandNames(const CLI::App* app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  return names;
}

std::string DidYouMean(const std::vector<std::string>& known, const std::string& name) {
  std::vector<std::string> close;
  for (const std::string& candidate : common::ClosestNames(known, name, 2))
    if (common::EditDistance(candidate, name) <= std::max<std::size_t>(2, name.size() / 3))
      close.push_back("'" + candidate + "'");
  if (close.empty()) return "";
  return "; did you mean " + (close.size() == 1 ? close[0] : close[0] + " or " + close[1]) + "?";
}

}  // namespace

std::string GlobalOptionsHelp(const CLI::App& app) {
  std::vector<std::pair<std::string, std::string>> rows;
  std::size_t width = 0;
  for (const CLI::Option* option : app.get_options()) {
    if (Hidden(option)) continue;
    rows.emplace_back(OptionName(option), option->get_description());
    width = std::max(width, rows.back().first.size());
  }
  // As CLI11 lays out options: names in a column of 28, a longer name on a line of its own.
  constexpr std::size_t kColumn = 28;
  width = std::min(width, kColumn);
  std::ostringstream text;
  text << "Global options (before or after the command):\n";
  for (const auto& [name, description] : rows) {
    text << "  " << name;
    if (name.size() > width)
      text << '\n' << std::string(width + 4, ' ');
    else
      text << std::string(width - name.size() + 2, ' ');
    text << description << '\n';
  }
  return text.str();
}

void AddFooters(CLI::App& app, const std::string& trailer) {
  const std::string global = GlobalOptionsHelp(app);
  std::vector<CLI::App*> pending = app.get_subcommands([](const CLI::App*) { return true; });
  while (!pending.empty()) {
    CLI::App* command = pending.back();
    pending.pop_back();
    std::string footer = command->get_footer();
    if (!footer.empty()) footer += "\n\n";
    command->footer(footer + global + "\n" + trailer);
    for (CLI::App* sub : command->get_subcommands([](const CLI::App*) { return true; }))
      pending.push_back(sub);
  }
}

std::string UnknownCommand(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* current = &app;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") return "";
    if (word.size() > 1 && word.front() == '-') {
      // An option: skip its value when it takes one and it is not given as --name=value.
      const std::string name = word.substr(0, word.find('='));
      const CLI::Option* option = FindOption(current, name);
      if (option != nullptr && option->get_type_size() != 0 && name == word) ++i;
      continue;
    }
    const std::vector<std::string> known = CommandNames(current);
    if (known.empty()) return "";  // a command's own argument
    const auto sub = std::find(known.begin(), known.end(), word);
    if (sub == known.end()) {
      const std::string path = current == &app ? "" : current->get_name() + " ";
      return "unknown " + path + "command '" + word + "'" + DidYouMean(known, word) +
             "\n(ablation-client " + path + "--help lists them)";
    }
    current = current->get_subcommand(word);
  }
  return "";
}

}  // namespace ablation::client
