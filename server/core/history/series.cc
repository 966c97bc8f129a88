#include "server/core/history/series.h"

#include <cctype>
#include <cstdio>

#include "common/text.h"
#include "server/core/base/sha256.h"

namespace ablation::core {
namespace {

bool KeyChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
         c == '/';
}

}  // namespace

std::string HardwareFingerprint(const v1::DeviceIdentity& device, std::string_view clock_policy) {
  if (device.name().empty()) return "";
  char power[32] = "";
  if (device.has_power_limit_w())
    std::snprintf(power, sizeof power, "%.0f", device.power_limit_w());
  std::string text;
  text += "model=" + device.name() + "\n";
  text += "cc=" + device.compute_capability() + "\n";
  text += "vbios=" + device.vbios_version() + "\n";
  text += "driver=" + device.driver_version() + "\n";
  text += "cuda=" + device.cuda_runtime_version() + "\n";
  text += "cublas=" + device.cublas_version() + "\n";
  text += std::string("power_limit_w=") + power + "\n";
  text += "ecc=" + device.ecc_mode() + "\n";
  text += "clocks=" + std::string(clock_policy) + "\n";
  return Sha256Hex(text).substr(0, 16);
}

Status ParseNodeLabels(std::string_view text, std::map<std::string, std::string>* labels) {
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view entry = common::TrimSpace(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (entry.empty()) continue;
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos) {
      return InvalidArgument("node label '" + std::string(entry) + "' is not key=value");
    }
    const std::string_view key = common::TrimSpace(entry.substr(0, eq));
    const std::string_view value = common::TrimSpace(entry.substr(eq + 1));
    if (key.empty()) return InvalidArgument("node label '" + std::string(entry) + "' has no key");
    for (char c : key) {
      if (!KeyChar(c)) {
        return InvalidArgument("node label key '" + std::string(key) +
                               "' may hold only letters, digits, '-', '_', '.' and '/'");
      }
    }
    if (value.find('=') != std::string_view::npos) {
      return InvalidArgument("node label '" + std::string(entry) + "': a value may not hold '='");
    }
    (*labels)[std::string(key)] = std::string(value);
  }
  return Status::Ok();
}

std::string FormatNodeLabels(const std::map<std::string, std::string>& labels) {
  std::string out;
  for (const auto& [key, value] : labels) {
    if (!out.empty()) out += ',';
    out += key + "=" + value;
  }
  return out;
}

}  // namespace ablation::core
