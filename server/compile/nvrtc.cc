#include "server/compile/nvrtc.h"

#include <nvrtc.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <regex>
#include <sstream>

namespace ablation::compile {
namespace {

// The source as the preprocessor reads its directives (translation phases 2 and 3): lines spliced
// at a backslash-newline, each comment one space (a block comment may hide a line break inside a
// directive), with the line each character came from.
struct Spliced {
  std::string text;
  std::vector<int> line;
};

Spliced Splice(const std::string& s) {
  Spliced out;
  int line = 1;
  enum { kCode, kLineComment, kBlockComment, kQuoted } state = kCode;
  char quote = 0;
  const auto emit = [&](char c) {
    out.text += c;
    out.line.push_back(line);
  };
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const char next = i + 1 < s.size() ? s[i + 1] : '\0';
    if (c == '\\' && (next == '\n' || (next == '\r' && i + 2 < s.size() && s[i + 2] == '\n'))) {
      i += next == '\n' ? 1 : 2;
      ++line;
      continue;
    }
    if (state == kLineComment) {
      if (c == '\n') state = kCode, emit(c), ++line;
    } else if (state == kBlockComment) {
      if (c == '*' && next == '/') state = kCode, ++i;
      if (c == '\n') ++line;
    } else if (state == kQuoted) {
      emit(c);
      if (c == '\\' && i + 1 < s.size()) {
        emit(next);
        ++i;
      } else if (c == quote || c == '\n') {
        state = kCode;
      }
      if (c == '\n') ++line;
    } else if (c == '/' && next == '/') {
      state = kLineComment, ++i;
    } else if (c == '/' && next == '*') {
      state = kBlockComment, emit(' '), ++i;
    } else {
      if (c == '"' || c == '\'') state = kQuoted, quote = c;
      emit(c);
      if (c == '\n') ++line;
    }
  }
  return out;
}

// A header named by a path of the host rather than by a name under the include folders.
bool OutsideTheIncludeFolders(const std::string& path) {
  if (path.empty() || path[0] == '/') return true;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t slash = path.find('/', start);
    const std::string part =
        path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part == "..") return true;
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return false;
}

// The header literal ("x" or <x>) at `at` in `text`, or "" with `at` unmoved when there is none.
std::string HeaderLiteral(const std::string& text, size_t* at) {
  size_t i = *at;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
  if (i >= text.size() || (text[i] != '"' && text[i] != '<')) return "";
  const char close = text[i] == '"' ? '"' : '>';
  const size_t end = text.find_first_of(std::string(1, close) + "\n", i + 1);
  if (end == std::string::npos || text[end] != close) return "";
  *at = end + 1;
  return text.substr(i, end - i + 1);
}

