# CUDA backend detection.
#
# Architectures: `native` when a GPU is visible (nvidia-smi answers), otherwise
# every architecture we ship kernels for: Turing (75), Ampere (80, 86),
# Ada (89), Hopper with its arch-specific features (90a: wgmma, TMA) and,
# where the toolkit knows it, consumer Blackwell (120).  The `ci` preset passes
# a leaner list (80;90a) to fit CI's time budget.
include(CheckLanguage)
set(RL_HAVE_CUDA OFF)
if(RL_ENABLE_CUDA)
  check_language(CUDA)
endif()
if(RL_ENABLE_CUDA AND CMAKE_CUDA_COMPILER)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
    execute_process(COMMAND nvidia-smi --query-gpu=compute_cap --format=csv,noheader
                    RESULT_VARIABLE rl_smi_rc OUTPUT_VARIABLE rl_smi_out ERROR_QUIET)
    if(rl_smi_rc EQUAL 0 AND NOT rl_smi_out STREQUAL "")
      set(CMAKE_CUDA_ARCHITECTURES native)
    else()
      set(CMAKE_CUDA_ARCHITECTURES 75 80 86 89 90a)
      execute_process(COMMAND ${CMAKE_CUDA_COMPILER} --list-gpu-arch
                      OUTPUT_VARIABLE rl_nvcc_archs ERROR_QUIET)
      if(rl_nvcc_archs MATCHES "compute_120")
        list(APPEND CMAKE_CUDA_ARCHITECTURES 120)
      endif()
    endif()
  endif()
  enable_language(CUDA)
  # CMake 3.25 knows no C++20 dialect flag for nvcc (3.26 does); nvcc >= 12 takes -std=c++20.
  if(CMAKE_VERSION VERSION_LESS 3.26 AND NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
  set(CMAKE_CUDA_STANDARD 20)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  find_package(CUDAToolkit REQUIRED)
  set(RL_HAVE_CUDA ON)
  message(STATUS "bench_roofline: CUDA backend ON, architectures: ${CMAKE_CUDA_ARCHITECTURES}")
else()
  message(STATUS "bench_roofline: nvcc not found; building the emulator backend only")
endif()
