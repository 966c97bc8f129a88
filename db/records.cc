#include "db/records.h"

#include <cctype>

#include "db/error.h"

namespace ablation::db {
namespace {

// "RunState" -> "RUN_STATE", "L2Mode" -> "L2_MODE", "HTTPCode" -> "HTTP_CODE": the prefix that
// protobuf's style guide gives the values of an enum type.
std::string UpperSnake(std::string_view camel) {
  std::string out;
  for (size_t i = 0; i < camel.size(); ++i) {
    const unsigned char c = camel[i];
    if (i > 0 && std::isupper(c)) {
      const unsigned char before = camel[i - 1];
      const bool after_lower = std::islower(before) || std::isdigit(before);
      const bool acronym_end =
          std::isupper(before) && i + 1 < camel.size() && std::islower(camel[i + 1]);
      if (after_lower || acronym_end) out += '_';
    }
    out += static_cast<char>(std::toupper(c));
  }
  return out;
}

}  // namespace

std::string EnumText(const google::protobuf::EnumValueDescriptor* value) {
  if (value == nullptr) {
    // A number that no value of the enum has (proto3 enums are open): there is no text for it,
    // and writing "" would silently turn it into "unspecified".
    throw Error(Error::Code::kInvalidArgument, "an enum number that its .proto does not name");
  }
  std::string_view name = value->name();
  const std::string prefix = UpperSnake(value->type()->name()) + "_";
  if (name.starts_with(prefix)) name.remove_prefix(prefix.size());
  if (name == "UNSPECIFIED") return "";
  std::string text(name);
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

bool IsFinalRunState(v1::RunState state) {
  return state == v1::RUN_STATE_SUCCEEDED || state == v1::RUN_STATE_PARTIAL ||
         state == v1::RUN_STATE_FAILED || state == v1::RUN_STATE_CANCELLED;
}

}  // namespace ablation::db
