// Who a caller is and what it may do, without gRPC: roles, the token file (SHA-256 of each
// token, never the token itself), and the identity of an anonymous caller. server/rpc/auth.h
// applies this to calls.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "server/core/base/sha256.h"
#include "server/core/base/status.h"

namespace ablation::core {

/// Ordered: each role may do everything the ones before it may.
enum class Role {
  kNone = 0,  ///< nothing but health and reflection
  kRead = 1,  ///< queries and reports
  kRun = 2,   ///< queue, verify, profile; cancel its own runs
  kAdmin = 3  ///< lock clocks, cancel anyone's run
};

std::string_view RoleName(Role role);
/// "read", "run", "admin" (and "none" where `allow_none`); nullopt otherwise.
std::optional<Role> ParseRole(std::string_view text, bool allow_none = false);

/// The caller as the daemon records it: runs store `name` as requested_by.
struct Identity {
  std::string name;  ///< a token's name, "cert:<common name>", or "anonymous"
  Role role = Role::kNone;
  bool authenticated = false;
};

/// The token file: one token per line as `<sha256 hex> <name> <role>`, '#' comments and blank
/// lines ignored. `ablationd --hash-token NAME:ROLE` prints such a line.
class TokenTable {
 public:
  /// Parses the file's text; errors name the origin and line and never quote a hash.
  static Status Parse(std::string_view text, const std::string& origin, TokenTable* out);
  static Status Load(const std::string& path, TokenTable* out);

  bool empty() const { return by_hash_.empty(); }
  size_t size() const { return by_hash_.size(); }
  /// The identity a presented token stands for, or nullopt for a token not in the file.
  std::optional<Identity> Lookup(std::string_view token) const;

 private:
  struct Entry {
    std::string name;
    Role role;
  };
  std::map<std::string, Entry> by_hash_;
};

/// The line `--hash-token` prints for a token; InvalidArgument for a bad name or role.
Status TokenLine(std::string_view token, std::string_view name_colon_role, std::string* line);

/// A fresh random token (32 bytes from OpenSSL's RAND_bytes, as 64 hex digits).
std::string NewToken();

}  // namespace ablation::core
