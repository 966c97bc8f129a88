// The keys check every TOML file the daemon reads shares (its configuration, preset files): a key
// the file's table does not know is an InvalidArgument naming the file, the key and its line.
#pragma once

#include <set>
#include <string>

#include <toml++/toml.h>

#include "common/toml_doc.h"
#include "server/core/base/status.h"

namespace ablation::core {

/// Ok, or InvalidArgument with common::UnknownKey's sentence for the first key of `table` not in
/// `known` (`prefix` is the table's dotted path, "" or ending in ".").
inline Status CheckTomlKeys(const toml::table& table, const std::string& origin,
                            const std::string& prefix, const std::set<std::string>& known) {
  const std::string why = common::UnknownKey(table, origin, prefix, known);
  return why.empty() ? Status::Ok() : InvalidArgument(why);
}

}  // namespace ablation::core
