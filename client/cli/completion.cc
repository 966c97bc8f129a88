#include "client/cli/completion.h"

#include <algorithm>
#include <cctype>

#include "client/output/format.h"

namespace ablation::client {
namespace {

// The command line as the parser defines it, reduced to what a completion needs.
struct OptionModel {
  std::vector<std::string> names;  // "--variant", "-v"; a positional: its name
  std::string help;
  bool takes_value = false;
  bool repeatable = false;
  CompletedValue value;
};

struct CommandModel {
  std::string name;
  std::string help;
  std::vector<OptionModel> options;
  std::vector<OptionModel> positionals;
};

struct Model {
  std::string program;
  std::vector<OptionModel> globals;
  std::vector<CommandModel> commands;
};

// A word a shell may be given unquoted: the alternatives of a validator are such words.
bool IsWord(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (!(std::islower(u) || std::isdigit(u) || c == '_' || c == '-' || c == '.')) return false;
  }
  return true;
}

std::vector<std::string> Split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(separator, start);
    if (end == std::string_view::npos) end = text.size();
    parts.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// Options a user should be offered: not hidden (empty group), not a deprecated spelling.
bool Offered(const CLI::Option* option) {
  return !option->get_group().empty() && option->get_group() != "Deprecated";
}

OptionModel ModelOf(const CLI::Option& option) {
  OptionModel m;
  if (option.nonpositional()) {
    for (const std::string& l : option.get_lnames()) m.names.push_back("--" + l);
    for (const std::string& s : option.get_snames()) m.names.push_back("-" + s);
  } else {
    m.names.push_back(option.get_name());
  }
  m.help = option.get_description();
  // A flag expects no value (CLI11 gives flags expected(0)).
  m.takes_value = option.get_expected_max() != 0 || !option.nonpositional();
  m.repeatable = option.get_expected_max() > 1 ||
                 option.get_multi_option_policy() == CLI::MultiOptionPolicy::TakeAll;
  if (m.takes_value) m.value = ValueCompletion(option);
  return m;
}

Model BuildModel(CLI::App& app, std::string_view program) {
  Model model;
  model.program = std::string(program);
  for (const CLI::Option* o : app.get_options())
    if (Offered(o) && o->nonpositional()) model.globals.push_back(ModelOf(*o));
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_group().empty()) continue;  // hidden
    CommandModel c;
    c.name = sub->get_name();
    c.help = sub->get_description();
    for (const CLI::Option* o : sub->get_options()) {
      if (!Offered(o)) continue;
      (o->nonpositional() ? c.options : c.positionals).push_back(ModelOf(*o));
    }
    model.commands.push_back(std::move(c));
  }
  std::sort(model.commands.begin(), model.commands.end(),
            [](const CommandModel& a, const CommandModel& b) { return a.name < b.name; });
  return model;
}

// The shell function name of the program: ablation-client -> _ablation_client.
std::string FunctionName(std::string_view program) {
  std::string name = "_";
  for (char c : program) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

std::string JoinNames(const std::vector<std::string>& words) { return Join(words, " "); }

// ---- bash

std::string BashWords(const CompletedValue& v, const std::string& fn) {
  std::string words = JoinNames(v.words);
  auto add = [&](const std::string& more) { words += (words.empty() ? "" : " ") + more; };
  if (v.variants) add("$(" + fn + "_names variants)");
  if (v.presets) add("$(" + fn + "_names presets)");
  return words;
}

// The COMPREPLY assignment for a value; nothing to offer gives an empty reply.
std::string BashReply(const CompletedValue& v, const std::string& fn) {
  if (v.files)
    return "compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")";
  const std::string words = BashWords(v, fn);
  if (words.empty()) return "COMPREPLY=()";
  return "mapfile -t COMPREPLY < <(compgen -W \"" + words + "\" -- \"$cur\")";
}

// `text` with every @KEY@ replaced by its value.
std::string Fill(std::string text, const std::vector<std::pair<std::string, std::string>>& values) {
  for (const auto& [key, value] : values) {
    const std::string marker = "@" + key + "@";
    for (std::size_t at = text.find(marker); at != std::string::npos;
         at = text.find(marker, at + value.size()))
      text.replace(at, marker.size(), value);
  }
  return text;
}

