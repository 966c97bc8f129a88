// Just enough of PNG (RFC 2083) to look at a headless browser's screenshot: 8-bit RGB or RGBA,
// not interlaced, every filter type. A test asks what is painted, not what the DOM claims.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ablation::testing {

struct Image {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> rgb;  // 3 bytes a pixel, rows top down
  std::uint32_t Pixel(int x, int y) const {
    const std::size_t i = (std::size_t(y) * std::size_t(width) + std::size_t(x)) * 3;
    return std::uint32_t(rgb[i]) << 16 | std::uint32_t(rgb[i + 1]) << 8 | rgb[i + 2];
  }
};

// "" and the image, or what is wrong with the file.
std::string DecodePng(const std::string& bytes, Image* out);

}  // namespace ablation::testing
