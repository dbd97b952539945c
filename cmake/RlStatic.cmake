# Static checks of the compiled GPU code (ctest label `static`).
#
# Every kernel source is compiled once more per target architecture with
# `nvcc -cubin -arch=sm_<arch> -Xptxas -v` (same include dirs and definitions
# as rl_kernels_cuda), which proves that each kernel builds for each
# architecture and gives, per architecture,
#   <stem>.sm_<arch>.ptxas.txt   the ptxas resource report (registers, smem, spills, stack)
#   <stem>.sm_<arch>.sass        the SASS listing (cuobjdump -sass), when cuobjdump is found
# tests/static/check_static.py then checks them against the `// rl-static:`
# declarations in the source (tests/static/README.md).
#
# A separate cubin compile (instead of reading rl_kernels_cuda's fat objects)
# keeps each architecture's ptxas report apart.  ccache cannot cache `-cubin`
# compiles, so incrementality comes from make and nvcc's dependency file.
#
# cuobjdump is not part of every toolkit install: RL_CUOBJDUMP is searched in
# the project venv (scripts/static_tools installs it from PyPI), the toolkit,
# then PATH.  Without it the SASS expectations are reported as SKIPPED.

find_package(Python3 REQUIRED COMPONENTS Interpreter)

file(GLOB rl_static_venv_bins
     ${PROJECT_SOURCE_DIR}/.venv/lib/python3*/site-packages/nvidia/*/bin
     ${PROJECT_SOURCE_DIR}/.venv/lib/python3*/site-packages/nvidia/cuda_cuobjdump/bin
     ${PROJECT_SOURCE_DIR}/.venv/lib/python3*/site-packages/nvidia/cuda_nvdisasm/bin)
find_program(RL_CUOBJDUMP cuobjdump HINTS ${rl_static_venv_bins} ${CUDAToolkit_BIN_DIR}
             DOC "cuobjdump used to dump SASS for the static checks")
find_program(RL_NVDISASM nvdisasm HINTS ${rl_static_venv_bins} ${CUDAToolkit_BIN_DIR}
             DOC "nvdisasm (control-flow and register-liveness listings of a cubin)")
if(RL_CUOBJDUMP)
  message(STATUS "bench_roofline: static checks read SASS with ${RL_CUOBJDUMP}")
else()
  message(STATUS "bench_roofline: cuobjdump not found; the static SASS checks will be SKIPPED "
                 "(run scripts/static_tools, then reconfigure)")
endif()

set(RL_STATIC_CHECKER ${PROJECT_SOURCE_DIR}/tests/static/check_static.py)

# rl_static_architectures(<out>): CMAKE_CUDA_ARCHITECTURES as the SASS targets
# the static build compiles for: "80-real" -> 80, virtual-only entries dropped,
# `native` resolved to the visible GPU(s).
function(rl_static_architectures out)
  set(archs)
  foreach(entry IN LISTS CMAKE_CUDA_ARCHITECTURES)
    if(entry MATCHES "-virtual$")
      continue()
    endif()
    if(entry STREQUAL "native")
      set(native ${CMAKE_CUDA_ARCHITECTURES_NATIVE})
      if(NOT native)
        execute_process(COMMAND nvidia-smi --query-gpu=compute_cap --format=csv,noheader
                        OUTPUT_VARIABLE smi ERROR_QUIET RESULT_VARIABLE smi_rc)
        if(smi_rc EQUAL 0)
          string(REPLACE "." "" smi "${smi}")
          string(REGEX MATCHALL "[0-9]+" native "${smi}")
        endif()
      endif()
      foreach(n IN LISTS native)
        string(REGEX REPLACE "-real$" "" n "${n}")
        list(APPEND archs ${n})
      endforeach()
    elseif(entry MATCHES "^all")
      message(WARNING "static checks: CMAKE_CUDA_ARCHITECTURES=${entry} is not expanded; "
                      "list the architectures to get static checks")
    else()
      string(REGEX REPLACE "-real$" "" entry "${entry}")
      list(APPEND archs ${entry})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES archs)
  set(${out} ${archs} PARENT_SCOPE)
endfunction()

# rl_add_static_source(SOURCE <file.cu> OUT_DIR <dir> STEM <stem> ARCHS <arch>...
#                      OUTPUTS_VAR <var>)
# Adds the per-architecture compile of one source; appends the outputs to <var>.
function(rl_add_static_source)
  cmake_parse_arguments(S "" "SOURCE;OUT_DIR;STEM;OUTPUTS_VAR" "ARCHS" ${ARGN})
  file(MAKE_DIRECTORY ${S_OUT_DIR})
  set(includes "$<REMOVE_DUPLICATES:$<TARGET_PROPERTY:rl_kernels_cuda,INCLUDE_DIRECTORIES>>")
  set(defines "$<TARGET_PROPERTY:rl_kernels_cuda,COMPILE_DEFINITIONS>")
  separate_arguments(user_flags UNIX_COMMAND "${CMAKE_CUDA_FLAGS}")
  set(host_compiler)
  if(CMAKE_CUDA_HOST_COMPILER)
    set(host_compiler -ccbin ${CMAKE_CUDA_HOST_COMPILER})
  endif()
  set(outputs ${${S_OUTPUTS_VAR}})
  foreach(arch IN LISTS S_ARCHS)
    set(prefix ${S_OUT_DIR}/${S_STEM}.sm_${arch})
    set(produced ${prefix}.cubin ${prefix}.ptxas.txt)
    if(RL_CUOBJDUMP)
      list(APPEND produced ${prefix}.sass)
    endif()
    add_custom_command(
      OUTPUT ${produced}
      COMMAND Python3::Interpreter ${RL_STATIC_CHECKER} compile --prefix ${prefix}
              --cuobjdump "${RL_CUOBJDUMP}" --
              ${CMAKE_CUDA_COMPILER} ${host_compiler} ${user_flags}
              -std=c++20 --expt-relaxed-constexpr -lineinfo -O3 -DNDEBUG
              "$<$<BOOL:${includes}>:-I$<JOIN:${includes},;-I>>"
              "$<$<BOOL:${defines}>:-D$<JOIN:${defines},;-D>>"
              -MD -MF ${prefix}.d -cubin -arch=sm_${arch} ${S_SOURCE}
      DEPENDS ${S_SOURCE} ${RL_STATIC_CHECKER}
      DEPFILE ${prefix}.d
      COMMENT "static: ${S_STEM} for sm_${arch}"
      COMMAND_EXPAND_LISTS VERBATIM)
    list(APPEND outputs ${produced})
  endforeach()
  set(${S_OUTPUTS_VAR} ${outputs} PARENT_SCOPE)
endfunction()

# rl_add_static_test(NAME <test> SOURCE <file.cu> OUT_DIR <dir> STEM <stem> ARCHS <arch>...)
# One ctest that checks one source on every architecture.
function(rl_add_static_test)
  cmake_parse_arguments(S "" "NAME;SOURCE;OUT_DIR;STEM" "ARCHS" ${ARGN})
  set(arch_args)
  foreach(arch IN LISTS S_ARCHS)
    list(APPEND arch_args --arch ${arch})
  endforeach()
  add_test(NAME ${S_NAME}
           COMMAND Python3::Interpreter ${RL_STATIC_CHECKER} check --source ${S_SOURCE}
                   --dir ${S_OUT_DIR} --stem ${S_STEM} --root ${PROJECT_SOURCE_DIR} ${arch_args}
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(${S_NAME} PROPERTIES LABELS static SKIP_RETURN_CODE 77 TIMEOUT 120)
endfunction()
