// cuda::barrier of device or system scope must not compile under the
// emulator: such a barrier is shared by the grid's blocks, which never wait
// for each other there.  Built without RL_USE_DEVICE_SCOPE_BARRIER as part of
// the build (the block-scope positive case); the test builds it with the
// macro and passes only on the refusal's static_assert message.
#include <cuda_runtime.h>
#include <cuda/barrier>

__global__ void block_scope_barrier_compiles() {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  init(&bar, blockDim.x);
}

#if defined(RL_USE_DEVICE_SCOPE_BARRIER)
__global__ void device_scope_barrier_is_refused() {
  __shared__ cuda::barrier<cuda::thread_scope_device> bar;
  init(&bar, blockDim.x);
}
#endif
