// Helpers shared by the families' catalogs (kernels/<family>/<family>_catalog.cc). Host-only.
#pragma once

#include <string>
#include <string_view>

#include "kernels/common/problem.h"
#include "kernels/registry.h"

namespace ablation::kernels {

/// The can_implement of a family with one dtype whose kernels run one block per block.m x
/// block.n tile of C, step K by block.k and index with int: "" if `p` fits, else the reason,
/// naming the field (e.g. "k must be a multiple of 8 (the block tile BK), got 12").
std::string BlockTiledCanImplement(const Problem& p, DType dtype, std::string_view family,
                                   Tile block);

}  // namespace ablation::kernels
