#include "client/output/json.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/util/json_util.h>

#include <nlohmann/json.hpp>

#include "common/enum_words.h"

namespace ablation::client {
namespace {

// Ordered: the keys stay in the .proto's order, as protobuf printed them.
using Json = nlohmann::ordered_json;
using google::protobuf::Descriptor;
using google::protobuf::EnumDescriptor;
using google::protobuf::FieldDescriptor;

std::string Dump(const Json& json) {
  // Replace, not throw, should a string not be UTF-8 (protobuf logs such a string, keeps it).
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// Calls convert(enum type, value) on every enum value in `node`, the JSON of a message of type
// `type`: its fields, repeated fields' elements, maps' values, nested messages. protobuf's own
// types (Timestamp, Struct: JSON of their own) are left alone.
template <class Convert>
void ForEachEnum(Json& node, const Descriptor* type, const Convert& convert) {
  if (!node.is_object() || type->file()->package() == "google.protobuf") return;
  for (auto& [key, value] : node.items()) {
    const FieldDescriptor* field = type->FindFieldByName(key);
    if (field == nullptr) continue;
    const FieldDescriptor* element = field->is_map() ? field->message_type()->map_value() : field;
    auto one = [&](Json& v) {
      if (element->type() == FieldDescriptor::TYPE_ENUM) {
        convert(element->enum_type(), v);
      } else if (element->type() == FieldDescriptor::TYPE_MESSAGE) {
        ForEachEnum(v, element->message_type(), convert);
      }
    };
    if (field->is_map() && value.is_object()) {
      for (auto& [k, v] : value.items()) one(v);
    } else if (field->is_repeated() && value.is_array()) {
      for (Json& v : value) one(v);
    } else {
      one(value);
    }
  }
}

// RUN_STATE_SUCCEEDED -> "succeeded"; a number (a value the .proto does not name) stays one.
void NameToWord(const EnumDescriptor* type, Json& value) {
  if (!value.is_string()) return;
  if (const auto* v = type->FindValueByName(value.get<std::string>()))
    value = common::EnumValueWord(v);
}

// "succeeded" -> RUN_STATE_SUCCEEDED; "" -> the zero value; anything else stays, and protobuf's
// parser names it.
void WordToName(const EnumDescriptor* type, Json& value) {
  if (!value.is_string()) return;
  const std::string word = value.get<std::string>();
  if (word.empty()) {
    if (const auto* zero = type->FindValueByNumber(0)) value = zero->name();
    return;
  }
  int number = 0;
  if (common::ParseEnumWord("", type, word, &number).empty())
    value = type->FindValueByNumber(number)->name();
}

std::string JsonValue(const JsonField& field) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>) {
          return v ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::string>) {
          return Dump(Json(v));
        } else {
          return Dump(Json(std::to_string(v)));  // int64 as a string, as the items have them
        }
      },
      field.value);
}

}  // namespace

std::string JsonItem(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string text;
  // Only messages with Any fields of unknown types fail, and this API has none.
  if (!google::protobuf::util::MessageToJsonString(message, &text, options).ok()) return "null";
  Json json = Json::parse(text, nullptr, false);
  if (json.is_discarded()) return "null";
  ForEachEnum(json, message.GetDescriptor(), NameToWord);
  return Dump(json);
}

std::string JsonEnvelope(std::string_view kind,
                         const std::vector<const google::protobuf::Message*>& items,
                         const std::vector<JsonField>& fields) {
  std::vector<std::string> texts;
  texts.reserve(items.size());
  for (const google::protobuf::Message* m : items) texts.push_back(JsonItem(*m));
  return JsonEnvelopeOfText(kind, texts, fields);
}

std::string JsonEnvelopeOfText(std::string_view kind, const std::vector<std::string>& items,
                               const std::vector<JsonField>& fields) {
  std::string text = "{\n  \"schema_version\": " + std::to_string(kJsonSchemaVersion) +
                     ",\n  \"kind\": " + Dump(Json(std::string(kind))) + ",\n";
  for (const JsonField& f : fields) text += "  " + Dump(Json(f.key)) + ": " + JsonValue(f) + ",\n";
  if (items.empty()) return text + "  \"items\": []\n}\n";
  text += "  \"items\": [\n";
  for (std::size_t i = 0; i < items.size(); ++i)
    text += "    " + items[i] + (i + 1 < items.size() ? ",\n" : "\n");
  return text + "  ]\n}\n";
}

std::string ParsedEnvelope::Field(std::string_view key) const {
  for (const auto& [k, v] : fields)
    if (k == key) return v;
  return "";
}

std::string ParseJsonEnvelope(std::string_view text, ParsedEnvelope* out) {
  *out = ParsedEnvelope();
  const Json json = Json::parse(text, nullptr, false);
  if (json.is_discarded()) return "not JSON";
  if (!json.is_object()) return "not a JSON object (the envelope is one)";
  for (const auto& [key, value] : json.items()) out->keys.push_back(key);
  if (!json.contains("schema_version") || !json["schema_version"].is_number_integer())
    return "no integer schema_version";
  if (!json.contains("kind") || !json["kind"].is_string()) return "no kind";
  if (!json.contains("items") || !json["items"].is_array()) return "no items array";
  out->schema_version = json["schema_version"].get<int>();
  out->kind = json["kind"].get<std::string>();
  for (const Json& item : json["items"]) out->items.push_back(Dump(item));
  for (const auto& [key, value] : json.items())
    if (key != "schema_version" && key != "kind" && key != "items")
      out->fields.emplace_back(key, Dump(value));
  return "";
}

std::string ParseJsonItem(std::string_view item, google::protobuf::Message* message) {
  Json json = Json::parse(item, nullptr, false);
  if (json.is_discarded()) return "not JSON";
  ForEachEnum(json, message->GetDescriptor(), WordToName);
  const auto status = google::protobuf::util::JsonStringToMessage(Dump(json), message);
  return status.ok() ? "" : status.ToString();
}

}  // namespace ablation::client
