#include "client/cli/selection.h"

#include "client/cli/calls.h"
#include "client/cli/dtype.h"
#include "client/cli/exit_codes.h"
#include "client/cli/parse.h"
#include "client/cli/validators.h"

namespace ablation::client {

void AddSelectionOptions(CLI::App* sub, Selection& selection, VariantsAs as) {
  if (as == VariantsAs::kOption) {
    sub->add_option("--variant,-v", selection.variants,
                    "Variant name, short name (L1_R1_s3) or glob (abl_*_s3_*); repeatable")
        ->type_name("VARIANT")
        ->required()
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  } else {
    sub->add_option("variants", selection.variants,
                    "Variant names, short names (L1_R1_s3) or globs (abl_*_s3_*)")
        ->type_name("VARIANT")
        ->required();
  }
  sub->add_option("--shape,-s", selection.shapes,
                  "MxNxK, or N for NxNxN; repeatable (default 4096x4096x4096)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(ShapeValidator());
  sub->add_option("--size", selection.sizes,
                  "Sizes of kernels of their own contract, NAME=N,...: rows=8192,cols=4096; "
                  "repeatable (default: each kernel's default sizes)")
      ->type_name("SIZES")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sub->add_option(
         "--dtype", selection.dtype,
         "bf16, fp16 (f16), fp32 (f32), tf32, int8 (i8) or fp8 (e4m3); default: the dtype in the "
         "variants' names (cublas_fp16, pipe_*_i8_*), else their only one, else bf16")
      ->transform(DTypeTransformer());
}

void AddShapes(const Selection& selection, google::protobuf::RepeatedPtrField<v1::Shape>* shapes) {
  for (const std::string& s : selection.shapes) *shapes->Add() = ParseShapeOrThrow(s);
  if (selection.shapes.empty()) *shapes->Add() = ParseShapeOrThrow("4096x4096x4096");
}

void AddSizes(const Selection& selection, google::protobuf::RepeatedPtrField<std::string>* sizes) {
  for (const std::string& s : selection.sizes) *sizes->Add() = s;
}

bool ResolveSelectionDType(const Selection& selection, const CommandContext& context,
                           DTypeChoice* choice) {
  *choice = ResolveDType(selection.dtype, selection.variants, context);
  if (choice->error.empty()) return true;
  context.err << "error: " << choice->error << '\n';
  return false;
}

int ReportSelectionError(const grpc::Status& status, const DTypeChoice& choice,
                         const CommandContext& context) {
  const int code = ReportRpcError(status, context);
  if (status.error_code() == grpc::StatusCode::INVALID_ARGUMENT &&
      !InferredDTypeNote(choice).empty())
    context.err << InferredDTypeNote(choice) << '\n';
  return code;
}

}  // namespace ablation::client
