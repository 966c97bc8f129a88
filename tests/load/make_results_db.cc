// make-results-db DB [MEASUREMENTS | --migrate]: fills a new database with MEASUREMENTS (default
// 1,000,000) measurements, as years of use would: runs of 500 measurements on two GPUs, a third of
// them tagged nightly, 256 variants x 2 dtypes x 8 shapes, a few failures. The schema is the one
// db::Store::Open makes; the rows go in through SQLite directly, in one transaction, so that a
// million take seconds (the store commits each measurement on its own, as it must). For the
// dashboard timings in db/schema.md and tests/load/dashboard_timing.sh.
#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "db/store.h"

namespace {

void Exec(sqlite3* db, const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    std::fprintf(stderr, "make-results-db: %s: %s\n", sql, error ? error : "?");
    std::exit(1);
  }
}

sqlite3_stmt* Prepare(sqlite3* db, const char* sql) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK) {
    std::fprintf(stderr, "make-results-db: %s: %s\n", sql, sqlite3_errmsg(db));
    std::exit(1);
  }
  return s;
}

void Step(sqlite3* db, sqlite3_stmt* s) {
  if (sqlite3_step(s) != SQLITE_DONE) {
    std::fprintf(stderr, "make-results-db: %s\n", sqlite3_errmsg(db));
    std::exit(1);
  }
  sqlite3_reset(s);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: make-results-db DB [MEASUREMENTS]\n");
    return 2;
  }
  const std::string path = argv[1];
  if (argc > 2 && std::string(argv[2]) == "--migrate") {
    ablation::db::Store::Open(path);  // an existing database, brought to this schema
    return 0;
  }
  const long total = argc > 2 ? std::atol(argv[2]) : 1000000;
  std::filesystem::remove(path);
  ablation::db::Store::Open(path);  // creates and migrates, then closes

  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  Exec(db, "PRAGMA synchronous = OFF; BEGIN");
  sqlite3_stmt* run = Prepare(db, R"sql(
INSERT INTO runs (id, state, kind, device_index, device_name, device_uuid, requested_by,
                  created_at_ms, started_at_ms, finished_at_ms, planned, git_revision)
VALUES (?1, ?2, 'ablation', ?3, 'NVIDIA H200', ?4, 'nightly', ?5, ?5 + 1000, ?6, 500, 'abc'))sql");
  sqlite3_stmt* tag = Prepare(db, "INSERT INTO run_tags (run_id, tag) VALUES (?, ?)");
  sqlite3_stmt* m = Prepare(db, R"sql(
INSERT INTO measurements (run_id, sequence, variant, dtype, m, n, k, status, error, median_ms,
                          samples, noise, tflops, created_at_ms, l2, clock_policy)
VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?5, ?6, '', ?7, 50, 0.002, ?8, ?9, 'cold', 'observe'))sql");
  const int per_run = 500;
  const long runs = (total + per_run - 1) / per_run;
  const int64_t t0 = 1700000000000;
  long written = 0;
  for (long r = 1; r <= runs; ++r) {
    const int gpu = int(r % 2);
    const int64_t created = t0 + r * 3600000;
    const bool last = r == runs;
    sqlite3_bind_int64(run, 1, r);
    sqlite3_bind_text(run, 2, last ? "running" : "succeeded", -1, SQLITE_STATIC);
    sqlite3_bind_int(run, 3, gpu);
    sqlite3_bind_text(run, 4, gpu ? "GPU-bbbb" : "GPU-aaaa", -1, SQLITE_STATIC);
    sqlite3_bind_int64(run, 5, created);
    if (last)
      sqlite3_bind_null(run, 6);
    else
      sqlite3_bind_int64(run, 6, created + 600000);
    Step(db, run);
    if (r % 3 == 0) {
      sqlite3_bind_int64(tag, 1, r);
      sqlite3_bind_text(tag, 2, "nightly", -1, SQLITE_STATIC);
      Step(db, tag);
    }
    for (int i = 0; i < per_run && written < total; ++i, ++written) {
      // Each run takes 500 of the 4096 variant x dtype x shape items, in turn.
      const long item = (r * per_run + i) % 4096;
      const std::string variant = "abl_v" + std::to_string(item % 256);
      const int shape = 256 << (item / 256 % 8);
      const bool ok = (written % 97) != 0;
      sqlite3_bind_int64(m, 1, r);
      sqlite3_bind_int(m, 2, i);
      sqlite3_bind_text(m, 3, variant.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(m, 4, item / 2048 ? "fp16" : "bf16", -1, SQLITE_STATIC);
      sqlite3_bind_int(m, 5, shape);
      sqlite3_bind_text(m, 6, ok ? "ok" : "failed", -1, SQLITE_STATIC);
      sqlite3_bind_double(m, 7, 1.0 + (written % 13) * 0.01);
      sqlite3_bind_double(m, 8, 500.0 + (written % 17));
      sqlite3_bind_int64(m, 9, created + 1000 + i * 1000);
      Step(db, m);
    }
  }
  Exec(db, "COMMIT");
  sqlite3_finalize(run);
  sqlite3_finalize(tag);
  sqlite3_finalize(m);
  sqlite3_close(db);
  ablation::db::Store::Open(path);  // as the daemon would open it next
  std::printf("%s: %ld runs, %ld measurements\n", path.c_str(), runs, written);
  return 0;
}