// What the names lookup passes on of the line being completed: how to reach the daemon.
constexpr const char* kConnectionOptions = "--server | --token-file | --ca | --cert | --key";

constexpr const char* kBashHead =
    R"SH(# bash completion of @PROGRAM@, generated by `@PROGRAM@ completion bash` from the
# client's own command definitions (regenerate it, do not edit it). Install: save it as
# ~/.local/share/bash-completion/completions/@PROGRAM@, or put
# `source <(@PROGRAM@ completion bash)` in ~/.bashrc.

# The names the daemon knows (variants, presets), asked as the line being completed reaches the
# daemon (--server, --tls, a token: else ABLATION_SERVER...), with a deadline of 2 s.
@FN@_names() {
  local i reach=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      @CONNECTION@) reach+=("${COMP_WORDS[i]}" "${COMP_WORDS[i + 1]}") ;;
      --tls) reach+=(--tls) ;;
    esac
  done
  "${COMP_WORDS[0]}" "${reach[@]}" --timeout 2 "$1" --format csv 2>/dev/null |
    tail -n +2 | cut -d, -f1 | tr -d '\r'
}

)SH";

constexpr const char* kBashMain = R"SH(
@FN@() {
  local cur="" cmd="" value_of="" trim="" i word start=$COMP_CWORD
  # bash splits a word at '=' and '@': a user variant's name (user.tiled@2.pad=1.unroll=4) comes
  # as "user.tiled" "@" "2.pad" "=" "1.unroll" ...; the word being completed is joined back from
  # `start` (an option's '=' is left alone), and the replies are cut to what follows its last
  # '=' or '@'.
  while ((start >= 2)); do
    if [[ ${COMP_WORDS[start]} == [=@] && ${COMP_WORDS[start - 1]} != -* ]]; then
      ((start--))
    elif [[ ${COMP_WORDS[start]} != [=@] && ${COMP_WORDS[start - 1]} == [=@] &&
      ${COMP_WORDS[start - 2]} != -* ]]; then
      ((start -= 2))
    else
      break
    fi
  done
  for ((i = start; i <= COMP_CWORD; i++)); do cur+=${COMP_WORDS[i]}; done
  [[ $cur == *?[=@]* && $cur != -* ]] && trim=${cur%"${cur##*[=@]}"}
  # The subcommand is the first word that is neither an option nor an option's value;
  # value_of: the option whose value is being completed (--opt VALUE, --opt=VALUE).
  for ((i = 1; i < start; i++)); do
    word=${COMP_WORDS[i]}
    if [[ $word == = ]]; then
      ((i + 1 == start)) && [[ ${COMP_WORDS[i - 1]} == -* ]] && value_of=${COMP_WORDS[i - 1]}
      ((i++))
    elif [[ $word == -* ]]; then
      if [[ ${COMP_WORDS[i + 1]} != = ]] && @FN@_takes_value "$cmd" "$word"; then
        ((i + 1 == start)) && value_of=$word
        ((i++))
      fi
    elif [[ -z $cmd ]]; then
      cmd=$word
    fi
  done
  if [[ $cur == = ]]; then
    value_of=${COMP_WORDS[COMP_CWORD - 1]}
    cur=""
  fi
  if [[ -n $value_of ]]; then
    @FN@_value "$cmd" "$value_of" "$cur"
  elif [[ -z $cmd && $cur != -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "@COMMANDS@" -- "$cur")
  elif [[ $cur == -* ]] || ! @FN@_positional "$cmd" "$cur"; then
    mapfile -t COMPREPLY < <(compgen -W "$(@FN@_options "$cmd")" -- "$cur")
  fi
  if [[ -n $trim ]]; then COMPREPLY=("${COMPREPLY[@]#"$trim"}"); fi
}
complete -F @FN@ @PROGRAM@
)SH";

