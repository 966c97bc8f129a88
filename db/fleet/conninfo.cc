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

}  // namespace

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
    static const std::regex query(R"(([?&]password=)[^&]*)");
    s = std::regex_replace(s, query, "$1***");
    return s;
  }
  static const std::regex keyword(R"((password\s*=\s*)('([^'\\]|\\.)*'|\S+))");
  return std::regex_replace(s, keyword, "$1***");
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
