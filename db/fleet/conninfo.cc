#include "db/fleet/conninfo.h"

#include <libpq-fe.h>

#include <fstream>
#include <regex>

namespace ablation::fleet {
namespace {

bool IsUri(const std::string& s) {
  return s.rfind("postgresql://", 0) == 0 || s.rfind("postgres://", 0) == 0;
}

// The password libpq reads from the string ("" when none).
std::string PasswordOf(const std::string& conninfo) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &error);
  if (error != nullptr) PQfreemem(error);
  if (options == nullptr) return "";
  std::string password;
  for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (std::string(o->keyword) == "password" && o->val != nullptr) password = o->val;
  }
  PQconninfoFree(options);
  return password;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A URI query key as libpq reads it: %XX decoded (`?%70assword=` is `?password=` to libpq).
std::string PercentDecoded(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const int hi = s[i] == '%' && i + 2 < s.size() ? HexValue(s[i + 1]) : -1;
    const int lo = hi >= 0 ? HexValue(s[i + 2]) : -1;
    if (lo >= 0) {
      out += char(hi * 16 + lo);
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

bool HasPassword(const std::string& conninfo) { return !PasswordOf(conninfo).empty(); }

std::string CheckConnInfo(const std::string& conninfo) {
  if (conninfo.empty()) return "the fleet database's connection string is empty";
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &error);
  if (options != nullptr) {
    PQconninfoFree(options);
    return "";
  }
  std::string why = error != nullptr ? error : "out of memory";
  if (error != nullptr) PQfreemem(error);
  while (!why.empty() && why.back() == '\n') why.pop_back();
  return "the fleet database's connection string " + RedactConnInfo(conninfo) +
         " is not one libpq reads (postgresql://USER@HOST:PORT/DB or host=... dbname=...): " +
         RedactPasswords(why, conninfo);
}

std::string RedactConnInfo(const std::string& conninfo) {
  std::string s = conninfo;
  if (IsUri(s)) {
    const size_t start = s.find("://") + 3;
    const size_t end = s.find_first_of("/?", start);
    const size_t at = s.rfind('@', end == std::string::npos ? std::string::npos : end);
    if (at != std::string::npos && at >= start) {
      const size_t colon = s.find(':', start);
      if (colon != std::string::npos && colon < at) s.replace(colon + 1, at - colon - 1, "***");
    }
    // Every query parameter whose key libpq reads as "password", however it is spelled.
    if (size_t at = s.find('?', start); at != std::string::npos) {
      while (at < s.size()) {
        const size_t key = at + 1;
        const size_t eq = s.find('=', key), amp = s.find('&', key);
        const size_t end_of = amp == std::string::npos ? s.size() : amp;
        if (eq != std::string::npos && eq < end_of &&
            PercentDecoded(std::string_view(s).substr(key, eq - key)) == "password")
          s.replace(eq + 1, end_of - eq - 1, "***");
        at = s.find('&', key);
        if (at == std::string::npos) break;
      }
    }
    return RedactPasswords(s, conninfo);
  }
  static const std::regex keyword(R"((password\s*=\s*)('([^'\\]|\\.)*'|\S+))");
  return RedactPasswords(std::regex_replace(s, keyword, "$1***"), conninfo);
}

std::string RedactPasswords(std::string text, const std::string& conninfo) {
  const std::string password = PasswordOf(conninfo);
  if (password.empty()) return text;
  for (size_t at = text.find(password); at != std::string::npos; at = text.find(password, at + 3)) {
    text.replace(at, password.size(), "***");
  }
  return text;
}

std::string ReadConnInfoFile(const std::string& path, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read the fleet database's connection string from '" + path + "'";
    return "";
  }
  std::string line;
  std::getline(in, line);
  const size_t first = line.find_first_not_of(" \t\r");
  const size_t last = line.find_last_not_of(" \t\r");
  line = first == std::string::npos ? "" : line.substr(first, last - first + 1);
  if (line.empty()) *error = "the file '" + path + "' holds no connection string";
  return line;
}

}  // namespace ablation::fleet
