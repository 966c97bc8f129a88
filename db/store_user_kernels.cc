// The Store's user kernels (schema v13, db/schema.md): a kernel's source and manifest with their
// hashes and owner, and its builds (one cubin per variant, architecture and compiler).
#include <zlib.h>

#include <algorithm>

#include "db/error.h"
#include "db/sqlite.h"
#include "db/store.h"
#include "db/store_internal.h"

namespace ablation::db {
namespace {

constexpr const char* kKernelColumns =
    "id, name, owner, source, source_sha256, manifest, manifest_sha256, created_at_ms, "
    "coalesce(removed_at_ms, 0), version";

UserKernelRecord ReadKernel(Statement& s) {
  Reader r(s);
  UserKernelRecord k;
  k.id = r.Int();
  k.name = r.Text();
  k.owner = r.Text();
  k.source = r.Text();
  k.source_sha256 = r.Text();
  k.manifest = r.Text();
  k.manifest_sha256 = r.Text();
  k.created_at_ms = r.Int();
  k.removed_at_ms = r.Int();
  k.version = r.Int();
  return k;
}

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// A cubin as stored: zlib (Debian's, already under gRPC and protobuf), since most of a large
// cubin is the zeros of its data sections.
std::string Compress(const std::string& raw) {
  uLongf size = compressBound(uLong(raw.size()));
  std::string out(size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(out.data()), &size,
                reinterpret_cast<const Bytef*>(raw.data()), uLong(raw.size()), 6) != Z_OK)
    throw Error(Error::Code::kStorage,
                "compressing a cubin of " + std::to_string(raw.size()) + " bytes failed");
  out.resize(size);
  return out;
}

std::string Decompress(const std::vector<uint8_t>& stored, int64_t bytes) {
  std::string out(size_t(std::max<int64_t>(bytes, 0)), '\0');
  uLongf size = uLongf(out.size());
  if (uncompress(reinterpret_cast<Bytef*>(out.data()), &size, stored.data(),
                 uLong(stored.size())) != Z_OK ||
      size != out.size())
    throw Error(Error::Code::kStorage,
                "a stored cubin does not decompress to its " + std::to_string(bytes) + " bytes");
  return out;
}

std::string Cubin(const std::vector<uint8_t>& stored, const std::string& encoding, int64_t bytes) {
  if (encoding == "zlib") return Decompress(stored, bytes);
  return std::string(stored.begin(), stored.end());
}

}  // namespace

int64_t Store::InsertUserKernel(const UserKernelRecord& kernel,
                                const std::vector<UserKernelBuild>& builds) {
  std::lock_guard lock(mutex_);
  RequireWritable("InsertUserKernel");
  if (kernel.name.empty()) throw Error(Error::Code::kInvalidArgument, "a user kernel needs a name");
  Transaction transaction(*connection_);
  int64_t version = kernel.version;
  {
    // Never a number twice for a name: removed versions count.
    StatementScope s(
        Prepared("SELECT coalesce(max(version), 0) FROM user_kernels WHERE name = ?1"));
    Binder(*s).Text(kernel.name);
    const int64_t highest = s->Step() ? s->ColumnInt64(0) : 0;
    if (version == 0) version = highest + 1;
    if (version <= highest)
      throw Error(Error::Code::kInvalidArgument,
                  "user kernel '" + kernel.name + "' has had version " + std::to_string(highest) +
                      "; version " + std::to_string(version) + " cannot be added again");
  }
  const int64_t now = internal::NowMs();
  int64_t id = 0;
  {
    StatementScope s(
        Prepared("INSERT INTO user_kernels (name, owner, source, source_sha256, manifest, "
                 "manifest_sha256, created_at_ms, version) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
                 "?8)"));
    Binder(*s)
        .Text(kernel.name)
        .Text(kernel.owner)
        .Text(kernel.source)
        .Text(kernel.source_sha256)
        .Text(kernel.manifest)
        .Text(kernel.manifest_sha256)
        .Int(kernel.created_at_ms != 0 ? kernel.created_at_ms : now)
        .Int(version);
    s->Step();
    id = connection_->LastInsertRowid();
  }
  InsertBuilds(id, builds, now);
  transaction.Commit();
  return id;
}

void Store::InsertUserKernelBuilds(int64_t kernel_id, const std::vector<UserKernelBuild>& builds) {
  std::lock_guard lock(mutex_);
  RequireWritable("InsertUserKernelBuilds");
  Transaction transaction(*connection_);
  InsertBuilds(kernel_id, builds, internal::NowMs());
  transaction.Commit();
}

void Store::InsertBuilds(int64_t kernel_id, const std::vector<UserKernelBuild>& builds,
                         int64_t now) {
  for (const UserKernelBuild& b : builds) {
    StatementScope s(Prepared(
        "INSERT INTO user_kernel_builds (kernel_id, variant, arch, compiler, options, cubin, "
        "cubin_sha256, registers, stack_bytes, spill_store_bytes, spill_load_bytes, "
        "static_smem_bytes, log, created_at_ms, cubin_encoding, cubin_bytes) VALUES (?1, ?2, "
        "?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, 'zlib', ?15)"));
    const std::string compressed = Compress(b.cubin);
    Binder(*s)
        .Int(kernel_id)
        .Text(b.variant)
        .Text(b.arch)
        .Text(b.compiler)
        .Text(b.options)
        .Blob(Bytes(compressed))
        .Text(b.cubin_sha256)
        .Int(b.registers)
        .Int(b.stack_bytes)
        .Int(b.spill_store_bytes)
        .Int(b.spill_load_bytes)
        .Int(b.static_smem_bytes)
        .Text(b.log)
        .Int(b.created_at_ms != 0 ? b.created_at_ms : now)
        .Int(int64_t(b.cubin.size()));
    s->Step();
  }
}

