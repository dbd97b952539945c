# CUDA backend detection.
#
# Architectures, unless CMAKE_CUDA_ARCHITECTURES is given:
# - a GPU is visible (nvidia-smi answers): that GPU's own architecture, with the
#   arch-specific feature set where the architecture has one: compute
#   capability 9.0 builds as 90a, 10.0 as 100a, 10.3 as 103a, 12.0 as 120a and
#   12.1 as 121a (plain `native` would give sm_90 / sm_100, where the wgmma/TMA
#   code compiles to nothing); scripts/gpu_validate maps them the same way;
# - no GPU: the architectures the static checks cover, one per generation we
#   ship kernels for: Ampere (80), Ada (89, FP8 mma.sync), Hopper (90a: wgmma,
#   TMA), datacenter Blackwell (100a) and consumer Blackwell (120), each where
#   the toolkit knows it.  This is what `scripts/test` (and so CI) builds.
include(CheckLanguage)

# rl_cuda_archs_of_compute_caps("9.0\n8.0" out): nvidia-smi's compute
# capabilities as CMake architectures, 9.0 -> 90a, 10.0 -> 100a, 10.3 -> 103a,
# 12.0 -> 120a, 12.1 -> 121a (the arch-specific feature sets of Hopper and
# Blackwell), duplicates dropped.
function(rl_cuda_archs_of_compute_caps caps out)
  string(REGEX MATCHALL "[0-9]+\\.[0-9]+" caps "${caps}")
  set(archs)
  foreach(cap IN LISTS caps)
    string(REPLACE "." "" arch ${cap})
    if(arch MATCHES "^(90|100|103|120|121)$")
      set(arch ${arch}a)
    endif()
    list(APPEND archs ${arch})
  endforeach()
  list(REMOVE_DUPLICATES archs)
  set(${out} ${archs} PARENT_SCOPE)
endfunction()

set(RL_HAVE_CUDA OFF)
if(RL_ENABLE_CUDA)
  check_language(CUDA)
endif()
if(RL_ENABLE_CUDA AND CMAKE_CUDA_COMPILER)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
    execute_process(COMMAND nvidia-smi --query-gpu=compute_cap --format=csv,noheader
                    RESULT_VARIABLE rl_smi_rc OUTPUT_VARIABLE rl_smi_out ERROR_QUIET)
    if(rl_smi_rc EQUAL 0 AND NOT rl_smi_out STREQUAL "")
      rl_cuda_archs_of_compute_caps("${rl_smi_out}" rl_archs)
      set(CMAKE_CUDA_ARCHITECTURES ${rl_archs})
    else()
      execute_process(COMMAND ${CMAKE_CUDA_COMPILER} --list-gpu-arch
                      OUTPUT_VARIABLE rl_nvcc_archs ERROR_QUIET)
      set(CMAKE_CUDA_ARCHITECTURES)
      foreach(arch 80 89 90a 100a 120)
        string(REGEX REPLACE "a$" "" base ${arch})
        if(rl_nvcc_archs MATCHES "compute_${base}")
          list(APPEND CMAKE_CUDA_ARCHITECTURES ${arch})
        endif()
      endforeach()
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