// The literal as a refusal quotes it: printable ASCII, at most 128 characters.
std::string Quoted(const std::string& literal) {
  std::string out;
  for (char c : literal.substr(0, 128)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return literal.size() > 128 ? out + "..." : out;
}

bool IdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

std::string IncludeRefusal(const std::string& source, const std::string& source_name) {
  const Spliced s = Splice(source);
  const auto refusal = [&](size_t at, const std::string& what, const std::string& literal) {
    return source_name + ":" + std::to_string(s.line[std::min(at, s.line.size() - 1)]) +
           ":1: error: " + what + " " + Quoted(literal) +
           " is refused: a user kernel includes CUDA's headers and the project's "
           "(ablation/ptx.cuh) by name, never a path of the host (absolute, or with ..)";
  };
  // Directives: '#' first on a line, then include, include_next or import.
  for (size_t start = 0; start < s.text.size();) {
    const size_t end = std::min(s.text.find('\n', start), s.text.size());
    size_t i = s.text.find_first_not_of(" \t", start);
    if (i < end && s.text[i] == '#') {
      i = s.text.find_first_not_of(" \t", i + 1);
      size_t word_end = i;
      while (word_end < end && IdentifierChar(s.text[word_end])) ++word_end;
      const std::string word = i < end ? s.text.substr(i, word_end - i) : "";
      if (word == "include" || word == "include_next" || word == "import") {
        size_t at = word_end;
        const std::string literal = HeaderLiteral(s.text, &at);
        if (!literal.empty() && OutsideTheIncludeFolders(literal.substr(1, literal.size() - 2)))
          return refusal(i, "#" + word, literal);
      }
    }
    start = end + 1;
  }
  // __has_include("...") and __has_include_next anywhere: they would tell whether a path exists.
  for (size_t at = s.text.find("__has_include"); at != std::string::npos;
       at = s.text.find("__has_include", at + 1)) {
    if (at > 0 && IdentifierChar(s.text[at - 1])) continue;
    size_t i = at + 13;
    if (s.text.compare(i, 5, "_next") == 0) i += 5;
    const std::string name = s.text.substr(at, i - at);
    i = s.text.find_first_not_of(" \t", i);
    if (i == std::string::npos || s.text[i] != '(') continue;
    ++i;
    const std::string literal = HeaderLiteral(s.text, &i);
    if (!literal.empty() && OutsideTheIncludeFolders(literal.substr(1, literal.size() - 2)))
      return refusal(at, name, literal);
  }
  return "";
}

std::string UniformIncludeErrors(const std::string& log) {
  static constexpr std::string_view kCannotOpen = "cannot open source file \"";
  std::string out;
  size_t start = 0;
  while (start < log.size()) {
    size_t end = log.find('\n', start);
    if (end == std::string::npos) end = log.size();
    std::string line = log.substr(start, end - start);
    if (const size_t at = line.find(kCannotOpen); at != std::string::npos) {
      const size_t close = line.find('"', at + kCannotOpen.size());
      if (close != std::string::npos)
        line = line.substr(0, close + 1) +
               ": not among the headers a user kernel may include (CUDA's and ablation/*.cuh)";
    }
    out += line;
    if (end < log.size()) out += '\n';
    start = end + 1;
  }
  return out;
}

std::string InUserWords(const std::string& log, const std::string& source_name) {
  std::vector<std::string> lines;
  std::string line;
  for (char c : log) {
    if (c == '\n') {
      lines.push_back(std::move(line));
      line.clear();
    } else if (static_cast<unsigned char>(c) >= 0x20 || c == '\t') {
      line += c;
    }
  }
  if (!line.empty()) lines.push_back(std::move(line));
  const std::string prefix = source_name + "(";
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string& l = lines[i];
    size_t close = 0;
    if (l.compare(0, prefix.size(), prefix) == 0 &&
        (close = l.find("): ", prefix.size())) != std::string::npos && close > prefix.size() &&
        l.find_first_not_of("0123456789", prefix.size()) == close) {
      const std::string number = l.substr(prefix.size(), close - prefix.size());
      std::string rest = l.substr(close + 3);
      // NVRTC echoes the line two columns in and puts a caret under the place on the next.
      int column = 1;
      if (i + 2 < lines.size()) {
        const std::string& caret = lines[i + 2];
        const size_t at = caret.find('^');
        if (at != std::string::npos && at >= 2 && caret.find_first_not_of(' ') == at)
          column = int(at) - 1;
      }
      const bool has_kind = rest.rfind("error", 0) == 0 || rest.rfind("warning", 0) == 0 ||
                            rest.rfind("remark", 0) == 0 || rest.rfind("catastrophic", 0) == 0;
      l = source_name + ":" + number + ":" + std::to_string(column) + ": " +
          (has_kind ? "" : "error: ") + rest;
    }
    out += l + "\n";
  }
  return out;
}

std::vector<std::string> CompileOptions(const CompileRequest& request) {
  std::vector<std::string> options = {"--gpu-architecture=" + request.arch, "--std=c++17",
                                      "-lineinfo", "--ptxas-options=-v"};
  for (const auto& [name, value] : request.defines)
    options.push_back("-D" + name + "=" + std::to_string(value));
  for (const std::string& dir : request.include_dirs) options.push_back("--include-path=" + dir);
  return options;
}

PtxasReport ParsePtxasReport(const std::string& log, const std::string& entry) {
  // ptxas -v, per entry:
  //   ptxas info    : Compiling entry function 'k' for 'sm_90a'
  //   ptxas info    : Function properties for k
  //   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  //   ptxas info    : Used 10 registers, used 1 barriers, 1024 bytes smem
  // (hand-parsed: ptxas has no machine-readable report, and these lines have kept their form)
  PtxasReport r;
  std::istringstream in(log);
  std::string line;
  bool in_entry = false;
  const std::regex compiling(R"(Compiling entry function '([^']+)')");
  const std::regex frame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  const std::regex used(R"(Used (\d+) registers)");
  const std::regex smem(R"((\d+) bytes smem)");
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, compiling)) {
      in_entry = m[1] == entry;
      if (in_entry) r.found = true;
      continue;
    }
    if (!in_entry) continue;
    if (std::regex_search(line, m, frame)) {
      r.stack_bytes = std::stoll(m[1]);
      r.spill_store_bytes = std::stoll(m[2]);
      r.spill_load_bytes = std::stoll(m[3]);
    }
    if (std::regex_search(line, m, used)) {
      r.registers = std::stoi(m[1]);
      if (std::regex_search(line, m, smem)) r.static_smem_bytes = std::stoll(m[1]);
    }
  }
  return r;
}

