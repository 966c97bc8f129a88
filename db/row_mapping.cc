#include "db/row_mapping.h"

#include <algorithm>
#include <bit>
#include <set>

#include "ablation/v1/storage.pb.h"
#include "db/error.h"
#include "db/records.h"
#include "db/sqlite.h"

namespace ablation::db {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using Type = RowMapping::Column::Type;

[[noreturn]] void Unmappable(const FieldDescriptor* field, std::string_view why) {
  throw Error(Error::Code::kInvalidArgument,
              "cannot store " + field->full_name() + " as a column: " + std::string(why));
}

Type TypeOf(const FieldDescriptor* field) {
  if (field->is_map()) {
    Unmappable(field, "a map has no column; mark it [(ablation.v1.not_stored) = true]");
  }
  if (field->is_repeated()) {
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_STRING &&
        field->type() == FieldDescriptor::TYPE_STRING) {
      return Type::kTextList;
    }
    Unmappable(field,
               "only a repeated string has a column (comma-separated); mark it "
               "[(ablation.v1.not_stored) = true] and keep it in a table of its own");
  }
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return Type::kInt32;
    case FieldDescriptor::CPPTYPE_INT64:
      return Type::kInt64;
    case FieldDescriptor::CPPTYPE_UINT32:
      return Type::kUInt32;
    case FieldDescriptor::CPPTYPE_UINT64:
      return Type::kUInt64;
    case FieldDescriptor::CPPTYPE_BOOL:
      return Type::kBool;
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return Type::kDouble;
    case FieldDescriptor::CPPTYPE_FLOAT:
      return Type::kFloat;
    case FieldDescriptor::CPPTYPE_ENUM:
      return Type::kEnum;
    case FieldDescriptor::CPPTYPE_STRING:
      if (field->type() == FieldDescriptor::TYPE_BYTES) {
        Unmappable(field,
                   "bytes have no column mapping; mark it [(ablation.v1.not_stored) = true]");
      }
      return Type::kText;
    case FieldDescriptor::CPPTYPE_MESSAGE:
      break;  // flattened by the caller
  }
  Unmappable(field, "unsupported field type");
}

std::string Join(const Message& holder, const Reflection& reflection,
                 const FieldDescriptor* field) {
  std::string out, scratch;
  const int size = reflection.FieldSize(holder, field);
  for (int i = 0; i < size; ++i) {
    if (i > 0) out += ',';
    out += reflection.GetRepeatedStringReference(holder, field, i, &scratch);
  }
  return out;
}

void SplitInto(const std::string& text, Message& holder, const Reflection& reflection,
               const FieldDescriptor* field) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) reflection.AddString(&holder, field, text.substr(start, end - start));
    start = end + 1;
  }
}

const std::string& TextOf(const RowMapping::Column& column, int number) {
  for (const auto& [text, value] : column.enum_values) {
    if (value == number) return text;
  }
  throw Error(Error::Code::kInvalidArgument,
              column.field->full_name() + " holds " + std::to_string(number) + ", which is no " +
                  column.field->enum_type()->full_name() + " value; it cannot be stored");
}

int NumberOf(const RowMapping::Column& column, const std::string& text,
             const Statement& statement) {
  for (const auto& [known, value] : column.enum_values) {
    if (known == text) return value;
  }
  std::string expected;
  for (const auto& [known, value] : column.enum_values) {
    expected += (expected.empty() ? "'" : ", '") + known + "'";
  }
  throw Error("database '" + statement.connection().path() + "': column " + column.name +
              " holds '" + text + "', which names no " + column.field->enum_type()->full_name() +
              " value (expected one of " + expected +
              "); was it written by hand, or by a newer ablationd?");
}

}  // namespace

RowMapping::RowMapping(const Descriptor* descriptor) : descriptor_(descriptor) {
  std::vector<const FieldDescriptor*> path;
  AddFields(descriptor, path);
  std::set<std::string_view> names;
  for (const Column& column : columns_) {
    if (!names.insert(column.name).second) {
      std::string both;
      for (const Column& other : columns_) {
        if (other.name == column.name) {
          both += (both.empty() ? "" : " and ") + other.field->full_name();
        }
      }
      throw Error(Error::Code::kInvalidArgument,
                  descriptor->full_name() + ": " + both + " both map to column '" + column.name +
                      "'; give one an [(ablation.v1.column)] option");
    }
  }
}

