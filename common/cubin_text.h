// How a cubin travels and is stored: as base64 text (RFC 4648) of its ELF file, since a proto
// string and the database's source column hold text. The clients encode a file that begins with
// an ELF header, the daemon tells a cubin's text from a source by its first characters, and the
// compiler process decodes it (server/compile/cubin.h).
#pragma once

#include <string_view>

namespace ablation::common {

/// Whether `bytes` begin with an ELF header ("\x7fELF"): a cubin to send as base64.
inline bool IsElf(std::string_view bytes) { return bytes.substr(0, 4) == "\177ELF"; }

/// Whether `source` is a cubin's base64: "\x7fELF" encodes as "f0VMRg".
inline bool IsCubinText(std::string_view source) { return source.substr(0, 6) == "f0VMRg"; }

}  // namespace ablation::common
