// Opaque keyset-pagination tokens: the last id of a page, which listing it belongs to, and a
// fingerprint of the filter, so a token reused with another filter (or another listing) is
// refused instead of silently skipping rows.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace ablation::db {

// FNV-1a over the parts, each ended by a separator so ("ab","") and ("a","b") differ.
uint64_t FilterFingerprint(std::initializer_list<std::string_view> parts);

// listing: one letter naming the listing ('r' runs, 'm' measurements).
std::string EncodePageToken(char listing, int64_t last_id, uint64_t fingerprint);

// The last id carried by token; throws Error(kInvalidArgument) naming the token when it is
// malformed, from another listing, or made for another filter.
int64_t DecodePageToken(std::string_view token, char listing, uint64_t fingerprint);

}  // namespace ablation::db
