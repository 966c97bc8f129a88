// JSON, the one shape every command's --format json has: an envelope
//
//   {"schema_version": 2, "kind": "runs", ...fields beside the items..., "items": [...]}
//
// whose items are the API's messages in protobuf's canonical JSON mapping (field names as in the
// .proto, defaults included so that the keys are stable whatever the values, an unset optional
// field left out), except that an enum value is its word, the one the tables, the CSV and the
// database use (common/enum_words.h: "succeeded", not "RUN_STATE_SUCCEEDED"; "" for the zero
// value), an int64 is a JSON number ("id": 14, where protobuf writes "14"), and a string field
// that holds a JSON document (Run.request_json) is that document, not a string of it (null when
// empty). One item per line, so that grep still finds a row. docs/using.md, "Output formats", lists
// the kinds.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <google/protobuf/message.h>

namespace ablation::client {

// 2: the envelope (before it, `report` and `compare` printed their model bare, with its own
// schema_version 1, which the model still carries; the other commands printed bare objects and
// arrays with enum value names).
inline constexpr int kJsonSchemaVersion = 2;

// A field beside the items: "truncated": true, "run_id": 42 (a number, as int64 fields are in
// the items), "notice": "...".
struct JsonField {
  std::string key;
  std::variant<bool, std::int64_t, std::string> value;
};

// One message as an item: one line, enum values as words.
std::string JsonItem(const google::protobuf::Message& message);

// The envelope of `items` (of one message type), of the kind `kind` ("runs", "report"), with
// `fields` between the kind and the items; ends in '\n'.
std::string JsonEnvelope(std::string_view kind,
                         const std::vector<const google::protobuf::Message*>& items,
                         const std::vector<JsonField>& fields = {});
template <class M>
std::string JsonEnvelope(std::string_view kind, const std::vector<M>& items,
                         const std::vector<JsonField>& fields = {}) {
  std::vector<const google::protobuf::Message*> pointers;
  pointers.reserve(items.size());
  for (const M& m : items) pointers.push_back(&m);
  return JsonEnvelope(kind, pointers, fields);
}
// The envelope of items already in JSON (JsonItem's, or ParseJsonEnvelope's): several runs' rows
// as one answer.
std::string JsonEnvelopeOfText(std::string_view kind, const std::vector<std::string>& items,
                               const std::vector<JsonField>& fields = {});
// A command that answers with one message.
inline std::string JsonEnvelope(std::string_view kind, const google::protobuf::Message& item,
                                const std::vector<JsonField>& fields = {}) {
  return JsonEnvelope(kind, std::vector<const google::protobuf::Message*>{&item}, fields);
}

// ---- reading it back (tests, and programs in C++ that hold only the text)

struct ParsedEnvelope {
  int schema_version = 0;
  std::string kind;
  std::vector<std::string> items;                           // each item's JSON text
  std::vector<std::string> keys;                            // every top-level key, in order
  std::vector<std::pair<std::string, std::string>> fields;  // beside the items, as JSON text
  // A field beside the items as JSON text ("true", "\"42\""), empty when there is none.
  std::string Field(std::string_view key) const;
};

// Empty on success, else what is wrong with `text` (not JSON, no envelope).
std::string ParseJsonEnvelope(std::string_view text, ParsedEnvelope* out);

// An item back into its message: the words back into the enum values. Empty on success, else why
// not.
std::string ParseJsonItem(std::string_view item, google::protobuf::Message* message);

// The items of an envelope of `kind` as messages M (and the envelope in `parsed`, when given).
// Empty on success, else what is wrong: not an envelope, another kind, an item that is no M.
template <class M>
std::string ReadJsonEnvelope(std::string_view text, std::string_view kind, std::vector<M>* items,
                             ParsedEnvelope* parsed = nullptr) {
  ParsedEnvelope local;
  ParsedEnvelope& envelope = parsed != nullptr ? *parsed : local;
  if (std::string error = ParseJsonEnvelope(text, &envelope); !error.empty()) return error;
  if (envelope.kind != kind)
    return "the envelope's kind is '" + envelope.kind + "', not '" + std::string(kind) + "'";
  items->clear();
  for (const std::string& item : envelope.items) {
    M message;
    if (std::string error = ParseJsonItem(item, &message); !error.empty())
      return "item " + std::to_string(items->size()) + ": " + error;
    items->push_back(std::move(message));
  }
  return "";
}

}  // namespace ablation::client
