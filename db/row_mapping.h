// How a protobuf message is a table row: its columns, computed once from the message's
// descriptor, and the binding and reading of one row through protobuf reflection. This is what
// lets ablation.v1.Measurement, Run and VerifyResult be written out once, in the .proto: a new
// field needs the field and a migration that adds its column, no store code.
//
// The rules (proto/ablation/v1/storage.proto):
//   - a top-level int64 field `id` is the table's INTEGER PRIMARY KEY: SQLite assigns it, so it
//     is read (first, in SelectList) but never bound;
//   - every other scalar or enum field is the column of its own name, or of the name its
//     [(ablation.v1.column)] option gives;
//   - the fields of a singular sub-message are columns too, flattened without a prefix (a
//     sub-message's sub-messages likewise);
//   - [(ablation.v1.not_stored) = true] fields are no column (the store keeps them elsewhere);
//   - an enum is TEXT: EnumText of its value (RUN_STATE_QUEUED -> 'queued', unspecified -> '');
//     reading text that names no value throws Error;
//   - a field with presence (proto3 `optional`) is NULL when unset and unset when NULL; any
//     other field reads NULL as its default (0, '', false);
//   - reading sets only the fields whose column holds a value other than the default, so a
//     sub-message that was unset (or all defaults) when written reads back unset;
//   - a repeated string is one TEXT, its elements joined with ',' (an element must not contain
//     one); reading splits it again, dropping empty pieces;
//   - anything else (maps, bytes, other repeated fields) must be not_stored: the mapping refuses
//     it when built, naming the field.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

namespace ablation::db {

class Connection;
class Statement;

class RowMapping {
 public:
  struct Column {
    enum class Type {
      kInt32,
      kInt64,
      kUInt32,
      kUInt64,
      kBool,
      kDouble,
      kFloat,
      kText,
      kEnum,
      kTextList
    };
    std::string name;
    const google::protobuf::FieldDescriptor* field;  // the leaf field
    // Which message holds the field: 0 the row itself, else 1 + an index into paths_ (the
    // sub-message fields leading to it). Columns of one sub-message are adjacent, so binding and
    // reading look each sub-message up once per row, not once per column.
    int holder;
    Type type;
    bool nullable;  // the field has presence: NULL when unset
    // kEnum: each value's text and number, in declaration order.
    std::vector<std::pair<std::string, int>> enum_values;
  };

  // Walks the descriptor (and its sub-messages' descriptors) once. Throws Error(kInvalidArgument)
  // naming the field for a field it cannot map, and for two fields that map to one column.
  explicit RowMapping(const google::protobuf::Descriptor* descriptor);

  // The mapping of a generated message type, built on first use and kept for the process.
  template <typename M>
  static const RowMapping& Of() {
    static const RowMapping mapping(M::descriptor());
    return mapping;
  }

  const google::protobuf::Descriptor* descriptor() const { return descriptor_; }
  // The primary key field `id`, or nullptr when the message has none.
  const google::protobuf::FieldDescriptor* key() const { return key_; }
  // In Bind order; without the key.
  const std::vector<Column>& columns() const { return columns_; }
  std::vector<std::string> ColumnNames() const;

  // SQL pieces, built from the columns (callers build them once and keep the statements):
  // "a, b, c" (each prefixed with qualifier, e.g. "measurements."), for INSERT.
  std::string ColumnList(std::string_view qualifier = {}) const;
  // "?, ?, ?": one per column.
  std::string Placeholders() const;
  // "a = ?, b = ?": for UPDATE ... SET.
  std::string Assignments() const;
  // The key (when there is one), then the columns: what Read expects.
  std::string SelectList(std::string_view qualifier = {}) const;
  // The 1-based parameter that Bind(.., first = 1) binds column to; throws if it is none.
  int Parameter(std::string_view column) const;

  // Binds every column of row (not the key) from parameter first on; returns the next free
  // parameter. row must be of descriptor()'s type. Throws Error(kInvalidArgument) for an enum
  // number that its .proto does not name.
  int Bind(const google::protobuf::Message& row, Statement& statement, int first = 1) const;
  // Clears row, then reads SelectList's columns of the current result row, from result column
  // first on, into it; returns the next unread column. Throws Error naming the column and the
  // database for enum text that names no value.
  int Read(const Statement& statement, google::protobuf::Message& row, int first = 0) const;

  // Throws Error(kIncompatible) naming every column of this mapping that table lacks, so that a
  // field added without its migration fails when the database is opened, not at the first row.
  void RequireColumns(Connection& connection, std::string_view table) const;

 private:
  void AddFields(const google::protobuf::Descriptor* descriptor,
                 std::vector<const google::protobuf::FieldDescriptor*>& path);
  const google::protobuf::Message& Holder(const google::protobuf::Message& row, int holder) const;
  google::protobuf::Message& MutableHolder(google::protobuf::Message& row, int holder) const;

  const google::protobuf::Descriptor* descriptor_;
  const google::protobuf::FieldDescriptor* key_ = nullptr;
  std::vector<Column> columns_;
  std::vector<std::vector<const google::protobuf::FieldDescriptor*>> paths_;
};

}  // namespace ablation::db
