# The linker: lld where the host compiler can use it (scripts/setup installs
# Debian's `lld`), else the system default (GNU ld).
#
# Why: about fifty links a preset (each emulated test executable links every
# emulated kernel object: rl_kernels_emu is an OBJECT library, so that every
# RL_REGISTER_KERNEL record is kept); lld does each in a third to a half of GNU
# ld's time (0.1-0.7 s saved a link, docs/perf-log.md, "Cold CI levers").  The
# same objects and libraries, in the same order.  lld resolves symbols from
# archives whatever their order on the line, so a link-order mistake shows
# only with -DRL_USE_LLD=OFF.
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