std::string BashScript(const Model& m) {
  const std::string fn = FunctionName(m.program);
  auto quoted_patterns = [](const std::string& command, const std::vector<std::string>& names) {
    std::vector<std::string> patterns;
    for (const std::string& n : names) patterns.push_back("\"" + command + " " + n + "\"");
    return Join(patterns, " | ");
  };
  std::string s;

  // Which options take a value: per subcommand, then the global ones (valid after it too).
  s += "# Whether option $2 of subcommand $1 (\"\" before the subcommand) takes a value.\n";
  s += fn + "_takes_value() {\n  case \"$1 $2\" in\n";
  for (const CommandModel& c : m.commands) {
    std::vector<std::string> names;
    for (const OptionModel& o : c.options)
      if (o.takes_value) names.insert(names.end(), o.names.begin(), o.names.end());
    if (!names.empty()) s += "    " + quoted_patterns(c.name, names) + ") return 0 ;;\n";
  }
  std::vector<std::string> global_values;
  for (const OptionModel& o : m.globals)
    if (o.takes_value) global_values.insert(global_values.end(), o.names.begin(), o.names.end());
  s += "  esac\n  case \"$2\" in\n    " + Join(global_values, " | ") + ") return 0 ;;\n";
  s += "  esac\n  return 1\n}\n\n";

  s += "# COMPREPLY for the value of option $2 of subcommand $1, the word being $cur.\n";
  s += fn + "_value() {\n  local cur=$3\n  case \"$1 $2\" in\n";
  for (const CommandModel& c : m.commands) {
    for (const OptionModel& o : c.options) {
      if (!o.takes_value || BashReply(o.value, fn) == "COMPREPLY=()") continue;
      s += "    " + quoted_patterns(c.name, o.names) + ") " + BashReply(o.value, fn) + " ;;\n";
    }
  }
  for (const OptionModel& o : m.globals) {
    if (!o.takes_value || BashReply(o.value, fn) == "COMPREPLY=()") continue;
    std::vector<std::string> patterns;
    for (const std::string& n : o.names) patterns.push_back("*\" " + n + "\"");
    s += "    " + Join(patterns, " | ") + ") " + BashReply(o.value, fn) + " ;;\n";
  }
  s += "    *) COMPREPLY=() ;;\n  esac\n}\n\n";

  s += "# The options of subcommand $1 (the global ones before a subcommand).\n";
  std::vector<std::string> globals;
  for (const OptionModel& o : m.globals)
    globals.insert(globals.end(), o.names.begin(), o.names.end());
  s += fn + "_options() {\n  case $1 in\n";
  for (const CommandModel& c : m.commands) {
    std::vector<std::string> names;
    for (const OptionModel& o : c.options)
      names.insert(names.end(), o.names.begin(), o.names.end());
    for (const std::string& g : globals)  // -h,--help is both the command's and the app's
      if (std::find(names.begin(), names.end(), g) == names.end()) names.push_back(g);
    s += "    " + c.name + ") echo \"" + JoinNames(names) + "\" ;;\n";
  }
  s += "    *) echo \"" + JoinNames(globals) + "\" ;;\n  esac\n}\n\n";

  s += "# COMPREPLY for an argument of subcommand $1 that is no option; 1 when it takes none.\n";
  s += fn + "_positional() {\n  local cur=$2\n  case $1 in\n";
  for (const CommandModel& c : m.commands) {
    if (c.positionals.empty()) continue;
    CompletedValue all;
    for (const OptionModel& p : c.positionals) {
      for (const std::string& w : p.value.words)
        if (std::find(all.words.begin(), all.words.end(), w) == all.words.end())
          all.words.push_back(w);
      all.files |= p.value.files;
      all.variants |= p.value.variants;
      all.presets |= p.value.presets;
    }
    s += "    " + c.name + ") " + BashReply(all, fn) + " ;;\n";
  }
  s += "    *) return 1 ;;\n  esac\n}\n";

  std::vector<std::string> commands;
  for (const CommandModel& c : m.commands) commands.push_back(c.name);
  const std::vector<std::pair<std::string, std::string>> values = {
      {"PROGRAM", m.program},
      {"FN", fn},
      {"CONNECTION", kConnectionOptions},
      {"COMMANDS", JoinNames(commands)}};
  return Fill(kBashHead, values) + s + Fill(kBashMain, values);
}

