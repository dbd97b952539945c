# CUDA sources as written for nvcc, built for the emulator:
#
#   rl_emu_cuda_executable(<name> SOURCES <a.cu> <main.cpp> ... [LIBS <targets>...])
#   rl_emu_cuda_library(<name> [STATIC|SHARED|OBJECT] SOURCES ... [LIBS ...])
#
# Each .cu file is rewritten in the build tree (never in place) by
# emu/tools/cuda_rewrite.py: `k<<<grid, block, shared, stream>>>(args)` becomes
# an rl::launch and `extern __shared__ T name[]` a pointer to the block's
# dynamic shared memory; the files it includes with quotes are rewritten
# beside it, so a kernel header with launches in it works too.  `#line`
# keeps the compiler's messages on the user's file and line.  Other sources
# (.cpp, .c) are compiled as they are.  The target links rl::emu (the CUDA
# runtime, headers by their CUDA names, cooperative groups, wmma, rl::ptx).
# emu/docs/porting.md says what runs unchanged and how to check a kernel.
#
# Works in this project and in one that does add_subdirectory(<this project>).
find_package(Python3 REQUIRED COMPONENTS Interpreter)
# Cache entries, not variables: the functions run in the callers' directories.
set(RL_EMU_CUDA_REWRITE ${CMAKE_CURRENT_LIST_DIR}/../tools/cuda_rewrite.py
    CACHE INTERNAL "the emulator's CUDA source rewrite")
set(RL_EMU_CUDA_TOKENS ${CMAKE_CURRENT_LIST_DIR}/../tools/cuda_tokens.py
    CACHE INTERNAL "the tokenizer it imports")
set(RL_EMU_CUDA_PYTHON ${Python3_EXECUTABLE} CACHE INTERNAL "the Python that runs it")

# The sources a target compiles: each .cu replaced by its rewrite.
function(_rl_emu_cuda_sources target out)
  set(mirror ${CMAKE_CURRENT_BINARY_DIR}/rl_emu_cuda/${target})
  set(result)
  foreach(source IN LISTS ARGN)
    get_filename_component(absolute ${source} ABSOLUTE)
    if(NOT absolute MATCHES "\\.cu$")
      list(APPEND result ${absolute})
      continue()
    endif()
    string(REGEX REPLACE "^/" "" relative ${absolute})
    set(rewritten ${mirror}/${relative}.cpp)
    add_custom_command(
      OUTPUT ${rewritten}
      # -B: the tool imports cuda_tokens.py; no bytecode beside the sources.
      COMMAND ${RL_EMU_CUDA_PYTHON} -B ${RL_EMU_CUDA_REWRITE} --source ${absolute}
              --mirror-root ${mirror} --depfile ${rewritten}.d
      DEPENDS ${absolute} ${RL_EMU_CUDA_REWRITE} ${RL_EMU_CUDA_TOKENS}
      DEPFILE ${rewritten}.d
      COMMENT "Rewriting ${source} for the emulator"
      VERBATIM)
    list(APPEND result ${rewritten})
  endforeach()
  set(${out} ${result} PARENT_SCOPE)
endfunction()

# -DRL_SANITIZE=address|thread when configuring this project (or the one that
# adds it) builds the emulator under that sanitizer; the user's kernels need
# the same instrumentation (memcheck, racecheck: docs/emulator.md).
function(_rl_emu_cuda_sanitize target)
  if(RL_SANITIZER STREQUAL "address")
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer
                                             -fno-sanitize-recover=undefined)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  elseif(RL_SANITIZER STREQUAL "thread")
    target_compile_options(${target} PRIVATE -fsanitize=thread -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=thread)
  endif()
endfunction()

# One emulated target: an executable, or a library of the given type.
function(_rl_emu_cuda_target name kind)
  cmake_parse_arguments(arg "STATIC;SHARED;OBJECT" "" "SOURCES;LIBS" ${ARGN})
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "rl_emu_cuda_${kind}(${name}): no SOURCES")
  endif()
  _rl_emu_cuda_sources(${name} sources ${arg_SOURCES})
  if(kind STREQUAL "executable")
    add_executable(${name} ${sources})
    target_link_libraries(${name} PRIVATE rl::emu ${arg_LIBS})
  else()
    set(type STATIC)
    foreach(t SHARED OBJECT)
      if(arg_${t})
        set(type ${t})
      endif()
    endforeach()
    add_library(${name} ${type} ${sources})
    target_link_libraries(${name} PUBLIC rl::emu ${arg_LIBS})
  endif()
  _rl_emu_cuda_sanitize(${name})
endfunction()

function(rl_emu_cuda_executable name)
  _rl_emu_cuda_target(${name} executable ${ARGN})
endfunction()

function(rl_emu_cuda_library name)
  _rl_emu_cuda_target(${name} library ${ARGN})
endfunction()
