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

if(RL_SANITIZE)
  # GCC documents that sanitizer instrumentation makes -Wmaybe-uninitialized
  # report false positives (seen here inside libstdc++'s std::regex/std::function
  # with GCC 12); the non-sanitized -Werror build keeps the warning.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    list(APPEND RL_HOST_WARNINGS -Wno-maybe-uninitialized)
  endif()
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
