// A test hook of tensor_tcgen05_block_scaled_sm100a.cu: its block-scaled
// loops with the scale factors they upload corrupted, while validate() still
// expects the right product, so a test can show that the check catches a
// wrong scale or a dropped block (tests/emu_blackwell/sm100_kernels_test.cpp).
#pragma once

#include "rl/registry.hpp"

#include <memory>
#include <string>

namespace rl::ceilings {

enum class Tcgen05ScaleFault {
  none,
  wrong_scale,    // A's row 37, k-block 0: twice its scale
  dropped_block,  // every row's and column's k-block 1 scaled as k-block 0
};

// The workload of the block-scaled record `name` (tcgen05_loop_mxf8f6f4_e4m3,
// _mxf8f6f4_e3m2, _mxf4, _mxf4nvf4_ue4m3) at `shape`, with `fault`; nullptr
// for any other name.
std::unique_ptr<Workload> make_tcgen05_scaled_workload_with_fault(const std::string& name,
                                                                  const Shape& shape,
                                                                  Tcgen05ScaleFault fault);

}  // namespace rl::ceilings
