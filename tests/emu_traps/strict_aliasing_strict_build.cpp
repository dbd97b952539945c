// The Packed128 kernels of packed128_kernels.hpp compiled with
// -fstrict-aliasing (CMakeLists.txt): what emulated code would compute
// without rl::emu's -fno-strict-aliasing.
#include "packed128_kernels.hpp"

namespace emu_traps {

Packed128Outputs run_packed128_kernels_strict(const std::vector<float>& in) {
  return run_packed128_kernels_here(in);
}

}  // namespace emu_traps
