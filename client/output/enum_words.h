// The API's enums as the client's flags take them (--state, --status, --against): the words are
// common/enum_words.h's (RUN_STATE_SUCCEEDED -> "succeeded"); here CLI11's side of them.
#pragma once

#include <google/protobuf/generated_enum_reflection.h>

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "ablation/v1/ablation.pb.h"
#include "common/enum_words.h"

namespace ablation::client {

// The words themselves are common/enum_words.h's, shared with the daemon and the database.
using common::EnumType;
using common::EnumWord;
using common::EnumWords;
using common::ParseEnumWord;
using common::ReferenceWord;

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

}  // namespace ablation::client
