// Where a command's output goes and how wide its tables may be: -o FILE and the terminal width.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ablation::client {

// The width tables are fitted to: `flag` (--width) when given, 0 meaning no limit; else the
// terminal's (TIOCGWINSZ) when the output is stdout and stdout is a terminal; else $COLUMNS when
// it is a positive number; else 0, no limit.
std::size_t OutputWidth(std::optional<int> flag, bool to_stdout);

// Whether `path` can take a command's output, asked before the command runs (a long run should
// not end in "cannot write"): empty when it can, else why not.
std::string CheckOutputPath(const std::string& path);

// Writes `text` to `path` whole or not at all: into a temporary file beside it, then renamed
// over it, so a reader never sees half a report and a failed write leaves the old file. A path
// that exists and is no regular file (/dev/stdout, a FIFO) is written in place. Empty on
// success, else what went wrong.
std::string WriteOutputFile(const std::string& path, std::string_view text);

// The whole of the file at `path` (bytes as they are); false when it cannot be read.
bool ReadFile(const std::string& path, std::string* out);

}  // namespace ablation::client
