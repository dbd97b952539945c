#include "rl/bench/tensor_dump.hpp"

#include <bit>
#include <cstring>
#include <stdexcept>

namespace rl::bench {

static_assert(std::endian::native == std::endian::little, ".npy '<f4' is written as memory");

std::string npy_float32(std::span<const float> values, std::span<const std::int64_t> dims) {
  std::int64_t count = 1;
  // A Python tuple: "(2, 3)", and "(3,)" for one dimension.
  std::string shape = "(";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) throw std::invalid_argument("npy: negative dimension");
    count *= dims[i];
    shape += (i > 0 ? ", " : "") + std::to_string(dims[i]);
  }
  shape += dims.size() == 1 ? ",)" : ")";
  if (static_cast<std::size_t>(count) != values.size())
    throw std::invalid_argument("npy: " + std::to_string(values.size()) + " values for shape " +
                                shape);
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  // Magic (6) + version (2) + header length (2) + header, padded with spaces
  // and ended by '\n' so the data starts on a 64-byte boundary.
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  const std::size_t offset = out.size();
  out.resize(offset + values.size() * sizeof(float));
  if (!values.empty())
    std::memcpy(out.data() + offset, values.data(), values.size() * sizeof(float));
  return out;
}

std::string dump_directory_name(std::string_view kernel, std::string_view shape) {
  auto clean = [](std::string_view s) {
    std::string out(s);
    for (char& c : out)
      if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            c == '.' || c == '_' || c == '=' || c == ',' || c == '-'))
        c = '_';
    return out;
  };
  return clean(kernel) + "/" + clean(shape);
}

}  // namespace rl::bench