void RowMapping::AddFields(const Descriptor* descriptor,
                           std::vector<const FieldDescriptor*>& path) {
  // Declaration order, so that the column list reads like the .proto.
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    const auto& options = field->options();
    if (options.GetExtension(v1::not_stored)) continue;
    if (path.empty() && field->name() == "id" &&
        field->cpp_type() == FieldDescriptor::CPPTYPE_INT64 && !field->is_repeated()) {
      key_ = field;
      continue;
    }
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && !field->is_repeated()) {
      if (options.HasExtension(v1::column)) {
        Unmappable(field,
                   "a sub-message is flattened into its fields' columns; put the column "
                   "option on those fields");
      }
      if (std::find(path.begin(), path.end(), field) != path.end()) {
        Unmappable(field, "a message that contains itself cannot be flattened");
      }
      path.push_back(field);
      AddFields(field->message_type(), path);
      path.pop_back();
      continue;
    }
    Column column;
    column.type = TypeOf(field);
    column.name =
        options.HasExtension(v1::column) ? options.GetExtension(v1::column) : field->name();
    column.field = field;
    column.nullable = field->has_presence();
    if (path.empty()) {
      column.holder = 0;
    } else {
      if (paths_.empty() || paths_.back() != path) paths_.push_back(path);
      column.holder = static_cast<int>(paths_.size());
    }
    if (column.type == Type::kEnum) {
      const auto* type = field->enum_type();
      for (int v = 0; v < type->value_count(); ++v) {
        column.enum_values.emplace_back(EnumText(type->value(v)), type->value(v)->number());
      }
    }
    columns_.push_back(std::move(column));
  }
}

std::vector<std::string> RowMapping::ColumnNames() const {
  std::vector<std::string> names;
  names.reserve(columns_.size());
  for (const Column& column : columns_) names.push_back(column.name);
  return names;
}

std::string RowMapping::ColumnList(std::string_view qualifier) const {
  std::string sql;
  for (const Column& column : columns_) {
    if (!sql.empty()) sql += ", ";
    sql += qualifier;
    sql += column.name;
  }
  return sql;
}

std::string RowMapping::Placeholders() const {
  std::string sql;
  for (size_t i = 0; i < columns_.size(); ++i) sql += i == 0 ? "?" : ", ?";
  return sql;
}

std::string RowMapping::Assignments() const {
  std::string sql;
  for (const Column& column : columns_) {
    if (!sql.empty()) sql += ", ";
    sql += column.name + " = ?";
  }
  return sql;
}

std::string RowMapping::SelectList(std::string_view qualifier) const {
  std::string sql;
  if (key_ != nullptr) {
    sql += qualifier;
    sql += key_->name();
    if (!columns_.empty()) sql += ", ";
  }
  return sql + ColumnList(qualifier);
}

int RowMapping::Parameter(std::string_view column) const {
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i].name == column) return static_cast<int>(i) + 1;
  }
  throw Error(Error::Code::kInvalidArgument,
              descriptor_->full_name() + " has no column '" + std::string(column) + "'");
}

const Message& RowMapping::Holder(const Message& row, int holder) const {
  const Message* message = &row;
  if (holder == 0) return *message;
  // GetMessage of an unset sub-message is its default instance: unset reads as all defaults.
  for (const FieldDescriptor* field : paths_[holder - 1]) {
    message = &message->GetReflection()->GetMessage(*message, field);
  }
  return *message;
}

Message& RowMapping::MutableHolder(Message& row, int holder) const {
  Message* message = &row;
  if (holder == 0) return *message;
  for (const FieldDescriptor* field : paths_[holder - 1]) {
    message = message->GetReflection()->MutableMessage(message, field);
  }
  return *message;
}

int RowMapping::Bind(const Message& row, Statement& s, int first) const {
  if (row.GetDescriptor() != descriptor_) {
    throw Error(Error::Code::kInvalidArgument, "internal: binding a " +
                                                   row.GetDescriptor()->full_name() + " as a " +
                                                   descriptor_->full_name());
  }
  int index = first;
  int current = -1;
  const Message* holder = nullptr;
  const Reflection* r = nullptr;
  std::string scratch;
  for (const Column& c : columns_) {
    if (c.holder != current) {
      holder = &Holder(row, c.holder);
      r = holder->GetReflection();
      current = c.holder;
    }
    const int p = index++;
    if (c.nullable && !r->HasField(*holder, c.field)) {
      s.BindNull(p);
      continue;
    }
    switch (c.type) {
      case Type::kInt32:
        s.BindInt64(p, r->GetInt32(*holder, c.field));
        break;
      case Type::kInt64:
        s.BindInt64(p, r->GetInt64(*holder, c.field));
        break;
      case Type::kUInt32:
        s.BindInt64(p, r->GetUInt32(*holder, c.field));
        break;
      case Type::kUInt64:  // as SQLite's signed 64 bits; read back by the same cast
        s.BindInt64(p, static_cast<int64_t>(r->GetUInt64(*holder, c.field)));
        break;
      case Type::kBool:
        s.BindInt64(p, r->GetBool(*holder, c.field) ? 1 : 0);
        break;
      case Type::kDouble:
        s.BindDouble(p, r->GetDouble(*holder, c.field));
        break;
      case Type::kFloat:
        s.BindDouble(p, r->GetFloat(*holder, c.field));
        break;
      case Type::kText:
        s.BindText(p, r->GetStringReference(*holder, c.field, &scratch));
        break;
      case Type::kEnum:
        s.BindText(p, TextOf(c, r->GetEnumValue(*holder, c.field)));
        break;
      case Type::kTextList:
        s.BindText(p, Join(*holder, *r, c.field));
        break;
    }
  }
  return index;
}

