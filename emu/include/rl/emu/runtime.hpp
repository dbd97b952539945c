// The CUDA-on-CPU emulator: everything rl/cuda.hpp provides under nvcc, for
// device code compiled by the host compiler (RL_EMULATE, set by linking
// rl::emu).  See launch.hpp for the execution model.
#pragma once

#include "rl/emu/block.hpp"
#include "rl/emu/cuda_api.hpp"
#include "rl/emu/launch.hpp"
#include "rl/emu/math.hpp"
#include "rl/emu/types.hpp"
#include "rl/emu/warp.hpp"

#if __has_include("rl/emu/fp16.hpp")
#include "rl/emu/fp16.hpp"
#endif
#if __has_include("rl/emu/wmma.hpp")
#include "rl/emu/wmma.hpp"
#endif
