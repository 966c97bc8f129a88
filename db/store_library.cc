// The Store's library choices (schema v18, db/schema.md): the cuBLASLt algorithm a
// cublas_<dtype>_best variant launches on a device, library version and problem.
#include "db/sqlite.h"
#include "db/store.h"
#include "db/store_internal.h"

namespace ablation::db {
namespace {

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::string Text(const std::vector<uint8_t>& b) { return std::string(b.begin(), b.end()); }

}  // namespace

std::optional<LibraryChoiceRecord> Store::FindLibraryChoice(const LibraryChoiceRecord& key) {
  std::lock_guard lock(mutex_);
  StatementScope s(Prepared(
      "SELECT algo, described, tuning, chosen_at_ms, run_id FROM library_choices WHERE "
      "device_uuid = ?1 AND library_version = ?2 AND variant = ?3 AND dtype = ?4 AND m = ?5 AND "
      "n = ?6 AND k = ?7"));
  Binder(*s)
      .Text(key.device_uuid)
      .Text(key.library_version)
      .Text(key.variant)
      .Text(key.dtype)
      .Int(key.m)
      .Int(key.n)
      .Int(key.k);
  if (!s->Step()) return std::nullopt;
  LibraryChoiceRecord out = key;
  out.algo = Text(s->ColumnBlob(0));
  out.described = Text(s->ColumnBlob(1));
  out.tuning = Text(s->ColumnBlob(2));
  out.chosen_at_ms = s->ColumnInt64(3);
  out.run_id = s->ColumnInt64(4);
  return out;
}

bool Store::SaveLibraryChoice(const LibraryChoiceRecord& c) {
  std::lock_guard lock(mutex_);
  RequireWritable("SaveLibraryChoice");
  if (c.device_uuid.empty() || c.variant.empty() || c.algo.empty())
    throw Error(Error::Code::kInvalidArgument,
                "a library choice needs a device, a variant and an algorithm");
  StatementScope s(Prepared(
      "INSERT OR IGNORE INTO library_choices (device_uuid, library_version, variant, dtype, m, n, "
      "k, algo, described, tuning, chosen_at_ms, run_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
      "?9, ?10, ?11, ?12)"));
  Binder(*s)
      .Text(c.device_uuid)
      .Text(c.library_version)
      .Text(c.variant)
      .Text(c.dtype)
      .Int(c.m)
      .Int(c.n)
      .Int(c.k)
      .Blob(Bytes(c.algo))
      .Blob(Bytes(c.described))
      .Blob(Bytes(c.tuning))
      .Int(c.chosen_at_ms != 0 ? c.chosen_at_ms : internal::NowMs())
      .Int(c.run_id);
  s->Step();
  return connection_->Changes() > 0;
}

}  // namespace ablation::db
