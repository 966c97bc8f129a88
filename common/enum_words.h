// The API's enums as the words people read and type and the database stores: a value's name
// without its type's prefix, in lower case (RUN_STATE_SUCCEEDED -> "succeeded", the zero
// *_UNSPECIFIED -> ""), read from the proto descriptors so that a new value needs nothing here.
// The client's tables and flags, the database's columns and the daemon's messages all use these.
#pragma once

#include <google/protobuf/generated_enum_reflection.h>

#include <string>
#include <string_view>
#include <vector>

#include "ablation/v1/ablation.pb.h"

namespace ablation::common {

using EnumType = google::protobuf::EnumDescriptor;

/// The words of an enum type's name, which are also its values' prefix: "RunState" -> {"run",
/// "state"}, "L2Mode" -> {"l2", "mode"}, "HTTPCode" -> {"http", "code"} (protobuf's style).
std::vector<std::string> EnumTypeWords(const EnumType* type);

/// "succeeded" for RUN_STATE_SUCCEEDED; "" for *_UNSPECIFIED. `value` must not be null.
std::string EnumValueWord(const google::protobuf::EnumValueDescriptor* value);

/// The word of `number` in `type`; a number the .proto does not name (proto3 enums are open)
/// reads as its digits.
std::string EnumWord(const EnumType* type, int number);
template <class E>
std::string EnumWord(E value) {
  return EnumWord(google::protobuf::GetEnumDescriptor<E>(), static_cast<int>(value));
}

/// The words of every value but the zero one, in the order of the .proto.
std::vector<std::string> EnumWords(const EnumType* type);

/// A word (any case) to its number. Empty on success; else what is wrong, named by `flag`:
/// "--state: 'x' is not a run state; use queued, running, succeeded, partial, failed or
/// cancelled". Without a flag the message starts at the quote.
std::string ParseEnumWord(std::string_view flag, const EnumType* type, std::string_view text,
                          int* number);
template <class E>
std::string ParseEnumWord(std::string_view flag, std::string_view text, E* value) {
  int number = 0;
  std::string error = ParseEnumWord(flag, google::protobuf::GetEnumDescriptor<E>(), text, &number);
  if (error.empty()) *value = static_cast<E>(number);
  return error;
}

/// A verification's reference in words: "cpu", "gpu", "cublas", the variant it names
/// (REFERENCE_VARIANT), or "unspecified" where none was given.
std::string ReferenceWord(v1::Reference reference, const std::string& variant);

}  // namespace ablation::common
