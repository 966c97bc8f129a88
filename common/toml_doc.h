// Reading a TOML document the same way everywhere the daemon takes one (its configuration, preset
// files, user kernels' manifests): measured before it is parsed (toml_shape.h), parsed with
// toml++, and every mistake named by the file and line it is on and the key it is under.
// toml++ is a header-only library, so this is a library of its own (ablation_toml), linked by
// the readers only, not by the client-only build.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include <toml++/toml.h>

#include "common/toml_shape.h"

namespace ablation::common {

/// "ORIGIN:LINE" where `node` has a line, else "ORIGIN".
std::string TomlWhere(const std::string& origin, const toml::node* node);

/// "ORIGIN:LINE: KEY: WHAT" (the sentence every reader's mistakes are written as).
std::string TomlError(const std::string& origin, const toml::node* node, const std::string& key,
                      const std::string& what);

/// "" with `out` filled; else the size or nesting refused, or the parser's error as
/// "ORIGIN:LINE:COLUMN: what".
std::string ParseToml(std::string_view text, const std::string& origin,
                      const TomlShapeLimits& limits, toml::table* out);

/// "" when every key of `table` is in `known`; else the first other one as
/// "ORIGIN:LINE: PREFIXKEY: unknown key (known: a, b, ...)".
std::string UnknownKey(const toml::table& table, const std::string& origin,
                       const std::string& prefix, const std::set<std::string>& known);

}  // namespace ablation::common