std::string CompilerVersion() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return "nvrtc " + std::to_string(major) + "." + std::to_string(minor);
}

CompileResult Compile(const CompileRequest& request, size_t max_log_bytes) {
  CompileResult out;
  out.compiler = CompilerVersion();
  if (std::string why = IncludeRefusal(request.source, request.source_name); !why.empty()) {
    out.log = why + "\n";
    return out;
  }
  const std::vector<std::string> options = CompileOptions(request);
  std::vector<const char*> argv;
  for (const std::string& o : options) {
    argv.push_back(o.c_str());
    out.options += (out.options.empty() ? "" : " ") + o;
  }
  nvrtcProgram program = nullptr;
  std::vector<const char*> header_texts, header_names;
  for (const auto& [name, text] : request.headers) {
    header_names.push_back(name.c_str());
    header_texts.push_back(text.c_str());
  }
  nvrtcResult r =
      nvrtcCreateProgram(&program, request.source.c_str(), request.source_name.c_str(),
                         int(request.headers.size()), header_texts.data(), header_names.data());
  if (r != NVRTC_SUCCESS) {
    out.log = std::string("nvrtcCreateProgram: ") + nvrtcGetErrorString(r);
    return out;
  }
  const nvrtcResult compiled = nvrtcCompileProgram(program, int(argv.size()), argv.data());
  size_t log_size = 0;
  if (nvrtcGetProgramLogSize(program, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    std::string log(log_size, '\0');
    nvrtcGetProgramLog(program, log.data());
    log.resize(log_size - 1);  // the terminating NUL
    out.log = CutLog(InUserWords(UniformIncludeErrors(log), request.source_name), max_log_bytes);
  }
  if (compiled != NVRTC_SUCCESS) {
    if (out.log.empty()) out.log = nvrtcGetErrorString(compiled);
    nvrtcDestroyProgram(&program);
    return out;
  }
  size_t cubin_size = 0;
  if ((r = nvrtcGetCUBINSize(program, &cubin_size)) != NVRTC_SUCCESS || cubin_size == 0) {
    out.log += std::string("no cubin: ") + nvrtcGetErrorString(r) + "\n";
    nvrtcDestroyProgram(&program);
    return out;
  }
  out.cubin.resize(cubin_size);
  nvrtcGetCUBIN(program, out.cubin.data());
  nvrtcDestroyProgram(&program);
  out.ptxas = ParsePtxasReport(out.log, request.entry);
  // ptxas' -v report is read for registers and spills where the compiler's log carries it, which
  // not every NVRTC does; the entries are checked in the cubin itself.
  out.ok = HasEntries(request, "declare it extern \"C\" __global__", &out);
  return out;
}

std::string CutLog(std::string log, size_t max_log_bytes) {
  if (log.size() <= max_log_bytes) return log;
  log.resize(max_log_bytes);
  return log + "\n[the compiler's log was cut at " + std::to_string(max_log_bytes) + " bytes]\n";
}

bool HasEntries(const CompileRequest& request, const std::string& how, CompileResult* out) {
  // A kernel of the cubin has its code section (".text.<name>" among the ELF's section names).
  std::vector<std::pair<std::string, std::string>> wanted = {{"entry", request.entry}};
  for (const std::string& e : request.also_entries) wanted.emplace_back("reference entry", e);
  for (const auto& [what, name] : wanted) {
    if (out->cubin.find(".text." + name + std::string(1, '\0')) != std::string::npos) continue;
    out->cubin.clear();
    // The cause first; the compiler's report, which names the kernels there are, after it.
    out->log = request.source_name + ": error: " + what + " '" + name +
               "' is not a kernel of this source: " + how + " (the manifest's " +
               (what == "entry" ? "entry" : "[reference] entry") + " names it)\n" +
               (out->log.empty() ? "" : "the compiler's report:\n" + out->log);
    return false;
  }
  return true;
}

}  // namespace ablation::compile
