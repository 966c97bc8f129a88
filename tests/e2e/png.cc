#include "tests/e2e/png.h"

#include <zlib.h>

#include <cstdlib>
#include <cstring>

namespace ablation::testing {
namespace {

std::uint32_t BigEndian(const std::string& b, std::size_t at) {
  return std::uint32_t(std::uint8_t(b[at])) << 24 | std::uint32_t(std::uint8_t(b[at + 1])) << 16 |
         std::uint32_t(std::uint8_t(b[at + 2])) << 8 | std::uint32_t(std::uint8_t(b[at + 3]));
}

int Paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

}  // namespace

std::string DecodePng(const std::string& bytes, Image* out) {
  static const char kSignature[] = "\x89PNG\r\n\x1a\n";
  if (bytes.size() < 33 || bytes.compare(0, 8, kSignature, 8) != 0) return "not a PNG";
  int channels = 0;
  std::string idat;
  for (std::size_t at = 8; at + 12 <= bytes.size();) {
    const std::uint32_t length = BigEndian(bytes, at);
    const std::string type = bytes.substr(at + 4, 4);
    if (at + 12 + length > bytes.size()) return "truncated chunk " + type;
    const std::size_t data = at + 8;
    if (type == "IHDR") {
      out->width = int(BigEndian(bytes, data));
      out->height = int(BigEndian(bytes, data + 4));
      const int depth = std::uint8_t(bytes[data + 8]), colour = std::uint8_t(bytes[data + 9]);
      const int interlace = std::uint8_t(bytes[data + 12]);
      if (depth != 8 || (colour != 2 && colour != 6) || interlace != 0)
        return "unsupported PNG: depth " + std::to_string(depth) + ", colour type " +
               std::to_string(colour) + ", interlace " + std::to_string(interlace);
      channels = colour == 2 ? 3 : 4;
    } else if (type == "IDAT") {
      idat.append(bytes, data, length);
    } else if (type == "IEND") {
      break;
    }
    at = data + length + 4;  // and the CRC
  }
  if (channels == 0 || out->width <= 0 || out->height <= 0) return "no IHDR";
  const std::size_t stride = std::size_t(out->width) * std::size_t(channels);
  std::vector<std::uint8_t> raw((stride + 1) * std::size_t(out->height));
  uLongf size = uLongf(raw.size());
  if (uncompress(raw.data(), &size, reinterpret_cast<const Bytef*>(idat.data()),
                 uLong(idat.size())) != Z_OK ||
      size != raw.size())
    return "cannot inflate the image data";
  std::vector<std::uint8_t> previous(stride, 0), row(stride);
  out->rgb.resize(std::size_t(out->width) * std::size_t(out->height) * 3);
  for (int y = 0; y < out->height; ++y) {
    const std::uint8_t* line = &raw[std::size_t(y) * (stride + 1)];
    const int filter = line[0];
    for (std::size_t i = 0; i < stride; ++i) {
      const int a = i >= std::size_t(channels) ? row[i - channels] : 0;
      const int b = previous[i];
      const int c = i >= std::size_t(channels) ? previous[i - channels] : 0;
      const int x = line[i + 1];
      int v = x;
      switch (filter) {
        case 1:
          v = x + a;
          break;
        case 2:
          v = x + b;
          break;
        case 3:
          v = x + (a + b) / 2;
          break;
        case 4:
          v = x + Paeth(a, b, c);
          break;
        default:
          break;
      }
      row[i] = std::uint8_t(v);
    }
    for (int px = 0; px < out->width; ++px)
      std::memcpy(&out->rgb[(std::size_t(y) * std::size_t(out->width) + std::size_t(px)) * 3],
                  &row[std::size_t(px) * std::size_t(channels)], 3);
    previous.swap(row);
  }
  return "";
}

}  // namespace ablation::testing
