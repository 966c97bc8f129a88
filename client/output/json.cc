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

// Calls convert(field, value) on every value in `node`, the JSON of a message of type `type`,
// that is not a message itself: its fields, repeated fields' elements, maps' values (`field` is
// then the map's value field), nested messages' values. protobuf's own types (Timestamp, Struct:
// JSON of their own) are left alone.
template <class Convert>
void ForEachValue(Json& node, const Descriptor* type, const Convert& convert) {
  if (!node.is_object() || type->file()->package() == "google.protobuf") return;
  for (auto& [key, value] : node.items()) {
    const FieldDescriptor* field = type->FindFieldByName(key);
    if (field == nullptr) continue;
    const FieldDescriptor* element = field->is_map() ? field->message_type()->map_value() : field;
    auto one = [&](Json& v) {
      if (element->type() == FieldDescriptor::TYPE_MESSAGE) {
        ForEachValue(v, element->message_type(), convert);
      } else {
        convert(element, v);
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

bool IsInt64(const FieldDescriptor* field) {
  return field->cpp_type() == FieldDescriptor::CPPTYPE_INT64 ||
         field->cpp_type() == FieldDescriptor::CPPTYPE_UINT64;
}

// A string field that holds a JSON document (Run.request_json): shown as that document.
bool HoldsJson(const FieldDescriptor* field) {
  const std::string& name = field->name();
  return field->type() == FieldDescriptor::TYPE_STRING && !field->is_map() && name.size() > 5 &&
         name.compare(name.size() - 5, 5, "_json") == 0;
}

// The messages a string field that holds JSON holds (Run.request_json: the request that made the
// run, a RunRequest or a VerifyRequest): their int64 fields in it are numbers too.
template <class Convert>
void ForEachValueOfARequest(Json& document, const FieldDescriptor* field, const Convert& convert) {
  for (const char* name : {"RunRequest", "VerifyRequest"})
    if (const Descriptor* type =
            field->file()->pool()->FindMessageTypeByName(field->file()->package() + "." + name))
      ForEachValue(document, type, convert);
}

// In a request's document: an int64 as a number, or back as protobuf writes it (a string).
void Int64AsNumber(const FieldDescriptor* field, Json& value) {
  if (!IsInt64(field) || !value.is_string()) return;
  Json number = Json::parse(value.get<std::string>(), nullptr, false);
  if (number.is_number_integer()) value = number;
}
void Int64AsString(const FieldDescriptor* field, Json& value) {
  if (IsInt64(field) && value.is_number_integer()) value = value.dump();
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

// What an item shows of a value protobuf printed: an enum's word, an int64 as a JSON number
// ("run_id": 14, not "14"; protobuf's mapping writes them as strings), a JSON document held in
// a string as that document (null where the string is empty; left a string if it is no JSON).
void ForPeople(const FieldDescriptor* field, Json& value) {
  if (field->type() == FieldDescriptor::TYPE_ENUM) {
    NameToWord(field->enum_type(), value);
  } else if (IsInt64(field)) {
    Int64AsNumber(field, value);
  } else if (HoldsJson(field) && value.is_string()) {
    const std::string text = value.get<std::string>();
    Json document = text.empty() ? Json(nullptr) : Json::parse(text, nullptr, false);
    if (document.is_discarded()) return;
    ForEachValueOfARequest(document, field, Int64AsNumber);
    value = std::move(document);
  }
}

// ForPeople's inverse where protobuf's parser needs it (it reads int64 numbers as they are).
void ForProtobuf(const FieldDescriptor* field, Json& value) {
  if (field->type() == FieldDescriptor::TYPE_ENUM) {
    WordToName(field->enum_type(), value);
  } else if (HoldsJson(field) && !value.is_string()) {
    ForEachValueOfARequest(value, field, Int64AsString);
    value = value.is_null() ? std::string() : Dump(value);
  }
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
          return Dump(Json(v));  // int64 as a number, as the items have them
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
  ForEachValue(json, message.GetDescriptor(), ForPeople);
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
  ForEachValue(json, message->GetDescriptor(), ForProtobuf);
  const auto status = google::protobuf::util::JsonStringToMessage(Dump(json), message);
  return status.ok() ? "" : status.ToString();
}

}  // namespace ablation::client
