#include "server/rpc/reflection_v1.h"

#include <set>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>

#include "server/core/plan/limits.h"

namespace ablation::rpc {
namespace {

namespace r = grpc::reflection::v1;
using google::protobuf::DescriptorPool;
using google::protobuf::FileDescriptor;

// The file and every file it imports, each once, dependencies first: a client builds its pool
// from the answer without asking again.
void AddFile(const FileDescriptor* file, std::set<std::string>* sent,
             r::FileDescriptorResponse* out) {
  if (!sent->insert(file->name()).second) return;
  for (int i = 0; i < file->dependency_count(); ++i) AddFile(file->dependency(i), sent, out);
  google::protobuf::FileDescriptorProto proto;
  file->CopyTo(&proto);
  proto.SerializeToString(out->add_file_descriptor_proto());
}

void NotFound(const std::string& what, r::ServerReflectionResponse* response) {
  response->mutable_error_response()->set_error_code(int(grpc::StatusCode::NOT_FOUND));
  response->mutable_error_response()->set_error_message(what + " is not known to this server");
}

// A name from the request, for a message: short and printable whatever the caller sent.
std::string Named(const char* kind, const std::string& name) {
  return std::string(kind) + " " + core::QuoteInput(name);
}

class Stream final
    : public grpc::ServerBidiReactor<r::ServerReflectionRequest, r::ServerReflectionResponse> {
 public:
  explicit Stream(const ReflectionV1* service) : service_(service) { StartRead(&request_); }
  void OnReadDone(bool ok) override {
    if (!ok) return Finish(grpc::Status::OK);  // the client is done asking
    response_ = service_->Answer(request_);
    StartWrite(&response_);
  }
  void OnWriteDone(bool ok) override {
    if (!ok) return Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the client went away"));
    StartRead(&request_);
  }
  void OnDone() override { delete this; }

 private:
  const ReflectionV1* service_;
  r::ServerReflectionRequest request_;
  r::ServerReflectionResponse response_;
};

}  // namespace

grpc::ServerBidiReactor<r::ServerReflectionRequest, r::ServerReflectionResponse>*
ReflectionV1::ServerReflectionInfo(grpc::CallbackServerContext* context) {
  (void)context;
  return new Stream(this);
}

r::ServerReflectionResponse ReflectionV1::Answer(const r::ServerReflectionRequest& request) const {
  const DescriptorPool* pool = DescriptorPool::generated_pool();
  r::ServerReflectionResponse response;
  response.set_valid_host(request.host());
  *response.mutable_original_request() = request;
  std::set<std::string> sent;
  switch (request.message_request_case()) {
    case r::ServerReflectionRequest::kListServices:
      for (const auto& name : services_)
        response.mutable_list_services_response()->add_service()->set_name(name);
      break;
    case r::ServerReflectionRequest::kFileByFilename:
      if (const FileDescriptor* f = pool->FindFileByName(request.file_by_filename()))
        AddFile(f, &sent, response.mutable_file_descriptor_response());
      else
        NotFound(Named("file", request.file_by_filename()), &response);
      break;
    case r::ServerReflectionRequest::kFileContainingSymbol:
      if (const FileDescriptor* f =
              pool->FindFileContainingSymbol(request.file_containing_symbol()))
        AddFile(f, &sent, response.mutable_file_descriptor_response());
      else
        NotFound(Named("symbol", request.file_containing_symbol()), &response);
      break;
    case r::ServerReflectionRequest::kFileContainingExtension: {
      const auto& ext = request.file_containing_extension();
      const auto* type = pool->FindMessageTypeByName(ext.containing_type());
      const auto* field =
          type ? pool->FindExtensionByNumber(type, ext.extension_number()) : nullptr;
      if (field)
        AddFile(field->file(), &sent, response.mutable_file_descriptor_response());
      else
        NotFound("extension " + std::to_string(ext.extension_number()) + " of " +
                     Named("type", ext.containing_type()),
                 &response);
      break;
    }
    case r::ServerReflectionRequest::kAllExtensionNumbersOfType: {
      const auto* type = pool->FindMessageTypeByName(request.all_extension_numbers_of_type());
      if (!type) {
        NotFound(Named("type", request.all_extension_numbers_of_type()), &response);
        break;
      }
      std::vector<const google::protobuf::FieldDescriptor*> fields;
      pool->FindAllExtensions(type, &fields);
      auto* numbers = response.mutable_all_extension_numbers_response();
      numbers->set_base_type_name(type->full_name());
      for (const auto* f : fields) numbers->add_extension_number(f->number());
      break;
    }
    case r::ServerReflectionRequest::MESSAGE_REQUEST_NOT_SET:
      response.mutable_error_response()->set_error_code(int(grpc::StatusCode::INVALID_ARGUMENT));
      response.mutable_error_response()->set_error_message("the request names nothing to reflect");
      break;
  }
  return response;
}

}  // namespace ablation::rpc
