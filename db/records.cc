#include "db/records.h"

namespace ablation::db {

bool IsRunState(std::string_view state) {
  return state == kRunQueued || state == kRunRunning || IsFinalRunState(state);
}

bool IsFinalRunState(std::string_view state) {
  return state == kRunSucceeded || state == kRunPartial || state == kRunFailed ||
         state == kRunCancelled;
}

}  // namespace ablation::db
