# rl_add_gtest(NAME <exe> SOURCES ... [LIBS ...] LABELS <label>... [TIMEOUT s]
#              [ENVIRONMENT VAR=value] [FILTER gtest-filter])
#
# One executable, each TEST() a ctest entry (discovered when ctest runs, so
# building never executes test binaries, which matters for the sanitizer and
# GPU builds).  GPU tests call RL_REQUIRE_GPU() (tests/support/gpu.hpp), which
# GTEST_SKIPs with the reason when no device is usable; ctest then reports
# them as skipped, never as passed.
include(GoogleTest)
function(rl_add_gtest)
  cmake_parse_arguments(T "GPU" "NAME;TIMEOUT;FILTER" "SOURCES;LIBS;LABELS;ENVIRONMENT" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main)
  target_include_directories(${T_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
  rl_target_warnings(${T_NAME})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  if(RL_SANITIZE STREQUAL "thread")
    # Racecheck runs every emulated access through TSan's vector clocks.
    math(EXPR T_TIMEOUT "${T_TIMEOUT} * 3")
  endif()
  set(props LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT} SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
  if(T_ENVIRONMENT)
    # gtest_discover_tests flattens PROPERTIES, so a second VAR=value would be
    # read as a property name: refuse it rather than set it wrongly.
    list(LENGTH T_ENVIRONMENT env_count)
    if(env_count GREATER 1)
      message(FATAL_ERROR "rl_add_gtest(${T_NAME}): ENVIRONMENT takes one VAR=value")
    endif()
    list(APPEND props ENVIRONMENT "${T_ENVIRONMENT}")
  endif()
  # The emulator's initcheck is on for every emulated test: device memory and
  # dynamic shared memory start as NaN bytes (RL_EMU_POISON, emu/README.md).
  # A property of its own, so it adds to a test's one ENVIRONMENT variable.
  if("emu" IN_LIST T_LABELS)
    list(APPEND props ENVIRONMENT_MODIFICATION "RL_EMU_POISON=set:1")
  endif()
  set(filter)
  if(T_FILTER)
    set(filter TEST_FILTER "${T_FILTER}")
  endif()
  gtest_discover_tests(${T_NAME} DISCOVERY_MODE PRE_TEST TEST_PREFIX "${T_NAME}." ${filter}
                       PROPERTIES ${props})
endfunction()
