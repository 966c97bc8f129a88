// The one exception type of the storage layer.
#pragma once

#include <stdexcept>
#include <string>

namespace ablation::db {

// Thrown by everything in ablation::db. The message names the database path and, where SQLite
// failed, SQLite's own message, so a log line alone is enough to act on.
class Error : public std::runtime_error {
 public:
  // Lets the gRPC adapter pick a status code without parsing messages.
  enum class Code {
    kStorage,          // SQLite failed (I/O, corruption, busy past the timeout, ...)
    kInvalidArgument,  // a bad page token, an unknown state, ...
    kNotFound,         // the run named does not exist
    kIncompatible,     // the schema version is newer (or, read-only, older) than this code knows
    kFull,             // a write found no room: a full disk, a quota or a file-size limit
  };

  explicit Error(const std::string& message) : Error(Code::kStorage, message) {}
  Error(Code code, const std::string& message) : std::runtime_error(message), code_(code) {}

  Code code() const noexcept { return code_; }

 private:
  Code code_;
};

}  // namespace ablation::db