std::vector<UserKernelRecord> Store::ListUserKernels() {
  std::lock_guard lock(mutex_);
  StatementScope s(
      Prepared(std::string("SELECT ") + kKernelColumns +
               " FROM user_kernels WHERE removed_at_ms IS NULL ORDER BY name, version"));
  std::vector<UserKernelRecord> out;
  while (s->Step()) out.push_back(ReadKernel(*s));
  return out;
}

std::optional<UserKernelRecord> Store::GetUserKernel(std::string_view name, int64_t version) {
  std::lock_guard lock(mutex_);
  StatementScope s(Prepared(std::string("SELECT ") + kKernelColumns +
                            " FROM user_kernels WHERE name = ?1 AND removed_at_ms IS NULL AND "
                            "(?2 = 0 OR version = ?2) ORDER BY version DESC LIMIT 1"));
  Binder(*s).Text(name).Int(version);
  if (!s->Step()) return std::nullopt;
  return ReadKernel(*s);
}

std::vector<v1::UserBuildIdentity> Store::UserBuildIdentities(const std::vector<int64_t>& ids) {
  std::lock_guard lock(mutex_);
  std::vector<v1::UserBuildIdentity> out;
  for (int64_t id : ids) {
    StatementScope s(Prepared(
        "SELECT b.id, k.name, b.variant, b.arch, b.compiler, b.cubin_sha256, k.source_sha256, "
        "k.manifest_sha256, k.version FROM user_kernel_builds b JOIN user_kernels k ON k.id = "
        "b.kernel_id "
        "WHERE b.id = ?1"));
    Binder(*s).Int(id);
    if (!s->Step()) continue;
    v1::UserBuildIdentity b;
    b.set_id(s->ColumnInt64(0));
    b.set_kernel(s->ColumnText(1));
    b.set_variant(s->ColumnText(2));
    b.set_arch(s->ColumnText(3));
    b.set_compiler(s->ColumnText(4));
    b.set_cubin_sha256(s->ColumnText(5));
    b.set_source_sha256(s->ColumnText(6));
    b.set_manifest_sha256(s->ColumnText(7));
    b.set_version(s->ColumnInt64(8));
    out.push_back(std::move(b));
  }
  return out;
}

std::vector<UserKernelBuild> Store::UserKernelBuilds(int64_t kernel_id, bool with_cubins) {
  std::lock_guard lock(mutex_);
  StatementScope s(
      Prepared("SELECT id, kernel_id, variant, arch, compiler, options, "
               "CASE WHEN ?2 THEN cubin ELSE x'' END, cubin_sha256, registers, stack_bytes, "
               "spill_store_bytes, spill_load_bytes, static_smem_bytes, log, created_at_ms, "
               "cubin_encoding, cubin_bytes "
               "FROM user_kernel_builds WHERE kernel_id = ?1 ORDER BY variant, arch, compiler"));
  Binder(*s).Int(kernel_id).Int(with_cubins ? 1 : 0);
  std::vector<UserKernelBuild> out;
  while (s->Step()) {
    UserKernelBuild b;
    b.id = s->ColumnInt64(0);
    b.kernel_id = s->ColumnInt64(1);
    b.variant = s->ColumnText(2);
    b.arch = s->ColumnText(3);
    b.compiler = s->ColumnText(4);
    b.options = s->ColumnText(5);
    b.cubin_bytes = s->ColumnInt64(16);
    if (with_cubins) b.cubin = Cubin(s->ColumnBlob(6), s->ColumnText(15), b.cubin_bytes);
    b.cubin_sha256 = s->ColumnText(7);
    b.registers = int(s->ColumnInt64(8));
    b.stack_bytes = s->ColumnInt64(9);
    b.spill_store_bytes = s->ColumnInt64(10);
    b.spill_load_bytes = s->ColumnInt64(11);
    b.static_smem_bytes = s->ColumnInt64(12);
    b.log = s->ColumnText(13);
    b.created_at_ms = s->ColumnInt64(14);
    out.push_back(std::move(b));
  }
  return out;
}

std::string Store::UserKernelCubin(int64_t build_id) {
  std::lock_guard lock(mutex_);
  StatementScope s(
      Prepared("SELECT cubin, cubin_encoding, cubin_bytes FROM user_kernel_builds WHERE id = ?1"));
  Binder(*s).Int(build_id);
  if (!s->Step()) return "";
  return Cubin(s->ColumnBlob(0), s->ColumnText(1), s->ColumnInt64(2));
}

bool Store::RemoveUserKernel(std::string_view name, int64_t removed_at_ms, int64_t version) {
  std::lock_guard lock(mutex_);
  RequireWritable("RemoveUserKernel");
  StatementScope s(
      Prepared("UPDATE user_kernels SET removed_at_ms = ?2 WHERE name = ?1 AND removed_at_ms IS "
               "NULL AND (?3 = 0 OR version = ?3)"));
  Binder(*s).Text(name).Int(removed_at_ms != 0 ? removed_at_ms : internal::NowMs()).Int(version);
  s->Step();
  return connection_->Changes() > 0;
}

}  // namespace ablation::db