int RowMapping::Read(const Statement& s, Message& row, int first) const {
  if (row.GetDescriptor() != descriptor_) {
    throw Error(Error::Code::kInvalidArgument, "internal: reading a " + descriptor_->full_name() +
                                                   " into a " + row.GetDescriptor()->full_name());
  }
  row.Clear();
  int index = first;
  if (key_ != nullptr) row.GetReflection()->SetInt64(&row, key_, s.ColumnInt64(index++));
  // The message that holds the current column, looked up (and so created) only when a column of
  // it holds a value: a sub-message written unset, all defaults, reads back unset.
  int current = 0;
  Message* holder = &row;
  const Reflection* r = row.GetReflection();
  auto into = [&](const Column& c) {
    if (c.holder != current) {
      holder = &MutableHolder(row, c.holder);
      r = holder->GetReflection();
      current = c.holder;
    }
  };
  for (const Column& c : columns_) {
    const int i = index++;
    // NULL is unset in a field with presence: what a cleared row already holds. In any other
    // field NULL reads as the default (Column* read it as 0 or ''), and a default value is not
    // set either. Only the nullable columns ask for NULL: one call per column costs.
    if (c.nullable && s.IsNull(i)) continue;
    switch (c.type) {
      case Type::kInt32:
      case Type::kInt64:
      case Type::kUInt32:
      case Type::kUInt64:
      case Type::kBool: {
        const int64_t v = s.ColumnInt64(i);
        if (v == 0 && !c.nullable) break;
        into(c);
        if (c.type == Type::kInt32) r->SetInt32(holder, c.field, static_cast<int32_t>(v));
        if (c.type == Type::kInt64) r->SetInt64(holder, c.field, v);
        if (c.type == Type::kUInt32) r->SetUInt32(holder, c.field, static_cast<uint32_t>(v));
        if (c.type == Type::kUInt64) r->SetUInt64(holder, c.field, static_cast<uint64_t>(v));
        if (c.type == Type::kBool) r->SetBool(holder, c.field, v != 0);
        break;
      }
      case Type::kDouble:
      case Type::kFloat: {
        const double v = s.ColumnDouble(i);
        // +0.0 only: -0.0 is a value of its own to protobuf too.
        if (std::bit_cast<uint64_t>(v) == 0 && !c.nullable) break;
        into(c);
        if (c.type == Type::kDouble) {
          r->SetDouble(holder, c.field, v);
        } else {
          r->SetFloat(holder, c.field, static_cast<float>(v));
        }
        break;
      }
      case Type::kText: {
        std::string v = s.ColumnText(i);
        if (v.empty() && !c.nullable) break;
        into(c);
        r->SetString(holder, c.field, std::move(v));
        break;
      }
      case Type::kEnum: {
        const std::string text = s.ColumnText(i);
        if (text.empty() && !c.nullable) break;  // NULL or '': unspecified
        const int v = NumberOf(c, text, s);
        if (v == 0 && !c.nullable) break;
        into(c);
        r->SetEnumValue(holder, c.field, v);
        break;
      }
      case Type::kTextList: {
        const std::string v = s.ColumnText(i);
        if (v.empty()) break;
        into(c);
        SplitInto(v, *holder, *r, c.field);
        break;
      }
    }
  }
  return index;
}

void RowMapping::RequireColumns(Connection& connection, std::string_view table) const {
  std::set<std::string> present;
  {
    Statement s(connection, "SELECT name FROM pragma_table_info(?)");
    s.BindText(1, table);
    while (s.Step()) present.insert(s.ColumnText(0));
  }
  std::string missing;
  auto require = [&](const std::string& name, const FieldDescriptor* field) {
    if (present.contains(name)) return;
    missing += (missing.empty() ? "" : ", ") + name + " (" + field->full_name() + ")";
  };
  if (key_ != nullptr) require(key_->name(), key_);
  for (const Column& column : columns_) require(column.name, column.field);
  if (!missing.empty()) {
    throw Error(Error::Code::kIncompatible,
                "database '" + connection.path() + "': table " + std::string(table) +
                    " has no column for " + missing +
                    "; a stored field needs a migration that adds its column (db/migrations.cc)");
  }
}

}  // namespace ablation::db
