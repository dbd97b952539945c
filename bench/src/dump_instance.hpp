// --dump-tensors for one instance: its tensors as NumPy files and a
// manifest.json under <dir>/<kernel>/<shape>/, written after it validated.
#pragma once

#include "rl/registry.hpp"

#include <cstdint>
#include <filesystem>
#include <vector>

namespace rl::bench {

void dump_instance(const std::filesystem::path& dir, const KernelRecord& record, const Shape& shape,
                   std::uint64_t seed, const std::vector<TensorDump>& tensors);

}  // namespace rl::bench