// ---- zsh

// A short one-line description: what fits beside a candidate.
std::string Brief(std::string_view text) {
  std::string line(text.substr(0, text.find('\n')));
  if (line.size() > 72) line = line.substr(0, 69) + "...";
  return line;
}

// Text inside a single-quoted zsh word.
std::string SingleQuoted(std::string_view text) {
  std::string out;
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out;
}

// The [explanation] of an _arguments spec: brackets and colons are its syntax.
std::string Explanation(std::string_view text) {
  std::string out;
  for (char c : Brief(text)) {
    if (c == '\\' || c == '[' || c == ']' || c == ':') out += '\\';
    out += c;
  }
  return out;
}

// The action of an _arguments spec for a value; helpers for combinations go into `helpers`.
std::string ZshAction(const CompletedValue& v, const std::string& fn, std::string* helpers,
                      int* helper_count) {
  std::vector<std::string> parts;
  if (!v.words.empty()) parts.push_back("words:value:(" + JoinNames(v.words) + ")");
  if (v.files) parts.push_back("files:file:_files");
  if (v.variants) parts.push_back("variants:variant:" + fn + "_variants");
  if (v.presets) parts.push_back("presets:preset:" + fn + "_presets");
  if (parts.empty()) return " ";
  if (parts.size() == 1)
    return parts.front().substr(parts.front().find(':', parts.front().find(':') + 1) + 1);
  const std::string name = fn + "_value" + std::to_string(++*helper_count);
  *helpers += name + "() {\n  _alternative";
  for (const std::string& p : parts) *helpers += " '" + p + "'";
  *helpers += "\n}\n";
  return name;
}

std::string ZshOptionSpecs(const std::vector<OptionModel>& options, const std::string& fn,
                           std::string* helpers, int* helper_count, const std::string& indent) {
  std::string s;
  for (const OptionModel& o : options) {
    for (const std::string& n : o.names) {
      std::string spec = (o.repeatable ? "*" : "") + n + "[" + Explanation(o.help) + "]";
      if (o.takes_value) {
        std::string message = o.names.front();
        message.erase(0, message.find_first_not_of('-'));
        spec += ":" + message + ":" + ZshAction(o.value, fn, helpers, helper_count);
      }
      s += indent + "'" + SingleQuoted(spec) + "'\n";
    }
  }
  return s;
}

constexpr const char* kZshHead = R"SH(#compdef @PROGRAM@
# zsh completion of @PROGRAM@, generated by `@PROGRAM@ completion zsh` from the client's
# own command definitions (regenerate it, do not edit it). Install: save it as _@PROGRAM@
# in a folder of $fpath before compinit runs, or put `source <(@PROGRAM@ completion zsh)`
# after compinit in ~/.zshrc.

# The names the daemon knows (variants, presets), asked as the line being completed reaches the
# daemon (--server, --tls, a token: else ABLATION_SERVER...), with a deadline of 2 s.
@FN@_names() {
  local -a reach
  local i
  for ((i = 2; i < ${#@FN@_line[@]}; i++)); do
    case ${@FN@_line[i]} in
      @CONNECTION@) reach+=("${@FN@_line[i]}" "${@FN@_line[i + 1]}") ;;
      --tls) reach+=(--tls) ;;
    esac
  done
  "${@FN@_line[1]}" "${reach[@]}" --timeout 2 "$1" --format csv 2>/dev/null |
    tail -n +2 | cut -d, -f1 | tr -d '\r'
}
@FN@_variants() {
  local -a names
  names=(${(f)"$(@FN@_names variants)"})
  compadd -a names
}
@FN@_presets() {
  local -a names
  names=(${(f)"$(@FN@_names presets)"})
  compadd -a names
}
)SH";

