#include "server/core/base/events.h"

namespace ablation::core {

DaemonEvents& NoEvents() {
  static DaemonEvents none;
  return none;
}

}  // namespace ablation::core
