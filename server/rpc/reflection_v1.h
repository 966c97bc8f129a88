// grpc.reflection.v1, which Debian's grpc++_reflection (1.51, v1alpha only) does not serve:
// answered from the generated descriptor pool, as the v1alpha plugin answers. One reactor per
// stream; each request is answered before the next is read.
#pragma once

#include <string>
#include <vector>

#include "grpc/reflection/v1/reflection.grpc.pb.h"

namespace ablation::rpc {

class ReflectionV1 final : public grpc::reflection::v1::ServerReflection::CallbackService {
 public:
  /// `services`: the full names list_services reports.
  explicit ReflectionV1(std::vector<std::string> services) : services_(std::move(services)) {}

  grpc::ServerBidiReactor<grpc::reflection::v1::ServerReflectionRequest,
                          grpc::reflection::v1::ServerReflectionResponse>*
  ServerReflectionInfo(grpc::CallbackServerContext* context) override;

  /// The answer to one request (also for tests).
  grpc::reflection::v1::ServerReflectionResponse Answer(
      const grpc::reflection::v1::ServerReflectionRequest& request) const;

 private:
  std::vector<std::string> services_;
};

}  // namespace ablation::rpc
