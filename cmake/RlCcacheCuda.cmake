# ccache in front of nvcc, made safe for headers only the host pass includes.
#
# ccache learns which headers a compile read from a preprocessor run, and for
# nvcc that run sees a device pass (__CUDA_ARCH__ defined).  A kernel file
# keeps its record and workload headers out of the device passes
# (`#if !defined(__CUDA_ARCH__)`, rl/device_instances.hpp), so an edit to
# such a header (rl/registry.hpp, a family's workload) did not miss the cache:
# the object came back compiled against the old header, and a changed
# KernelRecord crashed the test binaries at static initialisation (seen
# 2026-11-26).  Depend mode takes the headers from the compile's own -MD file,
# which lists the host pass's too; the namespace keeps the entries made
# without it out of reach.  CI builds without ccache; this is for incremental
# builds.
if(CMAKE_CUDA_COMPILER_LAUNCHER MATCHES "ccache")
  set(CMAKE_CUDA_COMPILER_LAUNCHER ${CMAKE_COMMAND} -E env CCACHE_DEPEND=1
                                   CCACHE_NAMESPACE=nvcc-depend ${CMAKE_CUDA_COMPILER_LAUNCHER})
endif()
