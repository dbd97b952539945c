# Static checks of the compiled GPU code (ctest label `static`).
#
# rl_kernels_cuda compiles every kernel source once for all target
# architectures; its compiles run with `-Xptxas -v` behind a launcher
# (tests/static/capture_static.py) that keeps, per architecture,
#   <stem>.sm_<arch>.ptxas.txt   the ptxas resource report (registers, smem, spills, stack)
#   <stem>.sm_<arch>.sass        the SASS listing (cuobjdump -sass), when cuobjdump is found
# tests/static/check_static.py then checks them against the `// rl-static:`
# declarations in the source (tests/static/README.md).  ptxas reports each
# entry function with its architecture, so one compile for five architectures
# gives five reports; ccache replays them on a hit.
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
# -DRL_CUOBJDUMP=OFF builds no SASS listings (the SASS checks then report SKIPPED).
set(RL_STATIC_CUOBJDUMP "")
if(RL_CUOBJDUMP)
  set(RL_STATIC_CUOBJDUMP ${RL_CUOBJDUMP})
  message(STATUS "bench_roofline: static checks read SASS with ${RL_CUOBJDUMP}")
else()
  message(STATUS "bench_roofline: cuobjdump not found; the static SASS checks will be SKIPPED "
                 "(run scripts/static_tools, then reconfigure)")
endif()

set(RL_STATIC_CHECKER ${PROJECT_SOURCE_DIR}/tests/static/check_static.py)
set(RL_STATIC_CAPTURE ${PROJECT_SOURCE_DIR}/tests/static/capture_static.py)

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

# rl_static_capture(TARGET <target> SOURCE_ROOT <dir> OUT_DIR <dir> ARCHS <arch>...)
# Makes every CUDA compile of <target> keep, for each architecture, its ptxas
# report and SASS listing under OUT_DIR (capture_static.py, a compiler
# launcher in front of the configured one, e.g. ccache).  The static checks
# thus read the objects the build links instead of compiling every kernel a
# second time, one cubin per architecture.  A kernel that does not compile for
# one architecture fails the build.
function(rl_static_capture)
  cmake_parse_arguments(S "" "TARGET;SOURCE_ROOT;OUT_DIR" "ARCHS" ${ARGN})
  string(REPLACE ";" "," arch_csv "${S_ARCHS}")
  set_property(TARGET ${S_TARGET} PROPERTY CUDA_COMPILER_LAUNCHER
               ${Python3_EXECUTABLE} ${RL_STATIC_CAPTURE} --source-root ${S_SOURCE_ROOT}
               --out-dir ${S_OUT_DIR} --archs ${arch_csv} "--cuobjdump=${RL_STATIC_CUOBJDUMP}" --
               ${CMAKE_CUDA_COMPILER_LAUNCHER})
  # make does not rebuild on a changed command: an edited launcher recompiles
  # (a ccache hit) so that no report of an older launcher stays behind.
  get_target_property(sources ${S_TARGET} SOURCES)
  list(FILTER sources INCLUDE REGEX "\\.cu$")
  set_source_files_properties(${sources} TARGET_DIRECTORY ${S_TARGET}
                              PROPERTIES OBJECT_DEPENDS ${RL_STATIC_CAPTURE})
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
