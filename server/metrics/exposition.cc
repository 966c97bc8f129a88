#include "server/metrics/exposition.h"

#include <prometheus/collectable.h>
#include <prometheus/text_serializer.h>

namespace ablation::metrics {

std::string WriteText(const prometheus::Collectable& collectable) {
  return prometheus::TextSerializer().Serialize(collectable.Collect());
}

}  // namespace ablation::metrics
