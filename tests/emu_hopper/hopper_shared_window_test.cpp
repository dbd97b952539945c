// The shared window across launches (emu/docs/hopper.md, "Shared-window
// addresses"): each static __shared__ object a block takes the address of is
// anchored in a 64 KiB slot, and wgmma descriptors keep only 18 bits of an
// address (4 slots), so one host thread that runs many kernels must not keep
// every kernel's anchors.  The kernels here have no dynamic shared memory, so
// nothing but the kernel tells their blocks apart once malloc hands each
// block the same (empty) allocation: ctest runs this with glibc's tcache and
// fastbins off (GLIBC_TUNABLES, tests/emu_hopper/CMakeLists.txt), which makes
// it do so at once, as a long run's settled free lists do in the end.
#include "rl/cuda.hpp"
#include "rl/emu/hopper.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace {

namespace h = rl::emu::hopper;

// What a kernel's static object maps to: its window address, and whether
// shared_pointer (what wgmma and TMA read through) leads back to it.
struct RoundTrip {
  std::uint32_t address;
  int same_object;
};

// One distinct kernel per Tag, each with its own static __shared__ object of
// 32 KiB: the objects (thread_locals, side by side) lie farther apart than a
// slot's anchor reaches, so each kernel's needs a slot of its own.
template <int Tag>
__global__ void take_address(RoundTrip* out) {
  __shared__ __align__(1024) unsigned char tile[32 * 1024];
  const std::uint32_t a = h::shared_address(tile);
  out->address = a;
  out->same_object = h::shared_pointer(a) == tile ? 1 : 0;
}

// Each launch finished before the next, with its own output buffer, as a
// benchmark's workloads run them.
template <int Tag>
RoundTrip launch_one() {
  RoundTrip* out = nullptr;
  EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&out), sizeof(RoundTrip)), cudaSuccess);
  rl::launch(take_address<Tag>, dim3(1), dim3(1), 0, nullptr, out);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  RoundTrip host{};
  EXPECT_EQ(cudaMemcpy(&host, out, sizeof host, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(cudaFree(out), cudaSuccess);
  return host;
}

template <int... Tags>
std::vector<RoundTrip> launch_each(std::integer_sequence<int, Tags...>) {
  return {launch_one<Tags>()...};
}

// Six kernels, four times round: a window that kept every kernel's anchor
// would pass 2^18 by the fifth kernel once the allocations repeat.
TEST(HopperSharedWindow, kernels_run_in_turn_on_one_thread_keep_their_objects_in_18_bits) {
  const std::vector<RoundTrip> trips =
      launch_each(std::integer_sequence<int, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5,
                                        0, 1, 2, 3, 4, 5>{});
  for (std::size_t k = 0; k < trips.size(); ++k) {
    EXPECT_LT(trips[k].address, 1u << 18) << "launch " << k;
    EXPECT_EQ(trips[k].same_object, 1)
        << "launch " << k << ": the window address leads to another kernel's object";
  }
}

}  // namespace
