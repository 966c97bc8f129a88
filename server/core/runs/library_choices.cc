#include "server/core/runs/library_choices.h"

#include <spdlog/spdlog.h>

namespace ablation::core {

db::LibraryChoiceRecord StoredLibraryChoices::Key(const std::string& variant,
                                                  const kernels::Problem& problem) const {
  db::LibraryChoiceRecord key;
  key.device_uuid = uuid_;
  key.library_version = version_;
  key.variant = variant;
  key.dtype = kernels::ToString(problem.dtype);
  key.m = problem.m;
  key.n = problem.n;
  key.k = problem.k;
  return key;
}

std::optional<worker::v1::LibraryChoice> StoredLibraryChoices::Find(
    const std::string& variant, const kernels::Problem& problem) {
  std::optional<db::LibraryChoiceRecord> stored = store_->FindLibraryChoice(Key(variant, problem));
  if (!stored) return std::nullopt;
  worker::v1::LibraryChoice choice;
  choice.set_variant(variant);
  choice.set_algo(stored->algo);
  if (!choice.mutable_described()->ParseFromString(stored->described)) choice.clear_described();
  return choice;
}

void StoredLibraryChoices::Keep(const std::string& variant, const kernels::Problem& problem,
                                const worker::v1::LibraryTuning& tuning) {
  if (tuning.chosen() < 0 || tuning.chosen() >= tuning.candidates_size()) return;
  const auto& chosen = tuning.candidates(tuning.chosen());
  db::LibraryChoiceRecord record = Key(variant, problem);
  record.algo = chosen.algo_data();
  record.described = chosen.algo().SerializeAsString();
  record.tuning = tuning.SerializeAsString();
  record.run_id = run_id_;
  if (store_->SaveLibraryChoice(record))
    spdlog::info("{} {} {}x{}x{}: chose cuBLASLt's candidate {} of {} ({}), kept for device {}",
                 variant, record.dtype, problem.m, problem.n, problem.k, tuning.chosen(),
                 tuning.candidates_size(), chosen.algo().library_config(), uuid_);
}

}  // namespace ablation::core
