#include "server/core/setup/auth.h"

#include <openssl/rand.h>
#include <openssl/sha.h>

#include <cctype>
#include <fstream>
#include <sstream>

#include "server/core/plan/limits.h"

namespace ablation::core {
namespace {

bool IsHexDigest(std::string_view s) {
  if (s.size() != 2 * SHA256_DIGEST_LENGTH) return false;
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c)) ||
        std::isupper(static_cast<unsigned char>(c)))
      return false;
  return true;
}

// Names are recorded as requested_by and compared for ownership: plain words only.
bool IsGoodName(std::string_view name) {
  if (name.empty() || name.size() > 64 || name == "anonymous") return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.' &&
        c != '@')
      return false;
  return true;
}

}  // namespace

// Words of an enum by a switch rather than a table: the compiler names any value left out
// (-Wswitch). Such switches look alike across the core; what they map differs.
std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kNone:
      return "none";
    case Role::kRead:
      return "read";
    case Role::kRun:
      return "run";
    case Role::kAdmin:
      return "admin";
  }
  return "none";
}

std::optional<Role> ParseRole(std::string_view text, bool allow_none) {
  if (text == "read") return Role::kRead;
  if (text == "run") return Role::kRun;
  if (text == "admin") return Role::kAdmin;
  if (allow_none && text == "none") return Role::kNone;
  return std::nullopt;
}

std::string NewToken() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return "";
  return Hex(bytes, sizeof bytes);
}

Status TokenTable::Parse(std::string_view text, const std::string& origin, TokenTable* out) {
  TokenTable table;
  std::istringstream in{std::string(text)};
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string where = origin + ":" + std::to_string(number) + ": ";
    std::istringstream words(line);
    std::string hash, name, role, extra;
    words >> hash;
    if (hash.empty() || hash[0] == '#') continue;
    words >> name >> role >> extra;
    if (!IsHexDigest(hash))
      return InvalidArgument(where +
                             "expected the SHA-256 of a token as 64 lower-case hex digits "
                             "(ablationd --hash-token NAME:ROLE prints a line)");
    if (!IsGoodName(name))
      return InvalidArgument(where + "the name " + QuoteInput(name) +
                             " must be 1-64 letters, digits, '-', '_', '.' or '@' (not "
                             "'anonymous')");
    auto parsed = ParseRole(role);
    if (!parsed)
      return InvalidArgument(where + "role " + QuoteInput(role) + ": read, run or admin");
    if (!extra.empty()) return InvalidArgument(where + "expected three words: HASH NAME ROLE");
    if (!table.by_hash_.emplace(hash, Entry{name, *parsed}).second)
      return InvalidArgument(where + "the same token is listed twice");
  }
  *out = std::move(table);
  return Status::Ok();
}

Status TokenTable::Load(const std::string& path, TokenTable* out) {
  std::ifstream in(path);
  if (!in) return InvalidArgument("auth.tokens: cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return Parse(ss.str(), path, out);
}

std::optional<Identity> TokenTable::Lookup(std::string_view token) const {
  // A map keyed by the digest: what is compared is a hash of the secret, never the secret, so
  // the comparison's timing says nothing useful about the token.
  auto it = by_hash_.find(Sha256Hex(token));
  if (it == by_hash_.end()) return std::nullopt;
  return Identity{it->second.name, it->second.role, true};
}

Status TokenLine(std::string_view token, std::string_view name_colon_role, std::string* line) {
  const size_t colon = name_colon_role.rfind(':');
  if (colon == std::string_view::npos)
    return InvalidArgument("--hash-token: expected NAME:ROLE (role read, run or admin)");
  const std::string_view name = name_colon_role.substr(0, colon);
  const std::string_view role = name_colon_role.substr(colon + 1);
  if (!IsGoodName(name))
    return InvalidArgument("--hash-token: the name " + QuoteInput(name) +
                           " must be 1-64 letters, digits, '-', '_', '.' or '@'");
  if (!ParseRole(role))
    return InvalidArgument("--hash-token: role " + QuoteInput(role) + ": read, run or admin");
  if (token.size() < 16)
    return InvalidArgument("--hash-token: a token needs at least 16 characters");
  *line = Sha256Hex(token) + " " + std::string(name) + " " + std::string(role);
  return Status::Ok();
}

}  // namespace ablation::core
