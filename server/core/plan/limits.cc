#include "server/core/plan/limits.h"

#include <cstdio>
#include <set>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

namespace ablation::core {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

constexpr size_t kQuotedPrefix = 64;

// Fields that hold a name of something the daemon knows (a variant, preset, dtype, tag, clock
// word): short by nature, and what a resolver or an edit distance is run on.
bool IsNameField(std::string_view name) {
  static const std::set<std::string_view> kNames = {
      "variants",         "variant", "variant_glob", "glob", "tags",   "tag",
      "preset",           "dtype",   "arch",         "name", "sm_mhz", "mem_mhz",
      "reference_variant"};
  return kNames.count(name) > 0;
}

// Whole documents a request carries (a user kernel's source and manifest): bounded by the
// message's size and by their own limits where they are used (kernels/user/manifest.h), and
// lines, tabs and carriage returns are their text, not control characters.
bool IsDocumentField(const FieldDescriptor* f) {
  return f->containing_type()->name() == "AddKernelRequest" &&
         (f->name() == "source" || f->name() == "manifest");
}

Status CheckDocument(const std::string& text, const std::string& field, size_t max) {
  if (text.size() > max)
    return InvalidArgument(field + ": " + std::to_string(text.size()) + " bytes; at most " +
                           std::to_string(max));
  for (unsigned char c : text)
    if ((c < 0x20 && c != '\n' && c != '\r' && c != '\t') || c == 0x7f)
      return InvalidArgument(field +
                             ": control characters other than line breaks and tabs are "
                             "not allowed");
  return Status::Ok();
}

Status CheckText(const std::string& text, const std::string& field, size_t max) {
  if (text.size() > max)
    return InvalidArgument(field + ": " + std::to_string(text.size()) + " characters; at most " +
                           std::to_string(max) + " (" + QuoteInput(text) + ")");
  if (HasControlCharacter(text))
    return InvalidArgument(field + ": control characters are not allowed (" + QuoteInput(text) +
                           ")");
  return Status::Ok();
}

Status CheckMessage(const Message& m, const std::string& prefix, const RequestLimits& limits) {
  const auto* reflection = m.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(m, &fields);  // only the fields that are set: cheap on small requests
  for (const FieldDescriptor* f : fields) {
    const std::string field = prefix + f->name();
    const size_t max = IsNameField(f->name()) ? limits.max_name_length : limits.max_text_length;
    if (f->is_repeated()) {
      const int n = reflection->FieldSize(m, f);
      if (n > limits.max_repeated)
        return InvalidArgument(field + ": " + std::to_string(n) + " entries; at most " +
                               std::to_string(limits.max_repeated));
      for (int i = 0; i < n; ++i) {
        const std::string item = field + "[" + std::to_string(i) + "]";
        Status st;
        if (f->type() == FieldDescriptor::TYPE_STRING)
          st = CheckText(reflection->GetRepeatedString(m, f, i), item, max);
        else if (f->type() == FieldDescriptor::TYPE_MESSAGE)
          st = CheckMessage(reflection->GetRepeatedMessage(m, f, i), item + ".", limits);
        if (!st.ok()) return st;
      }
    } else if (f->type() == FieldDescriptor::TYPE_STRING && IsDocumentField(f)) {
      if (Status st =
              CheckDocument(reflection->GetString(m, f), field, size_t(limits.max_message_bytes));
          !st.ok())
        return st;
    } else if (f->type() == FieldDescriptor::TYPE_STRING) {
      if (Status st = CheckText(reflection->GetString(m, f), field, max); !st.ok()) return st;
    } else if (f->type() == FieldDescriptor::TYPE_MESSAGE) {
      Status st = CheckMessage(reflection->GetMessage(m, f), field + ".", limits);
      if (!st.ok()) return st;
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckRequestBounds(const Message& request, const RequestLimits& limits) {
  return CheckMessage(request, "", limits);
}

bool HasControlCharacter(std::string_view text) {
  for (unsigned char c : text)
    if (c < 0x20 || c == 0x7f) return true;
  return false;
}

std::string QuoteInput(std::string_view input) {
  std::string out = "'";
  const std::string_view shown = input.substr(0, kQuotedPrefix);
  for (unsigned char c : shown) {
    if (c < 0x20 || c >= 0x7f || c == '\'' || c == '\\') {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  out += "'";
  if (input.size() > kQuotedPrefix) out += "... (" + std::to_string(input.size()) + " characters)";
  return out;
}

bool CheckedMultiply(int64_t a, int64_t b, int64_t* out) {
  if (a < 0 || b < 0) return false;
  return !__builtin_mul_overflow(a, b, out);
}

Status RunQuota::Reserve(const std::string& identity) {
  std::lock_guard lock(mu_);
  auto it = in_flight_.find(identity);
  const int mine = it == in_flight_.end() ? 0 : it->second;
  if (mine >= limits_.max_runs_per_identity) {
    return FailedPrecondition(identity + " already has " + std::to_string(mine) +
                              " runs queued or running, the most one caller may have "
                              "(limits.max_runs_per_identity); wait for one to end");
  }
  if (total_ >= limits_.max_runs_total) {
    return FailedPrecondition("the daemon already has " + std::to_string(total_) +
                              " runs queued or running (limits.max_runs_total); try again later");
  }
  ++in_flight_[identity];
  ++total_;
  return Status::Ok();
}

void RunQuota::Release(const std::string& identity) {
  std::lock_guard lock(mu_);
  auto it = in_flight_.find(identity);
  if (it == in_flight_.end() || it->second == 0) return;
  --total_;
  if (--it->second == 0) in_flight_.erase(it);
}

int RunQuota::InFlight(const std::string& identity) const {
  std::lock_guard lock(mu_);
  auto it = in_flight_.find(identity);
  return it == in_flight_.end() ? 0 : it->second;
}

void RunQuota::SetLimits(const RequestLimits& limits) {
  std::lock_guard lock(mu_);
  limits_ = limits;
}

Status CheckTags(const google::protobuf::RepeatedPtrField<std::string>& tags) {
  for (int i = 0; i < tags.size(); ++i) {
    const std::string& t = tags.Get(i);
    if (t.empty() || t.size() > 64)
      return InvalidArgument("tags[" + std::to_string(i) + "]: a tag has 1 to 64 characters");
  }
  return Status::Ok();
}

Status CheckPlanSize(int64_t planned, int max, const char* what) {
  if (max <= 0 || planned <= max) return Status::Ok();
  return InvalidArgument("the request plans " + std::to_string(planned) + " " + what +
                         "; at most " + std::to_string(max) +
                         " per run (limits.max_measurements_per_run): split it into runs");
}

namespace {
std::string Mebibytes(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", double(bytes) / double(1 << 20));
  return text;
}
}  // namespace

Status CheckPlanBytes(int64_t measurements, int64_t samples_per_measurement, int64_t max_bytes,
                      const char* what) {
  int64_t per = 0, bytes = 0;
  const bool fits = CheckedMultiply(samples_per_measurement, kStoredBytesPerSample, &per) &&
                    per <= std::numeric_limits<int64_t>::max() - kStoredBytesPerRow &&
                    CheckedMultiply(measurements, per + kStoredBytesPerRow, &bytes);
  if (max_bytes <= 0 || (fits && bytes <= max_bytes)) return Status::Ok();
  std::string figures = std::to_string(measurements) + " " + what;
  if (samples_per_measurement > 0)
    figures += " x up to " + std::to_string(samples_per_measurement) + " samples x " +
               std::to_string(kStoredBytesPerSample) + " bytes";
  figures += " (+ " + std::to_string(kStoredBytesPerRow) + " bytes of rows each)";
  return InvalidArgument("the request could store " +
                         (fits ? Mebibytes(bytes) : std::string("more than 8 EiB")) + ": " +
                         figures + "; at most " + Mebibytes(max_bytes) +
                         " per run (limits.max_stored_bytes_per_run): lower timing.max_samples "
                         "or split it into runs");
}

}  // namespace ablation::core
