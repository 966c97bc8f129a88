// libFuzzer target: page tokens (db/page_token.h): any text is refused with db::Error or decodes
// to an id that encodes back to a token that decodes to the same id.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "db/error.h"
#include "db/page_token.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ablation::db;
  const std::string_view token(reinterpret_cast<const char*>(data), size);
  const uint64_t fingerprint = FilterFingerprint({"abl_*", "bf16"});
  try {
    const int64_t id = DecodePageToken(token, 'm', fingerprint);
    if (DecodePageToken(EncodePageToken('m', id, fingerprint), 'm', fingerprint) != id)
      __builtin_trap();
  } catch (const Error&) {
  }
  return 0;
}
