// The output formats every command takes (--format, -f).
#pragma once

namespace ablation::client {

// kHtml: `report` and `history` only (RunApp refuses it for the other commands).
enum class Format { kTable, kJson, kCsv, kMarkdown, kHtml };

}  // namespace ablation::client
