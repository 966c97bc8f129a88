// Variant names: canonical names are the key everywhere; short forms and globs select them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/registry.h"
#include "server/core/base/status.h"

namespace ablation::core {

/// Fields of an ablation-family name abl_L{l}_R{r}_bl{b}_s{s}_sw{w}[_rb1].
struct AblationName {
  int load_mode = 0;
  int read_mode = 0;
  int b_layout = 0;
  int stages = 1;
  int swizzle = 1;
  int rb = 0;

  std::string Canonical() const;
};

/// Parses a canonical or short ablation name ("abl_L1_R1_bl0_s3_sw1", "L1_R1_s3", "l1_r1_s3_rb1").
/// Fields may come in any order; L, R and s are required; bl defaults to 0, sw to 1, rb to 0.
/// Returns nullopt if the text is not an ablation name at all.
std::optional<AblationName> ParseAblationName(std::string_view text);

/// True if the pattern holds glob characters (* ? [).
bool IsGlob(std::string_view pattern);

/// fnmatch-style glob match (*, ?, [...]), case-sensitive.
bool GlobMatch(std::string_view pattern, std::string_view name);

/// Levenshtein distance, for "did you mean".
size_t EditDistance(std::string_view a, std::string_view b);

/// The `count` known names closest to `name`.
std::vector<std::string> ClosestNames(const kernels::Registry& registry, std::string_view name,
                                      size_t count = 3);

/// Longest selector Resolve looks at (the rpc layer's limits refuse longer ones earlier).
inline constexpr size_t kMaxSelectorLength = 256;

/// Resolves one selector (canonical name, short form or glob) to registry entries, in registry
/// order. An unknown name or a glob that matches nothing is an InvalidArgument naming `field`
/// and, for names, the closest known ones.
Status Resolve(const kernels::Registry& registry, std::string_view selector, std::string_view field,
               std::vector<const kernels::Variant*>* out);

}  // namespace ablation::core
