// How a manifest's TOML is read, key by key, every mistake named by file, line and key: shared by
// the manifest (manifest.cc) and a kernel's own contract (contract.cc). Internal to this folder.
#pragma once

#include <toml++/toml.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "kernels/user/contract.h"
#include "kernels/user/expression.h"
#include "kernels/user/manifest.h"

namespace ablation::kernels::user::internal {

/// "tiled.toml:7: knob[1].values: expected whole numbers" (no line where TOML has none).
std::string Err(const std::string& origin, const toml::node* node, const std::string& key,
                const std::string& what);
/// "" or the first key of `t` not in `known`, named with the known ones.
std::string CheckKeys(const toml::table& t, const std::string& origin, const std::string& prefix,
                      const std::set<std::string>& known);
/// A string at `key` of `t`; "" (and *out untouched) when absent and not required.
std::string ReadString(const toml::table& t, const std::string& origin, const std::string& prefix,
                       const std::string& key, bool required, std::string* out);
/// [a-z][a-z0-9_]* (or, `upper`, [A-Z_][A-Z0-9_]*), at most 32 characters.
bool IsIdentifier(const std::string& s, bool upper);
/// An expression at `key` over `names`, bounded by `limits`.
std::string ReadExpression(const toml::table& t, const std::string& origin,
                           const std::string& prefix, const std::string& key, bool required,
                           const std::vector<std::string>& names, const ManifestLimits& limits,
                           std::unique_ptr<Expression>* out);

/// A kernel's own contract (contract.h) from `root`'s [contract] (kind = "general"),
/// [[tensor]], [[scalar]], [reference] and [work]; `knobs` are the knob names expressions may
/// use beside the sizes. "" or the first mistake.
std::string ReadGeneralContract(const toml::table& root, const std::string& origin,
                                const ManifestLimits& limits, const std::vector<std::string>& knobs,
                                GeneralContract* out);

}  // namespace ablation::kernels::user::internal
