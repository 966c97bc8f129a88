// A WHERE clause built from fixed fragments for the store's filtered listings; values only ever
// travel as bound parameters, never as SQL text.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "db/sqlite.h"

namespace ablation::db {

class Where {
 public:
  void Add(const char* fragment, int64_t value) { Add(fragment, Param{value}); }
  void Add(const char* fragment, std::string value) { Add(fragment, Param{std::move(value)}); }
  const std::string& Sql() const { return sql_; }
  // Binds every parameter, then returns the next free index.
  int Bind(Statement& s) const {
    int index = 1;
    for (const Param& p : params_) {
      if (const auto* i = std::get_if<int64_t>(&p)) {
        s.BindInt64(index++, *i);
      } else {
        s.BindText(index++, std::get<std::string>(p));
      }
    }
    return index;
  }

 private:
  using Param = std::variant<int64_t, std::string>;
  void Add(const char* fragment, Param p) {
    sql_ += sql_.empty() ? " WHERE " : " AND ";
    sql_ += fragment;
    params_.push_back(std::move(p));
  }
  std::string sql_;
  std::vector<Param> params_;
};

}  // namespace ablation::db
