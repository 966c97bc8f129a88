// A TOML text's size and nesting, checked before toml++ parses it. Debian's toml++ 3.3 caps how
// deep arrays and inline tables nest (256) but not dotted keys: `a.a.a...a = 1` 50,000 deep (a
// 100 KB manifest) overflows the stack of the thread that parses it (SIGSEGV, the daemon gone),
// and a thread's stack is smaller than the main thread's. So every TOML text the daemon reads
// from a caller or a file (a manifest, the configuration at start and at SIGHUP, presets) is
// measured here first, by a scan that only counts: strings and comments skipped, key parts and
// brackets counted, nothing allocated per level.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ablation::common {

struct TomlShapeLimits {
  size_t max_bytes = 1 << 20;
  /// Tables within tables, however spelled: the parts of a table header, of a dotted key and
  /// the arrays and inline tables a value opens, added up along one path.
  int max_depth = 64;
};

/// "" when `text` is within `limits`; else a sentence naming `origin`, the line and the figure
/// ("manifest:1: a key nested more than 64 deep ..."). Says nothing of whether the text is
/// valid TOML: the parser says that.
std::string CheckTomlShape(std::string_view text, const std::string& origin,
                           const TomlShapeLimits& limits = {});

}  // namespace ablation::common
