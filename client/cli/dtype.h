// Data types as users type them, and the dtype of a run inferred from the variants it names.
// The canonical words are the daemon's (bf16, fp16, fp32, tf32, int8, fp8); the short forms that
// variant names carry (f16, f32, i8: pipe_cpasync_f16_128x128x32) are accepted for them
// wherever the client takes a dtype.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "client/cli/options.h"

namespace ablation::client {

// The canonical word of a dtype or its alias, any case ("F16" -> "fp16"); "" when it is none.
std::string CanonicalDType(std::string_view text);
// "bf16, fp16 (f16), fp32 (f32), tf32, int8 (i8) or fp8 (e4m3)": what --dtype takes, for messages.
std::string DTypeWordsHelp();
// A CLI11 transformer: an alias becomes its canonical word; anything else is refused.
CLI::Validator DTypeTransformer();

// The dtype a variant name or glob names: one of its '_'-separated fields, taken literally (a
// field with a wildcard names nothing). "cublas_fp16" and "pipe_*_f16_*" name fp16, "tf32_*"
// names tf32, "abl_L1_*" and "L1_R1_s3" name none (""). A name whose fields name two different
// dtypes names none.
std::string DTypeNamedBy(std::string_view selector);

// The dtype a request is sent with, and why.
struct DTypeChoice {
  std::string dtype;  // canonical; empty: the daemon's default (bf16)
  // What it was inferred from ("the name cublas_fp16", "simt_at, which has only fp32"); empty
  // when given or left to the daemon.
  std::string from;
  std::string error;  // set: refuse the request with this message (no "error: " prefix)
};

// From the names alone: an explicit `given` dtype (canonical) wins but must agree with every
// selector that names one; else the dtype the selectors name, when they agree; selectors that
// name none (globs, short names) take whatever the others decide. Selectors naming different
// dtypes are refused: one request measures one dtype.
DTypeChoice ChooseDType(std::string_view given, const std::vector<std::string>& selectors);

// ChooseDType, then, when nothing decided and none of the selectors' variants has the default
// (bf16), the one dtype they all have, asked of the daemon (ListVariants): `run -v simt_at`
// runs fp32, its only dtype. A daemon that cannot answer leaves the default (the request's own
// call then says what is wrong).
DTypeChoice ResolveDType(std::string_view given, const std::vector<std::string>& selectors,
                         const CommandContext& context);

// After a refused request whose dtype was inferred: "note: dtype fp16 was inferred from the name
// cublas_fp16; --dtype overrides it"; "" when there is nothing to add.
std::string InferredDTypeNote(const DTypeChoice& choice);

}  // namespace ablation::client
