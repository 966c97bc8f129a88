#include "db/records.h"

#include "common/enum_words.h"
#include "db/error.h"

namespace ablation::db {

std::string EnumText(const google::protobuf::EnumValueDescriptor* value) {
  if (value == nullptr) {
    // A number that no value of the enum has (proto3 enums are open): there is no text for it,
    // and writing "" would silently turn it into "unspecified".
    throw Error(Error::Code::kInvalidArgument, "an enum number that its .proto does not name");
  }
  return common::EnumValueWord(value);
}

bool IsFinalRunState(v1::RunState state) {
  return state == v1::RUN_STATE_SUCCEEDED || state == v1::RUN_STATE_PARTIAL ||
         state == v1::RUN_STATE_FAILED || state == v1::RUN_STATE_CANCELLED;
}

}  // namespace ablation::db
