// <cuda_runtime.h> under the emulator: the CUDA-on-CPU runtime provides its names
// (rl/emu/runtime.hpp), so code written for nvcc keeps its includes.
#pragma once

// What the toolkit's cuda_runtime.h brings in through crt/common_functions.h
// and crt/math_functions.h (CUDA 13), which code written for nvcc relies on
// without including it (llm.c's dev/cuda/common.h calls memcpy and memset):
// nvcc includes this header in every .cu file, and so does the emulator's
// rewrite (emu/tools/cuda_rewrite.py).
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <new>
#include <utility>

#include "rl/emu/runtime.hpp"
