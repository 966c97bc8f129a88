// A fleet database's connection string (libpq's "postgresql://user:pass@host/db" or
// "host=... password=..." form): checked before anything connects, and never shown with its
// password, in a log line, an error or a metric.
#pragma once

#include <string>

namespace ablation::fleet {

/// "" when libpq can parse `conninfo`; else a sentence naming what is wrong (without the
/// password). An empty string is refused.
std::string CheckConnInfo(const std::string& conninfo);

/// Whether libpq would read a password from the string (then it must not be on a command line:
/// any local user reads those in ps).
bool HasPassword(const std::string& conninfo);

/// The string with its password (URI user info, a query key libpq reads as password however it
/// is percent-encoded, or password=...) shown as "***", and the password itself wherever else it
/// appears.
std::string RedactConnInfo(const std::string& conninfo);

/// `text` (a server's error message, say) with every occurrence of the password in `conninfo`
/// replaced by "***".
std::string RedactPasswords(std::string text, const std::string& conninfo);

/// The connection string in a file (a mounted Kubernetes Secret): its first line, trimmed.
/// Returns "" with `error` set naming the file when it cannot be read or is empty.
std::string ReadConnInfoFile(const std::string& path, std::string* error);

}  // namespace ablation::fleet
