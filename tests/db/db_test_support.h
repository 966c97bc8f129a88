// Shared by the db tests: a fresh temporary directory per test, and a raw SQLite handle for
// looking underneath the Store (what is really on disk).
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace ablation::db::testing {

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("ablation_db_" + std::to_string(::getpid()) + "_" + info->test_suite_name() + "_" +
            info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string PathOf(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

// A raw connection for setting up old databases and checking what the Store wrote.
class RawDb {
 public:
  explicit RawDb(const std::string& path) {
    if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) {
      ADD_FAILURE() << "cannot open " << path << ": " << sqlite3_errmsg(db_);
    }
  }
  ~RawDb() { sqlite3_close(db_); }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;

  void Exec(const std::string& sql) {
    char* message = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
      ADD_FAILURE() << "SQL failed: " << (message ? message : "?") << "\nin: " << sql;
      sqlite3_free(message);
    }
  }
  int64_t Int(const std::string& sql) {
    sqlite3_stmt* s = nullptr;
    int64_t value = -12345;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW) {
      value = sqlite3_column_int64(s, 0);
    } else {
      ADD_FAILURE() << "no value from: " << sql << ": " << sqlite3_errmsg(db_);
    }
    sqlite3_finalize(s);
    return value;
  }
  std::string Text(const std::string& sql) {
    sqlite3_stmt* s = nullptr;
    std::string value = "<none>";
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW) {
      const auto* t = sqlite3_column_text(s, 0);
      value = t ? reinterpret_cast<const char*>(t) : "<null>";
    } else {
      ADD_FAILURE() << "no value from: " << sql << ": " << sqlite3_errmsg(db_);
    }
    sqlite3_finalize(s);
    return value;
  }
  std::string Blob(const std::string& sql) {
    sqlite3_stmt* s = nullptr;
    std::string value;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW) {
      value.assign(static_cast<const char*>(sqlite3_column_blob(s, 0)), sqlite3_column_bytes(s, 0));
    } else {
      ADD_FAILURE() << "no value from: " << sql << ": " << sqlite3_errmsg(db_);
    }
    sqlite3_finalize(s);
    return value;
  }

 private:
  sqlite3* db_ = nullptr;
};

inline std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace ablation::db::testing
