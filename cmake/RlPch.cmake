# rl_precompile_headers(<target> <header>...)
#
# Precompiles, for a target of many translation units, the heavy third-party
# headers most of them include (gtest, nlohmann/json, fmt): each TU then loads
# them instead of parsing them again.  Only where it pays: a target's
# precompiled header costs one compile of its own (docs/perf-log.md, "Cold CI
# levers", has the per-TU measurements).  The headers are listed in angle
# brackets, a project header in [["..."]], e.g.
# rl_precompile_headers(emu_tests <gtest/gtest.h> [["rl/cuda.hpp"]]).
#
# Every source still includes what it uses: -DRL_PRECOMPILE_HEADERS=OFF builds
# without them.
#
# ccache caches a compile that uses a precompiled header only with the
# sloppiness "pch_defines,time_macros" (its manual, "Precompiled headers"):
# targets given one here run their compiler launcher with it.
include_guard(GLOBAL)

option(RL_PRECOMPILE_HEADERS "Precompile the heavy third-party headers of the larger targets" ON)

function(rl_precompile_headers target)
  if(NOT RL_PRECOMPILE_HEADERS)
    return()
  endif()
  target_precompile_headers(${target} PRIVATE ${ARGN})
  if(CMAKE_CXX_COMPILER_LAUNCHER MATCHES "ccache")
    set_property(TARGET ${target} PROPERTY CXX_COMPILER_LAUNCHER
                 ${CMAKE_COMMAND} -E env CCACHE_SLOPPINESS=pch_defines,time_macros
                 ${CMAKE_CXX_COMPILER_LAUNCHER})
  endif()
endfunction()
