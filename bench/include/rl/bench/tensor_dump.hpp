// --dump-tensors: NumPy .npy files (format version 1.0, little-endian float32,
// C order) and the manifest beside them.  Plain C++, no NumPy needed to write
// them; numpy.load reads them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace rl::bench {

// The bytes of a .npy file holding `values` with shape `dims` ('<f4', C
// order).  Throws std::invalid_argument when the element count does not match.
std::string npy_float32(std::span<const float> values, std::span<const std::int64_t> dims);

// "<kernel>/<shape>" as a relative directory: the benchmark name with every
// character outside [A-Za-z0-9._=,-] replaced by '_'.
std::string dump_directory_name(std::string_view kernel, std::string_view shape);

}  // namespace rl::bench
