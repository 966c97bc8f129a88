// The API's enums as the words people read and type: a value's name without its type's prefix,
// in lower case (RUN_STATE_SUCCEEDED -> "succeeded"), read from the proto descriptor, so that a
// new value needs nothing here. Flags (--state, --status, --against) parse through it too.
#pragma once

#include <google/protobuf/generated_enum_reflection.h>

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "ablation/v1/ablation.pb.h"

namespace ablation::client {

using EnumType = google::protobuf::EnumDescriptor;

// "succeeded" for RUN_STATE_SUCCEEDED; "" for the zero value, *_UNSPECIFIED (nothing to say).
std::string EnumWord(const EnumType* type, int value);
template <class E>
std::string EnumWord(E value) {
  return EnumWord(google::protobuf::GetEnumDescriptor<E>(), static_cast<int>(value));
}

// The words of every value but the zero one, in the order of the .proto.
std::vector<std::string> EnumWords(const EnumType* type);

// A word (any case) to its value. Empty on success; else what is wrong, named by the flag:
// "--state: 'x' is not a run state; use queued, running, succeeded, partial, failed or
// cancelled". Without a flag the message starts at the quote (CLI11 prefixes the option).
std::string ParseEnumWord(std::string_view flag, const EnumType* type, std::string_view text,
                          int* value);
template <class E>
std::string ParseEnumWord(std::string_view flag, std::string_view text, E* value) {
  int number = 0;
  std::string error = ParseEnumWord(flag, google::protobuf::GetEnumDescriptor<E>(), text, &number);
  if (error.empty()) *value = static_cast<E>(number);
  return error;
}

// A CLI11 transformer for an option that holds the enum: the word becomes its number.
CLI::Validator EnumTransformer(const EnumType* type);
template <class E>
CLI::Validator EnumTransformer() {
  return EnumTransformer(google::protobuf::GetEnumDescriptor<E>());
}

// --against: "cpu", "cublas" or a variant's name (REFERENCE_VARIANT). Empty text is the
// daemon's default (REFERENCE_UNSPECIFIED). Empty on success, else what is wrong.
std::string ParseReference(std::string_view flag, std::string_view text,
                           ablation::v1::Reference* reference, std::string* variant);
// A reference in words: "cpu", "cublas", or the variant it names.
std::string ReferenceWord(ablation::v1::Reference reference, const std::string& variant);

}  // namespace ablation::client
