# One warning policy for every host target.  rl_target_warnings(<target>)
set(RL_HOST_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
    -Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual -Wnull-dereference)
if(RL_WARNINGS_AS_ERRORS)
  list(APPEND RL_HOST_WARNINGS -Werror)
endif()

function(rl_target_warnings target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${RL_HOST_WARNINGS}>)
  if(RL_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings>)
  endif()
endfunction()

# RL_SANITIZE (CMakeLists.txt): address/ON, thread, or OFF/empty.
string(TOLOWER "${RL_SANITIZE}" rl_sanitize)
if(rl_sanitize STREQUAL "on")
  set(rl_sanitize address)
elseif(rl_sanitize STREQUAL "off" OR rl_sanitize STREQUAL "")
  set(rl_sanitize "")
elseif(NOT rl_sanitize MATCHES "^(address|thread)$")
  message(FATAL_ERROR "RL_SANITIZE='${RL_SANITIZE}' is not a sanitizer this project builds with: "
                      "use address (or ON), thread, or OFF")
endif()
set(RL_SANITIZER "${rl_sanitize}")

if(RL_SANITIZER)
  # GCC documents that sanitizer instrumentation makes -Wmaybe-uninitialized
  # report false positives (seen here inside libstdc++'s std::regex/std::function
  # with GCC 12); the non-sanitized -Werror build keeps the warning.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    list(APPEND RL_HOST_WARNINGS -Wno-maybe-uninitialized)
  endif()
endif()
if(RL_SANITIZER STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
elseif(RL_SANITIZER STREQUAL "thread")
  # Every CUDA thread of the emulator is a TSan fiber (emu/src/scheduler.cpp),
  # so a data race between CUDA threads is reported like one between threads.
  # GCC 12 warns that TSan does not model std::atomic_thread_fence (the
  # emulator models __threadfence itself: README "Sanitizers on the CPU"), and
  # under TSan instrumentation reports a null dereference inside libstdc++'s
  # std::string (CLI11's split, roofline/src/cli.cpp), as it reports
  # maybe-uninitialized above; the non-sanitized -Werror build keeps both.
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # -Wno-class-memaccess: under TSan the emulated 16- and 8-bit float types
    # are zero-initialised (emu/include/rl/emu/fp16.hpp says why), so no
    # longer trivial; copying them with memcpy stays correct (they remain
    # trivially copyable), which is what the warning cannot tell.
    list(APPEND RL_HOST_WARNINGS -Wno-tsan -Wno-null-dereference -Wno-class-memaccess)
  endif()
  add_link_options(-fsanitize=thread)
endif()

# rl_host_only_at_o0_under_asan(<target>...): plain host C++ (the roofline
# library, the bench harness, their unit tests) compiles at -O0 in the asan
# preset.  Its tests run in milliseconds, so -O1 only cost compile time: 35-43%
# of each TU under ASan + UBSan (docs/perf-log.md, "ASan at -O0 for host-only
# code"), and -O0 hides no access from the instrumentation.  The emulator and
# the emulated kernels stay at -O1: their tests' run time is the preset's ctest.
function(rl_host_only_at_o0_under_asan)
  if(RL_SANITIZER STREQUAL "address")
    foreach(target IN LISTS ARGN)
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-O0>)
    endforeach()
  endif()
endfunction()
