// JSON, always protobuf's canonical mapping of a message: field names as in the .proto, defaults
// included so that the keys are stable whatever the values (int64 fields are strings and enums
// their value names, as that mapping says; an unset optional field is left out).
#pragma once

#include <string>
#include <vector>

#include <google/protobuf/message.h>

namespace ablation::client {

std::string JsonObject(const google::protobuf::Message& message);    // one line
std::string JsonDocument(const google::protobuf::Message& message);  // indented, ends in '\n'
std::string JsonArray(const std::vector<const google::protobuf::Message*>& messages);
template <class M>
std::string JsonArray(const std::vector<M>& messages) {
  std::vector<const google::protobuf::Message*> pointers;
  pointers.reserve(messages.size());
  for (const M& m : messages) pointers.push_back(&m);
  return JsonArray(pointers);
}

}  // namespace ablation::client
