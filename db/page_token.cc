#include "db/page_token.h"

#include <charconv>
#include <string>

#include "absl/strings/escaping.h"
#include "db/error.h"

namespace ablation::db {
namespace {

// Base64url without padding (abseil's web-safe alphabet): tokens travel in URLs and shell
// arguments unquoted.
std::string Base64UrlEncode(std::string_view in) {
  return absl::WebSafeBase64Escape(absl::string_view(in.data(), in.size()));
}

bool Base64UrlDecode(std::string_view in, std::string& out) {
  return absl::WebSafeBase64Unescape(absl::string_view(in.data(), in.size()), &out);
}

[[noreturn]] void Refuse(std::string_view token, std::string_view why) {
  throw Error(Error::Code::kInvalidArgument,
              "invalid page token '" + std::string(token) + "': " + std::string(why) +
                  "; pass the next_page_token of the previous page with the same filter, or "
                  "none for the first page");
}

}  // namespace

uint64_t FilterFingerprint(std::initializer_list<std::string_view> parts) {
  uint64_t hash = 14695981039346656037ull;
  auto mix = [&hash](unsigned char c) {
    hash ^= c;
    hash *= 1099511628211ull;
  };
  for (std::string_view part : parts) {
    for (unsigned char c : part) mix(c);
    mix(0x1F);
  }
  return hash;
}

std::string EncodePageToken(char listing, int64_t last_id, uint64_t fingerprint) {
  // "1" is the token format, so it can change without old tokens being misread.
  std::string plain = "1";
  plain.push_back(listing);
  plain += ':' + std::to_string(last_id) + ':' + std::to_string(fingerprint);
  return Base64UrlEncode(plain);
}

int64_t DecodePageToken(std::string_view token, char listing, uint64_t fingerprint) {
  std::string plain;
  if (token.size() > 128 || !Base64UrlDecode(token, plain)) Refuse(token, "not a page token");
  if (plain.size() < 3 || plain[0] != '1' || plain[2] != ':') Refuse(token, "not a page token");
  if (plain[1] != listing) Refuse(token, "it belongs to another listing");
  const std::string_view rest = std::string_view(plain).substr(3);
  const auto colon = rest.find(':');
  if (colon == std::string_view::npos) Refuse(token, "not a page token");
  int64_t last_id = 0;
  uint64_t print = 0;
  const std::string_view id_text = rest.substr(0, colon);
  const std::string_view print_text = rest.substr(colon + 1);
  auto [id_end, id_ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), last_id);
  auto [pr_end, pr_ec] =
      std::from_chars(print_text.data(), print_text.data() + print_text.size(), print);
  if (id_ec != std::errc() || id_end != id_text.data() + id_text.size() || pr_ec != std::errc() ||
      pr_end != print_text.data() + print_text.size() || last_id < 0) {
    Refuse(token, "not a page token");
  }
  if (print != fingerprint) Refuse(token, "it was made for a different filter");
  return last_id;
}

}  // namespace ablation::db
