# cmake -P tests/static/cuda_architectures.cmake: how a given
# CMAKE_CUDA_ARCHITECTURES becomes arch-specific code (cmake/RlCuda.cmake),
# and which sources an architecture family's extra targets reach.  Each check
# prints one line and the script fails on the first mismatch.
cmake_minimum_required(VERSION 3.25)
get_filename_component(rl_root "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
include(${rl_root}/cmake/RlCuda.cmake)

function(expect what got want)
  if(NOT "${got}" STREQUAL "${want}")
    message(FATAL_ERROR "${what}: got '${got}', expected '${want}'")
  endif()
  message(STATUS "ok: ${what} -> ${got}")
endfunction()

function(expect_mapped given caps want)
  rl_cuda_map_architectures("${given}" "${caps}" mapped why)
  expect("map '${given}' (why)" "${why}" "")
  expect("map '${given}'" "${mapped}" "${want}")
endfunction()

function(expect_refused given caps pattern)
  rl_cuda_map_architectures("${given}" "${caps}" mapped why)
  if(NOT why MATCHES "${pattern}")
    message(FATAL_ERROR "map '${given}': expected a refusal matching '${pattern}', got '${why}'")
  endif()
  message(STATUS "ok: map '${given}' refused: ${why}")
endfunction()

# An explicit list: every family with an arch-specific feature set gets it.
expect_mapped("90;100;120" "" "90a;100a;120a")
expect_mapped("80;89;90-real;103;121-virtual" "" "80;89;90a-real;103a;121a-virtual")
expect_mapped("90a;100a;120f;75" "" "90a;100a;120f;75")
expect_mapped("90;90a" "" "90a")
# native: the visible GPUs, mapped as the automatic choice maps them.
expect_mapped("native" "9.0\n12.0\n" "90a;120a")
expect_mapped("native;80" "10.3" "103a;80")
rl_cuda_archs_of_compute_caps("9.0\n10.0\n10.3\n12.0\n12.1\n8.9" automatic)
expect("the automatic choice with GPUs" "${automatic}" "90a;100a;103a;120a;121a;89")
# What cannot be mapped stops the configure step with the reason.
expect_refused("native" "" "native: no GPU answered nvidia-smi")
expect_refused("all" "" "all builds plain sm_90/sm_100/sm_120")
expect_refused("80;all-major" "" "all-major builds plain")

# The family extras of the automatic list without a GPU.
set(no_gpu "80;89;90a;100a;120")
rl_cuda_source_extra_architectures(kernels/ceilings/tensor_mma_sync_sm120a.cu "${no_gpu}" extras)
expect("sm_120a source extras" "${extras}" "120a;121a")
rl_cuda_source_extra_architectures(kernels/ceilings/tensor_tcgen05_sm100a.cu "${no_gpu}" extras)
expect("sm_100a source extras" "${extras}" "103a")
rl_cuda_source_extra_architectures(kernels/ceilings/tensor_wgmma_sm90a.cu "${no_gpu}" extras)
expect("sm_90a source extras" "${extras}" "")
rl_cuda_source_extra_architectures(kernels/ceilings/hbm_stream.cu "${no_gpu}" extras)
expect("plain source extras" "${extras}" "")
# A family the list does not build at all gets nothing.
rl_cuda_source_extra_architectures(kernels/ceilings/tensor_mma_sync_sm120a.cu "80;90a" extras)
expect("sm_120a source without a 12.x target" "${extras}" "")
# A toolkit that does not know an architecture gets nothing for it.
set(RL_NVCC_ARCHS "compute_80 compute_100 compute_120")
rl_cuda_source_extra_architectures(kernels/ceilings/x_sm100a.cu "${no_gpu}" extras)
expect("sm_100a source, toolkit without 103" "${extras}" "")
unset(RL_NVCC_ARCHS)

# The SASS targets each source is compiled for without a GPU: a family's own
# source only for that family's arch-specific targets (no stubs elsewhere),
# every other source for the whole list.
rl_cuda_source_architectures(kernels/ceilings/tensor_wgmma_sm90a.cu "${no_gpu}" archs)
expect("sm_90a source architectures" "${archs}" "90a")
rl_cuda_source_architectures(kernels/ceilings/tensor_tcgen05_sm100a.cu "${no_gpu}" archs)
expect("sm_100a source architectures" "${archs}" "100a;103a")
rl_cuda_source_architectures(kernels/ceilings/tensor_mma_sync_sm120a.cu "${no_gpu}" archs)
expect("sm_120a source architectures" "${archs}" "120a;121a")
rl_cuda_source_architectures(kernels/ceilings/hbm_stream.cu "${no_gpu}" archs)
expect("plain source architectures" "${archs}" "80;89;90a;100a;120")
# A family the list does not hold keeps the list (its kernels compile to stubs).
rl_cuda_source_architectures(kernels/ceilings/tensor_wgmma_sm90a.cu "80;89-real" archs)
expect("sm_90a source without a 9.0 target" "${archs}" "80;89")
