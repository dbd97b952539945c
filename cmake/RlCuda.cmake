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
#   The sources of one architecture family's own instructions (named
#   *_sm<NN>a.cu) are compiled for that family's arch-specific targets only:
#   the sm_120a file for 120a and 121a, the sm_100a files for 100a and 103a,
#   the sm_90a files for 90a (rl_cuda_source_architectures), so the static
#   checks see every arch-specific target without compiling every kernel for
#   it, and no source is compiled into stubs for the other families.
# Given (-DCMAKE_CUDA_ARCHITECTURES=90;100;120, or `native`), the same map
# applies: 90 -> 90a, 100 -> 100a, 103 -> 103a, 120 -> 120a, 121 -> 121a
# (with -real / -virtual kept); `native` is the visible GPUs' list, and a list
# that cannot be mapped (`all`, `all-major`, `native` without a GPU) stops the
# configure step with the reason.
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

# rl_cuda_map_architectures(<list> <native_caps> <out> <why>): a given
# CMAKE_CUDA_ARCHITECTURES with every architecture that has an arch-specific
# feature set named by it (90 -> 90a, 100 -> 100a, 103 -> 103a, 120 -> 120a,
# 121 -> 121a; a -real / -virtual suffix kept), `native` replaced by the
# compute capabilities nvidia-smi gave (<native_caps>, mapped the same way).
# <why> is set to one line when the list cannot be mapped, else empty.
function(rl_cuda_map_architectures entries native_caps out why)
  set(mapped)
  set(reason "")
  foreach(entry IN LISTS entries)
    if(entry STREQUAL "native")
      rl_cuda_archs_of_compute_caps("${native_caps}" native)
      if(NOT native)
        string(CONCAT reason "CMAKE_CUDA_ARCHITECTURES=native: no GPU answered nvidia-smi; name "
                      "the architectures instead (e.g. -DCMAKE_CUDA_ARCHITECTURES=\"90;100;120\")")
        break()
      endif()
      list(APPEND mapped ${native})
    elseif(entry MATCHES "^all")
      string(CONCAT reason "CMAKE_CUDA_ARCHITECTURES=${entry} builds plain sm_90/sm_100/sm_120, "
                    "without their arch-specific code (wgmma, tcgen05, block-scaled mma.sync); "
                    "name the architectures instead "
                    "(e.g. -DCMAKE_CUDA_ARCHITECTURES=\"80;89;90;100;120\")")
      break()
    elseif(entry MATCHES "^(90|100|103|120|121)(-real|-virtual)?$")
      list(APPEND mapped "${CMAKE_MATCH_1}a${CMAKE_MATCH_2}")
    else()
      list(APPEND mapped "${entry}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES mapped)
  set(${out} "${mapped}" PARENT_SCOPE)
  set(${why} "${reason}" PARENT_SCOPE)
endfunction()

# rl_cuda_source_family(<source> <out>): the arch-specific targets of the
# family a source is written for, by its name: _sm90a -> 90a; _sm100a -> 100a,
# 103a; _sm120a -> 120a, 121a; any other source: none.
function(rl_cuda_source_family source out)
  get_filename_component(stem "${source}" NAME_WE)
  set(family)
  if(stem MATCHES "_sm90a$")
    set(family 90a)
  elseif(stem MATCHES "_sm100a$")
    set(family 100a 103a)
  elseif(stem MATCHES "_sm120a$")
    set(family 120a 121a)
  endif()
  set(${out} "${family}" PARENT_SCOPE)
endfunction()

# rl_cuda_source_extra_architectures(<source> <archs> <out>): the targets of
# a source's family (above) that <archs> lacks, while <archs> holds that
# family in some form (120 holds the 12.x family) and the toolkit knows them.
# Only for the automatic list without a GPU (RL_CUDA_ARCHS_PER_SOURCE): a
# given list is compiled as given.
function(rl_cuda_source_extra_architectures source archs out)
  rl_cuda_source_family("${source}" family)
  set(held)
  foreach(arch IN LISTS archs)
    string(REGEX REPLACE "(-real|-virtual)$" "" arch "${arch}")
    list(APPEND held ${arch})
  endforeach()
  set(extras)
  foreach(arch IN LISTS family)
    string(REGEX REPLACE "a$" "" base ${arch})
    string(SUBSTRING "${base}" 0 2 major)
    set(same_family OFF)
    foreach(h IN LISTS held)
      if(h MATCHES "^${major}")
        set(same_family ON)
      endif()
    endforeach()
    # ... and the toolkit knows it (RL_NVCC_ARCHS: nvcc --list-gpu-arch).
    set(known ON)
    if(DEFINED RL_NVCC_ARCHS AND NOT RL_NVCC_ARCHS MATCHES "compute_${base}")
      set(known OFF)
    endif()
    if(same_family AND known AND NOT arch IN_LIST held)
      list(APPEND extras ${arch})
    endif()
  endforeach()
  set(${out} "${extras}" PARENT_SCOPE)
endfunction()

# rl_cuda_source_architectures(<source> <archs> <out>): the SASS targets a
# kernel source is compiled for in the automatic list without a GPU
# (RL_CUDA_ARCHS_PER_SOURCE).  A family's own source only for its family's
# targets in <archs> and its extras: on every other target its kernels would
# be stubs (their bodies are guarded by the family's feature macro) that no
# record launches (each such record's min_cc/max_cc name only its family),
# and each stub cost a device pass: 7 of 17 CPU s for
# attention_wgmma_pingpong_sm90a.cu (docs/perf-log.md, session 20).  A family
# <archs> does not hold keeps <archs> (stubs everywhere, as a given list
# compiles).  Every other source: <archs>.  -real / -virtual are dropped.
function(rl_cuda_source_architectures source archs out)
  set(bare)
  foreach(arch IN LISTS archs)
    string(REGEX REPLACE "(-real|-virtual)$" "" arch "${arch}")
    list(APPEND bare ${arch})
  endforeach()
  rl_cuda_source_family("${source}" family)
  rl_cuda_source_extra_architectures("${source}" "${archs}" extras)
  set(own)
  foreach(arch IN LISTS bare)
    if(arch IN_LIST family)
      list(APPEND own ${arch})
    endif()
  endforeach()
  list(APPEND own ${extras})
  if(NOT family OR NOT own)
    set(own ${bare} ${extras})
  endif()
  set(${out} "${own}" PARENT_SCOPE)
endfunction()

# rl_cuda_set_source_architectures(<target>): without a GPU
# (RL_CUDA_ARCHS_PER_SOURCE), each CUDA source of <target> is compiled for
# its own list (rl_cuda_source_architectures: machine code and PTX for each),
# the target's CMAKE_CUDA_ARCHITECTURES being turned off; otherwise (a GPU, or
# a given list) nothing changes: every source for CMAKE_CUDA_ARCHITECTURES.
function(rl_cuda_set_source_architectures target)
  if(NOT RL_CUDA_ARCHS_PER_SOURCE)
    return()
  endif()
  set_property(TARGET ${target} PROPERTY CUDA_ARCHITECTURES OFF)
  get_target_property(sources ${target} SOURCES)
  list(FILTER sources INCLUDE REGEX "\\.cu$")
  foreach(source IN LISTS sources)
    rl_cuda_source_architectures("${source}" "${CMAKE_CUDA_ARCHITECTURES}" archs)
    foreach(arch IN LISTS archs)
      set_property(SOURCE "${source}" TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_OPTIONS
                   "--generate-code=arch=compute_${arch},code=[compute_${arch},sm_${arch}]")
    endforeach()
  endforeach()
endfunction()

# `cmake -P` scripts (tests/static/cuda_architectures.cmake) take the functions only.
if(CMAKE_SCRIPT_MODE_FILE)
  return()
endif()

set(RL_HAVE_CUDA OFF)
if(RL_ENABLE_CUDA)
  check_language(CUDA)
endif()
if(RL_ENABLE_CUDA AND CMAKE_CUDA_COMPILER)
  set(RL_CUDA_ARCHS_PER_SOURCE OFF)
  if(DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT CMAKE_CUDA_ARCHITECTURES STREQUAL "")
    set(rl_smi_out "")
    if("native" IN_LIST CMAKE_CUDA_ARCHITECTURES)
      execute_process(COMMAND nvidia-smi --query-gpu=compute_cap --format=csv,noheader
                      OUTPUT_VARIABLE rl_smi_out ERROR_QUIET)
    endif()
    rl_cuda_map_architectures("${CMAKE_CUDA_ARCHITECTURES}" "${rl_smi_out}" rl_archs rl_why)
    if(rl_why)
      message(FATAL_ERROR "${rl_why}")
    endif()
    if(NOT rl_archs STREQUAL CMAKE_CUDA_ARCHITECTURES)
      message(STATUS "bench_roofline: CMAKE_CUDA_ARCHITECTURES ${CMAKE_CUDA_ARCHITECTURES} built "
                     "as ${rl_archs} (the arch-specific feature sets)")
    endif()
    set(CMAKE_CUDA_ARCHITECTURES ${rl_archs})
  else()
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
      set(RL_CUDA_ARCHS_PER_SOURCE ON)
      set(RL_NVCC_ARCHS "${rl_nvcc_archs}")
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
