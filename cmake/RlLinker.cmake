# The linker: lld where the host compiler can use it (scripts/setup installs
# Debian's `lld`), else the system default (GNU ld).
#
# Why: the emulated test executables each link every emulated kernel object
# (rl_kernels_emu is an OBJECT library, so that every RL_REGISTER_KERNEL record
# is kept), and GNU ld took up to 14 s for one of them on the 2-core CI
# machine; lld links the same objects several times faster (docs/perf-log.md,
# "Cold CI levers").  The produced programs are the same programs: same
# objects, same libraries, same order.
#
# -DRL_USE_LLD=OFF keeps the system linker.  Only host-compiler links
# (LINK_LANGUAGE CXX) take the flag: nothing here links through nvcc.
include_guard(GLOBAL)
include(CheckLinkerFlag)

option(RL_USE_LLD "Link with lld when the host compiler accepts -fuse-ld=lld" ON)
if(RL_USE_LLD)
  check_linker_flag(CXX "-fuse-ld=lld" RL_HAVE_LLD)
  if(RL_HAVE_LLD)
    add_link_options($<$<LINK_LANGUAGE:CXX>:-fuse-ld=lld>)
    message(STATUS "bench_roofline: linking with lld")
  else()
    message(STATUS "bench_roofline: lld not usable by ${CMAKE_CXX_COMPILER}; linking with the "
                   "system linker (scripts/setup installs lld)")
  endif()
endif()
