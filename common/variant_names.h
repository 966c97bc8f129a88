// Variant names as people type them, for reads that never reach a daemon (a fleet's PostgreSQL,
// db/fleet/): a short ablation-family name ("L1_R1_s3", any case, its fields in any order; bl
// defaults to 0, sw to 1, rb to 0) stands for its canonical name ("abl_L1_R1_bl0_s3_sw1"), as the
// daemon takes it (server/core/plan/variant_names.h, whose parser this one agrees with:
// tests/core/plan/variant_names_test.cc). A user kernel's short name needs its manifest, which
// only the daemon holds, so it is not resolved here.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ablation::common {

/// The canonical name of a canonical or short ablation name; nullopt when `text` is not one.
std::optional<std::string> CanonicalAblationName(std::string_view text);

/// True if the selector holds glob characters (* ? [).
bool IsGlob(std::string_view selector);

/// What stored names are matched against: a glob as given, a short ablation name as its
/// canonical name, any other name as given.
std::string CanonicalVariantSelector(std::string_view selector);

/// A user variant's name without its version tag ("@2", "@latest"; kernels/user/manifest.h
/// VersionedName): "user.tiled@2.stages=3" -> "user.tiled.stages=3", "tiled@latest_s3" ->
/// "tiled_s3"; a name without one as it is. `tag`, where given, gets what followed the '@'
/// ("2", "latest"; "" without one).
std::string WithoutVersion(const std::string& name, std::string* tag = nullptr);

/// Levenshtein distance, for "did you mean".
size_t EditDistance(std::string_view a, std::string_view b);

/// The `count` names of `known` closest to `name` (its canonical spelling when it has one),
/// nearest first, ties in the order given.
std::vector<std::string> ClosestNames(const std::vector<std::string>& known, std::string_view name,
                                      size_t count = 3);

}  // namespace ablation::common
