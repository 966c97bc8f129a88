#include "client/commands/cmd_verify.h"

#include <algorithm>

#include "client/cli/calls.h"
#include "client/cli/dtype.h"
#include "client/cli/exit_codes.h"
#include "client/cli/parse.h"
#include "client/cli/validators.h"
#include "client/output/enum_words.h"
#include "client/output/render.h"

namespace ablation::client {

CLI::App* SetupVerify(CLI::App& app, VerifyOptions& options) {
  CLI::App* sub = app.add_subcommand("verify", "Check variants' outputs against a reference");
  AddSelectionOptions(sub, options, VariantsAs::kOption);
  sub->add_option("--against", options.against,
                  "cpu, cublas or a variant name (default: cpu up to 1024^3, else cublas)")
      ->check(CLI::Validator(
          [](std::string& text) {
            v1::Reference reference;
            std::string variant;
            return ParseReference("", text, &reference, &variant);
          },
          "cpu|cublas|VARIANT", "reference"));
  sub->add_option("--device,-d", options.device, "GPU index")
      ->capture_default_str()
      ->check(WholeNumber(0));
  sub->add_option("--tag", options.tags, "Tag stored with the verify run; repeatable")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  return sub;
}

v1::VerifyRequest BuildVerifyRequest(const VerifyOptions& options) {
  v1::VerifyRequest request;
  for (const std::string& v : options.variants) request.add_variants(v);
  AddShapes(options, request.mutable_shapes());
  AddSizes(options, request.mutable_sizes());
  request.set_dtype(options.dtype);
  v1::Reference reference;
  std::string variant;
  ParseReference("--against", options.against, &reference, &variant);  // checked by SetupVerify
  request.set_reference(reference);
  request.set_reference_variant(variant);
  request.set_device(options.device);
  for (const std::string& t : options.tags) request.add_tags(t);
  return request;
}

// Alike in shape to profile's (cmd_profile.cc says what they share and what not).
int ExecuteVerify(const VerifyOptions& options, const CommandContext& context) {
  DTypeChoice dtype;
  if (!ResolveSelectionDType(options, context, &dtype)) return kExitUsage;
  v1::VerifyRequest request = BuildVerifyRequest(options);
  request.set_dtype(dtype.dtype);
  v1::VerifyResponse response;
  grpc::ClientContext call;
  // Verification waits for the GPU behind queued runs: no deadline unless --timeout says so.
  SetDeadline(call, context.global, 0);
  grpc::Status status = context.stub.Verify(&call, request, &response);
  if (!status.ok()) return ReportSelectionError(status, dtype, context);
  std::vector<v1::VerifyResult> results(response.results().begin(), response.results().end());
  context.out << RenderList(context.global.format, "verifications", results, &VerifyTable,
                            {{"run_id", response.run_id()}});
  const auto failed = std::count_if(results.begin(), results.end(),
                                    [](const v1::VerifyResult& r) { return !r.passed(); });
  if (context.global.format == Format::kTable) {
    context.err << "verify run " << response.run_id() << ": " << results.size() - failed
                << " passed, " << failed << " failed\n";
  }
  return failed > 0 ? kExitFailed : kExitOk;
}

}  // namespace ablation::client
