#include "server/rpc/reflection_v1.h"

#include <google/protobuf/descriptor.pb.h>
#include <gtest/gtest.h>

#include "ablation/v1/ablation.pb.h"

namespace ablation::rpc {
namespace {

namespace r = grpc::reflection::v1;

TEST(ReflectionV1, AnswersFromTheGeneratedPoolWithDependenciesFirst) {
  (void)v1::RunRequest::descriptor();  // linked in: its file is in the generated pool
  ReflectionV1 reflection({"ablation.v1.Ablation"});
  r::ServerReflectionRequest request;
  request.set_list_services("");
  r::ServerReflectionResponse response = reflection.Answer(request);
  ASSERT_EQ(response.list_services_response().service_size(), 1);
  EXPECT_EQ(response.list_services_response().service(0).name(), "ablation.v1.Ablation");

  request.set_file_containing_symbol("ablation.v1.Ablation");
  response = reflection.Answer(request);
  const auto& files = response.file_descriptor_response().file_descriptor_proto();
  ASSERT_GE(files.size(), 2);
  google::protobuf::FileDescriptorProto first, last;
  ASSERT_TRUE(first.ParseFromString(files[0]));
  ASSERT_TRUE(last.ParseFromString(files[files.size() - 1]));
  EXPECT_EQ(last.name(), "ablation/v1/ablation.proto");
  EXPECT_NE(first.name(), last.name()) << "its imports come first";

  request.set_file_containing_symbol(std::string(5000, 'x'));
  response = reflection.Answer(request);
  EXPECT_EQ(response.error_response().error_code(), int(grpc::StatusCode::NOT_FOUND));
  EXPECT_LT(response.error_response().error_message().size(), 200u);
}

}  // namespace
}  // namespace ablation::rpc