constexpr const char* kZshMain = R"SH(
@FN@() {
  typeset -ga @FN@_line
  @FN@_line=("${words[@]}")  # before _arguments shifts $words to the subcommand
  local curcontext=$curcontext state state_descr line ret=1
  typeset -A opt_args
  local -a globals commands
  globals=(
@GLOBALS@  )
  commands=(
@COMMANDS@  )
  _arguments -C $globals '1:command:->command' '*::argument:->argument' && ret=0
  case $state in
    command)
      _describe -t commands command commands && ret=0
      ;;
    argument)
      curcontext=${curcontext%:*:*}:@PROGRAM@-$line[1]:
      case $line[1] in
@CASES@      esac
      ;;
  esac
  return ret
}

if [[ ${zsh_eval_context[-1]} == loadautofunc ]]; then
  @FN@ "$@"
else
  compdef @FN@ @PROGRAM@
fi
)SH";

std::string ZshScript(const Model& m) {
  const std::string fn = FunctionName(m.program);
  std::string helpers;
  int helper_count = 0;
  const std::string globals = ZshOptionSpecs(m.globals, fn, &helpers, &helper_count, "    ");
  std::string commands;
  std::string cases;
  for (const CommandModel& c : m.commands) {
    commands += "    '" + SingleQuoted(c.name + ":" + Brief(c.help)) + "'\n";
    cases += "        " + c.name + ")\n          _arguments -S $globals \\\n";
    // Its own -h,--help is also the app's, in $globals: _arguments refuses a doubled option.
    std::vector<OptionModel> own;
    for (const OptionModel& o : c.options) {
      const bool global = std::any_of(m.globals.begin(), m.globals.end(),
                                      [&](const OptionModel& g) { return g.names == o.names; });
      if (!global) own.push_back(o);
    }
    std::string specs = ZshOptionSpecs(own, fn, &helpers, &helper_count, "            ");
    int position = 0;
    for (const OptionModel& p : c.positionals) {
      const std::string action = ZshAction(p.value, fn, &helpers, &helper_count);
      const std::string where = p.repeatable ? "*" : std::to_string(++position);
      specs += "            '" + SingleQuoted(where + ":" + p.names.front() + ":" + action) + "'\n";
    }
    // One spec per line, each ended by a continuation but the last.
    std::string joined;
    for (const std::string& line : Split(specs, '\n'))
      if (!line.empty()) joined += (joined.empty() ? "" : " \\\n") + line;
    cases += joined + " && ret=0\n          ;;\n";
  }
  const std::vector<std::pair<std::string, std::string>> values = {
      {"PROGRAM", m.program},
      {"FN", fn},
      {"CONNECTION", kConnectionOptions},
      {"GLOBALS", globals},
      {"COMMANDS", commands},
      {"CASES", cases}};
  return Fill(kZshHead, values) + helpers + Fill(kZshMain, values);
}

}  // namespace

CompletedValue ValueCompletion(const CLI::Option& option) {
  CompletedValue v;
  for (std::string piece : Split(option.get_type_name(), ':')) {
    if (piece == "FILE") v.files = true;
    if (piece == "VARIANT") v.variants = true;
    if (piece == "PRESET") v.presets = true;
    // CLI::IsMember describes its set as {a,b}; the client's validators as a|b.
    const bool set = piece.size() > 1 && piece.front() == '{' && piece.back() == '}';
    if (set) piece = piece.substr(1, piece.size() - 2);
    const std::vector<std::string> alternatives = Split(piece, set ? ',' : '|');
    if (alternatives.size() < 2 && !set) continue;
    for (const std::string& a : alternatives) {
      if (a == "VARIANT") v.variants = true;
      if (IsWord(a) && std::find(v.words.begin(), v.words.end(), a) == v.words.end())
        v.words.push_back(a);
    }
  }
  return v;
}

CLI::App* SetupCompletion(CLI::App& app, CompletionOptions& options) {
  CLI::App* sub = app.add_subcommand(
      "completion",
      "Print a completion script for bash or zsh: `source <(ablation-client completion bash)`");
  sub->add_option("shell", options.shell, "bash or zsh")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh"}));
  return sub;
}

std::string CompletionScript(CLI::App& app, std::string_view shell, std::string_view program) {
  const Model model = BuildModel(app, program);
  return shell == "zsh" ? ZshScript(model) : BashScript(model);
}

}  // namespace ablation::client
