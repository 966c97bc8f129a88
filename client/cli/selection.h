// What run, verify and profile select: variants (names, short names, globs), shapes and a dtype,
// added to each subcommand by one function so that their flags and help texts cannot drift apart.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "ablation/v1/ablation.pb.h"
#include "client/cli/dtype.h"
#include "client/cli/options.h"

namespace ablation::client {

struct Selection {
  std::vector<std::string> variants;
  std::vector<std::string> shapes;  ///< as typed: MxNxK or N
  std::string dtype;                ///< "" or a dtype word: the default is inferred (dtype.h)
  /// Kernels of their own contract: "rows=8192,cols=4096", as typed (the daemon reads them
  /// against each kernel's contract).
  std::vector<std::string> sizes;
};

/// How the variants are given: `--variant,-v` (repeatable, run and verify) or as positional
/// arguments (profile).
enum class VariantsAs { kOption, kPositional };

/// Adds the variants (required), --shape,-s (repeatable) and --dtype to `sub`, filling `selection`.
void AddSelectionOptions(CLI::App* sub, Selection& selection, VariantsAs as);

/// The selection's shapes as the API's, 4096^3 when none was given. Shapes were checked by the
/// option's validator, so a malformed one here is a programming error (throws).
void AddShapes(const Selection& selection, google::protobuf::RepeatedPtrField<v1::Shape>* shapes);

/// The selection's sizes of kernels of their own contract, as typed.
void AddSizes(const Selection& selection, google::protobuf::RepeatedPtrField<std::string>* sizes);

/// The dtype the selection runs in (dtype.h: ResolveDType). False, with the error said on
/// context.err, when the names and --dtype cannot agree on one.
bool ResolveSelectionDType(const Selection& selection, const CommandContext& context,
                           DTypeChoice* choice);

/// A call of a selection that failed: the error as ReportRpcError says it and, for a refusal of
/// the request where the dtype was inferred, where it came from (a variant without that dtype
/// reads better so). The exit code.
int ReportSelectionError(const grpc::Status& status, const DTypeChoice& choice,
                         const CommandContext& context);

}  // namespace ablation::client
