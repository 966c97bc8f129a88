#include "client/json.h"

#include <google/protobuf/util/json_util.h>

namespace ablation::client {
namespace {

std::string Print(const google::protobuf::Message& message, bool indent) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  options.add_whitespace = indent;
  std::string json;
  auto status = google::protobuf::util::MessageToJsonString(message, &json, options);
  // Only messages with Any fields of unknown types fail, and this API has none.
  if (!status.ok()) return "null";
  return json;
}

}  // namespace

std::string JsonObject(const google::protobuf::Message& message) { return Print(message, false); }

std::string JsonDocument(const google::protobuf::Message& message) {
  std::string json = Print(message, true);
  if (json.empty() || json.back() != '\n') json += '\n';
  return json;
}

std::string JsonArray(const std::vector<const google::protobuf::Message*>& messages) {
  if (messages.empty()) return "[]\n";
  // One object per line: valid JSON, and still readable with grep.
  std::string text = "[\n";
  for (std::size_t i = 0; i < messages.size(); ++i) {
    text += "  " + JsonObject(*messages[i]);
    text += i + 1 < messages.size() ? ",\n" : "\n";
  }
  text += "]\n";
  return text;
}
}  // namespace ablation::client
