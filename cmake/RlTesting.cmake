# rl_add_gtest(NAME <exe> SOURCES ... [LIBS ...] LABELS <label>... [TIMEOUT s]
#              [ENVIRONMENT VAR=value] [FILTER gtest-filter] [NOT_UNDER_RACECHECK]
#              [NOT_UNDER_ASAN])
#
# One executable, each TEST() a ctest entry (discovered when ctest runs, so
# building never executes test binaries, which matters for the sanitizer and
# GPU builds).  GPU tests call RL_REQUIRE_GPU() (tests/support/gpu.hpp), which
# GTEST_SKIPs with the reason when no device is usable; ctest then reports
# them as skipped, never as passed.
#
# COST: ctest -j starts the tests of higher COST first.  A clean clone (CI) has
# no timing history (Testing/Temporary/CTestCostData.txt), so ctest would start
# tests in the order they were added, and a test of tens of seconds added late
# would end the run alone on one core; such a test sets COST to about its
# seconds (e.g. tests/roofline's browser test) so it starts first.
#
# NOT_UNDER_RACECHECK: the suite is neither built nor run in the tsan preset.
# For the single-instruction semantics suites: one warp's arithmetic checked
# against a reference, where racecheck has nothing to learn; the kernels that
# use those instructions run under racecheck in their own suites.
#
# NOT_UNDER_ASAN: the suite is neither built nor run in the asan preset.  For
# host-only arithmetic and layout suites (charts, the model, the report's
# sentences) that read no file and run no kernel; the suites that read
# results files, the CLI tests and the e2e tests run the same library under
# ASan and UBSan (tests/roofline/CMakeLists.txt).
include_guard(GLOBAL)
include(GoogleTest)
function(rl_add_gtest)
  cmake_parse_arguments(T "GPU;NOT_UNDER_RACECHECK;NOT_UNDER_ASAN" "NAME;TIMEOUT;FILTER"
                        "SOURCES;LIBS;LABELS;ENVIRONMENT" ${ARGN})
  if(T_NOT_UNDER_RACECHECK AND RL_SANITIZE STREQUAL "thread")
    return()
  endif()
  if(T_NOT_UNDER_ASAN AND RL_SANITIZE STREQUAL "address")
    return()
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  set_property(DIRECTORY APPEND PROPERTY RL_GTEST_TARGETS ${T_NAME})
  rl_label_needs("${T_LABELS}" ${T_NAME})
  rl_label_needs_folder_targets()
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

# rl_python_test_helpers(<test>...)
#
# Python tests import what they share (tests/support/rltest.py) from
# tests/support, which is put on their PYTHONPATH here and nowhere else: no test
# edits sys.path.  No bytecode is written beside the sources.
function(rl_python_test_helpers)
  set_property(TEST ${ARGN} APPEND PROPERTY ENVIRONMENT_MODIFICATION
               "PYTHONPATH=path_list_prepend:${PROJECT_SOURCE_DIR}/tests/support"
               "PYTHONDONTWRITEBYTECODE=set:1")
endfunction()

# rl_tests_<label> (e.g. rl_tests_emu) builds what the tests of one label run,
# and what those link, but nothing else: a preset that runs only some labels
# builds only those (CMakePresets.json: the tsan preset runs label emu and
# builds rl_tests_emu, not the benchmark, the roofline library and their unit
# tests).  A label needs its gtest executables and, for its add_test() tests,
# every other target built by default in the same test folder (the helper
# programs those tests run).  A test that runs a program from another folder
# is not covered: ctest then reports the program as not found.
function(rl_label_needs labels)
  foreach(label IN LISTS labels)
    if(NOT TARGET rl_tests_${label})
      add_custom_target(rl_tests_${label})
    endif()
    add_dependencies(rl_tests_${label} ${ARGN})
  endforeach()
endfunction()

# Once per test folder that calls rl_add_gtest: at the folder's end, its other
# targets count for the labels of its add_test() tests.
function(rl_label_needs_folder_targets)
  get_property(deferred DIRECTORY PROPERTY RL_LABEL_FOLDER_DEFERRED)
  if(NOT deferred)
    set_property(DIRECTORY PROPERTY RL_LABEL_FOLDER_DEFERRED ON)
    cmake_language(DEFER CALL rl_label_folder_targets_now)
  endif()
endfunction()

function(rl_label_folder_targets_now)
  get_property(tests DIRECTORY PROPERTY TESTS)
  get_property(targets DIRECTORY PROPERTY BUILDSYSTEM_TARGETS)
  get_property(gtests DIRECTORY PROPERTY RL_GTEST_TARGETS)
  set(helpers)
  foreach(target IN LISTS targets)
    get_target_property(excluded ${target} EXCLUDE_FROM_ALL)
    if(NOT excluded AND NOT target IN_LIST gtests)
      list(APPEND helpers ${target})
    endif()
  endforeach()
  set(labels)
  foreach(test IN LISTS tests)
    get_test_property(${test} LABELS test_labels)
    if(test_labels)
      list(APPEND labels ${test_labels})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES labels)
  if(helpers AND labels)
    rl_label_needs("${labels}" ${helpers})
  endif()
endfunction()

# rl_racecheck_cases(<exe> a_race|race_free CASES <case>... [NAMESPACE ns]
#                    [EMU_CC cc])
#
# Kernels written to trip the emulator's racecheck, one per run of `exe case`;
# only where RL_SANITIZE=thread (other builds have no race detector to test).
# racecheck.<case>_is_a_race: reported as a race naming the racing kernel's
# frame (ns::<case>, less a trailing _unfenced) and a line of <exe>.cpp;
# racecheck.<case>_is_race_free: no report.  EMU_CC sets RL_EMU_CC.
function(rl_racecheck_cases exe verdict)
  cmake_parse_arguments(R "" "NAMESPACE;EMU_CC" "CASES" ${ARGN})
  if(NOT R_NAMESPACE)
    set(R_NAMESPACE racecheck)
  endif()
  set(env "TSAN_OPTIONS=halt_on_error=1")
  if(R_EMU_CC)
    string(APPEND env ";RL_EMU_CC=${R_EMU_CC}")
  endif()
  foreach(case ${R_CASES})
    if(verdict STREQUAL "a_race")
      string(REGEX REPLACE "_unfenced$" "" kernel "${case}")
      set(expect PASS_REGULAR_EXPRESSION
          "WARNING: ThreadSanitizer: data race.*${R_NAMESPACE}::${kernel}[^\n]*${exe}\\.cpp:[0-9]+")
    else()
      set(expect FAIL_REGULAR_EXPRESSION "ThreadSanitizer")
    endif()
    add_test(NAME racecheck.${case}_is_${verdict} COMMAND ${exe} ${case})
    set_tests_properties(racecheck.${case}_is_${verdict} PROPERTIES
      LABELS emu TIMEOUT 120 ENVIRONMENT "${env}" ${expect})
  endforeach()
endfunction()

