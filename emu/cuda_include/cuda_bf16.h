// <cuda_bf16.h> under the emulator: the CUDA-on-CPU runtime provides its names
// (rl/emu/runtime.hpp), so code written for nvcc keeps its includes.
#pragma once

#include "rl/emu/runtime.hpp"
