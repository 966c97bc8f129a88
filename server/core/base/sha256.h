// SHA-256 (OpenSSL) as the daemon writes it everywhere: 64 lower-case hex digits. Tokens are
// stored as it, and a user kernel's source, manifest and cubins are identified by it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ablation::core {

/// SHA-256 of `text` as 64 lower-case hex digits.
std::string Sha256Hex(std::string_view text);

/// `n` bytes as 2n lower-case hex digits.
std::string Hex(const unsigned char* bytes, size_t n);

}  // namespace ablation::core
