// The emulator's counts (rl/emu/counters.hpp) on small kernels whose counts
// are known by hand: tensor ops once per warp / warpgroup / issuing thread,
// global bytes of cp.async (src-size), load128 / store128 (none on shared
// memory: dynamic, static, a cluster peer's), streaming accesses, TMA boxes
// partly out of bounds (in-bounds bytes only), bulk copies and a multicast
// (counted once).  Each case counts the same under two schedules with two
// worker threads (per-thread accumulators summed), and nothing is counted
// while counting is off.  RL_EMU_CC=90 (a Hopper: TMA, clusters, wgmma and
// mma.sync); the Tcgen05 case runs again with RL_EMU_CC=100.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "rl/cuda.hpp"
#include "rl/emu/arch.hpp"
#include "rl/emu/counters.hpp"
#include "rl/emu/hopper.hpp"
#include "rl/emu/launch.hpp"
#include "rl/emu/tcgen05.hpp"
#include "rl/packed128.hpp"
#include "rl/ptx.hpp"
#include "rl/ptx_sm100_mma.hpp"

namespace {

namespace h = rl::emu::hopper;

struct Expected {
  double load = 0, store = 0;
  std::map<std::string, double> tensor_ops;
};

// Counts what `run` launches (it synchronises), under `schedule`.
rl::emu::Counts count(const rl::emu::Schedule& schedule, const std::function<void()>& run) {
  const rl::emu::ScopedSchedule scoped(schedule);
  rl::emu::reset_counts();
  run();
  rl::emu::stop_counting();
  return rl::emu::read_counts();
}

// The counts equal `want` under the forward and the reverse schedule, with
// two host threads running blocks.
void expect_counts(const Expected& want, const std::function<void()>& run) {
  rl::emu::set_worker_threads(2);
  for (const auto order : {rl::emu::ScheduleOrder::forward, rl::emu::ScheduleOrder::reverse}) {
    const rl::emu::Schedule schedule{order, 0};
    const rl::emu::Counts got = count(schedule, run);
    EXPECT_EQ(got.global_load_bytes, want.load) << to_string(schedule);
    EXPECT_EQ(got.global_store_bytes, want.store) << to_string(schedule);
    EXPECT_EQ(got.tensor_ops, want.tensor_ops) << to_string(schedule);
  }
}

void sync() {
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

// Launches `kernel` in clusters of 2 CTAs along x.
template <typename Kernel, typename... Args>
void launch_in_2cta_clusters(Kernel kernel, unsigned blocks, unsigned threads,
                             std::size_t shared_bytes, const Args&... args) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = 2;
  attribute.val.clusterDim.y = attribute.val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = shared_bytes;
  config.attrs = &attribute;
  config.numAttrs = 1;
  ASSERT_EQ(cudaLaunchKernelEx(&config, kernel, args...), cudaSuccess);
}

template <typename T>
T* device_array(std::size_t count) {
  T* p = nullptr;
  EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&p), count * sizeof(T)), cudaSuccess);
  EXPECT_EQ(cudaMemset(p, 0, count * sizeof(T)), cudaSuccess);
  return p;
}

// ---- mma.sync: 2*m*n*k per warp instruction, under its types' role ----------

__global__ void mma_sync_f16_and_s8(int s8_rounds) {
  const std::uint32_t a[4] = {}, b[2] = {};
  float d[4] = {};
  rl::ptx::mma_m16n8k16_f16_f32(d, a, b, d);
  std::int32_t di[4] = {};
  for (int r = 0; r < s8_rounds; ++r) rl::ptx::mma_m16n8k32_s8_s32(di, a, b, di);
}

TEST(Counts, mma_sync_counts_2mnk_once_per_warp_under_its_role) {
  // 3 blocks of 2 warps: 6 warp instructions of m16n8k16, 12 of m16n8k32.
  Expected want;
  want.tensor_ops = {{"tensor_fp16_f32", 6 * 2.0 * 16 * 8 * 16},
                     {"tensor_int8", 12 * 2.0 * 16 * 8 * 32}};
  expect_counts(want, [] {
    rl::launch(mma_sync_f16_and_s8, dim3(3), dim3(64), 0, nullptr, 2);
    sync();
  });
}

// ---- cp.async: the source bytes read -----------------------------------------

__global__ void cp_async_rounds(const float* src, int rounds) {
  RL_DYNAMIC_SHARED(unsigned char, smem);
  void* mine = smem + 16 * threadIdx.x;
  const float* from = src + 4 * (blockIdx.x * blockDim.x + threadIdx.x);
  for (int r = 0; r < rounds; ++r) {
    rl::ptx::cp_async_16(mine, from);
    rl::ptx::cp_async_commit();
  }
  rl::ptx::cp_async_16_zfill(mine, from, 5);  // reads 5 bytes, zero-fills 11
  rl::ptx::cp_async_16_zfill(mine, from, 0);  // reads nothing
  rl::ptx::cp_async_8(mine, from);
  rl::ptx::cp_async_commit();
  rl::ptx::cp_async_wait<0>();
}

TEST(Counts, cp_async_counts_its_source_bytes_and_zero_fill_reads_fewer) {
  float* src = device_array<float>(4 * 2 * 32);
  Expected want;
  want.load = 2 * 32 * (3 * 16 + 5 + 0 + 8);  // 2 blocks of 32 threads, 3 rounds
  expect_counts(want, [&] {
    rl::launch(cp_async_rounds, dim3(2), dim3(32), 16 * 32, nullptr, src, 3);
    sync();
  });
  cudaFree(src);
}

// ---- load128 / store128 and the streaming accesses: 16 bytes each -------------

__global__ void packed_add(const float* in, float* out) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  rl::Packed128<float> a = rl::load128(in + 8 * i);
  const rl::Packed128<float> b = rl::load128(in + 8 * i + 4);
  for (int k = 0; k < a.size; ++k) a[k] += b[k];
  rl::store128(out + 4 * i, a);
}

__global__ void streaming_copy(const float* in, float* out) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  std::uint32_t r[4];
  rl::ptx::ld_global_nc_cs_v4(r, in + 4 * i);
  rl::ptx::st_global_cs_v4(out + 4 * i, r);
}

TEST(Counts, load128_store128_and_streaming_accesses_count_16_bytes_each) {
  float* in = device_array<float>(8 * 96);
  float* out = device_array<float>(4 * 96);
  Expected packed;
  packed.load = 96 * 32;
  packed.store = 96 * 16;
  expect_counts(packed, [&] {
    rl::launch(packed_add, dim3(3), dim3(32), 0, nullptr, in, out);
    sync();
  });
  Expected streaming;
  streaming.load = streaming.store = 96 * 16;
  expect_counts(streaming, [&] {
    rl::launch(streaming_copy, dim3(3), dim3(32), 0, nullptr, in, out);
    sync();
  });
  cudaFree(in);
  cudaFree(out);
}

// ---- load128 / store128 on shared memory: nothing reaches L2 ------------------

constexpr unsigned kRoundTripBlocks = 4, kRoundTripThreads = 32;
constexpr std::size_t kTileBytes = 4 * kRoundTripThreads * sizeof(float);

// A static __shared__ object declared in a device function rather than in
// the kernel (the kernel's symbol does not name it).
__device__ float* helper_tile() {
  __shared__ float tile[4 * kRoundTripThreads];
  return tile;
}

enum Where : int { kGlobal, kDynamicShared, kStaticShared, kHelperStaticShared };

// Three times: store128 4 floats to `mine`, load128 them back.
__device__ void packed_round_trips(float* mine) {
  rl::Packed128<float> v;
  for (int r = 0; r < 3; ++r) {
    for (int k = 0; k < v.size; ++k) v[k] = static_cast<float>(r + k);
    rl::store128(mine, v);
    v = rl::load128(mine);
  }
}

// In `where`: the block's part of `global`, or a shared tile.
__global__ void round_trips_in(float* global, int where) {
  RL_DYNAMIC_SHARED(float, dynamic);
  __shared__ float tile[4 * kRoundTripThreads];
  float* base = global + 4 * blockDim.x * blockIdx.x;
  if (where == kDynamicShared) base = dynamic;
  if (where == kStaticShared) base = tile;
  if (where == kHelperStaticShared) base = helper_tile();
  packed_round_trips(base + 4 * threadIdx.x);
}

// In the dynamic shared memory of the other CTA of a 2-CTA cluster (a
// kernel with static __shared__ memory cannot run in clusters here).
__global__ void round_trips_in_peer() {
  RL_DYNAMIC_SHARED(float, dynamic);
  rl::ptx::barrier_cluster_sync();  // the peer has started
  float* peer = rl::ptx::map_shared_rank(dynamic, rl::ptx::cluster_ctarank() ^ 1U);
  packed_round_trips(peer + 4 * threadIdx.x);
  rl::ptx::barrier_cluster_sync();  // and stays until this CTA is done
}

TEST(Counts, load128_store128_count_only_global_memory_not_shared) {
  float* global = device_array<float>(4 * kRoundTripThreads * kRoundTripBlocks);
  Expected on_global;
  on_global.load = on_global.store = kRoundTripBlocks * kRoundTripThreads * 3 * 16.0;
  expect_counts(on_global, [&] {
    rl::launch(round_trips_in, dim3(kRoundTripBlocks), dim3(kRoundTripThreads), kTileBytes, nullptr,
               global, static_cast<int>(kGlobal));
    sync();
  });
  for (const int where : {kDynamicShared, kStaticShared, kHelperStaticShared}) {
    SCOPED_TRACE(where);
    expect_counts({}, [&] {
      rl::launch(round_trips_in, dim3(kRoundTripBlocks), dim3(kRoundTripThreads), kTileBytes,
                 nullptr, global, where);
      sync();
    });
  }
  expect_counts({}, [] {
    launch_in_2cta_clusters(round_trips_in_peer, kRoundTripBlocks, kRoundTripThreads, kTileBytes);
    sync();
  });
  cudaFree(global);
}

TEST(Counts, nothing_is_counted_while_counting_is_off) {
  float* in = device_array<float>(8 * 32);
  float* out = device_array<float>(4 * 32);
  rl::emu::reset_counts();
  rl::emu::stop_counting();
  rl::launch(packed_add, dim3(1), dim3(32), 0, nullptr, in, out);
  rl::launch(mma_sync_f16_and_s8, dim3(1), dim3(32), 0, nullptr, 1);
  sync();
  const rl::emu::Counts off = rl::emu::read_counts();
  EXPECT_EQ(off.global_load_bytes, 0);
  EXPECT_EQ(off.global_store_bytes, 0);
  EXPECT_TRUE(off.tensor_ops.empty());
  cudaFree(in);
  cudaFree(out);
}

// ---- TMA and bulk copies ----------------------------------------------------------

constexpr int kCols = 12, kRows = 6;       // the tensor: 12 x 6 int32, rows 48 bytes
constexpr int kBoxCols = 8, kBoxRows = 4;  // the box: 8 x 4, 128 bytes
constexpr int kBoxBytes = 4 * kBoxCols * kBoxRows;

h::TensorMap tensor_map(std::int32_t* tensor, int cols, int rows, int box_cols, int box_rows) {
  h::TensorMap map{};
  const std::uint64_t dims[2] = {static_cast<std::uint64_t>(cols),
                                 static_cast<std::uint64_t>(rows)};
  const std::uint64_t strides[1] = {4ULL * cols};
  const std::uint32_t box[2] = {static_cast<std::uint32_t>(box_cols),
                                static_cast<std::uint32_t>(box_rows)};
  const std::uint32_t es[2] = {1, 1};
  EXPECT_EQ(
      h::encode_tensor_map_tiled(&map, h::TmaDataType::int32, 2, tensor, dims, strides, box, es,
                                 h::TmaInterleave::none, h::TmaSwizzle::none, h::TmaOobFill::zeros),
      0);
  return map;
}

// One thread loads the box at (0, 0) (in bounds) and at (8, 4) (4 x 2 of its
// 8 x 4 elements in bounds), 64 bytes with a bulk copy, then stores the
// second box into `out` with 4 x 2 elements in bounds (block 0 at (8, 4),
// block 1 at (8, -2): rows apart) and 48 bytes with a bulk store.
__global__ void tma_boxes(const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap in,
                          const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap out,
                          const std::int32_t* plain, std::int32_t* plain_out) {
  RL_DYNAMIC_SHARED(unsigned char, smem);
  auto* bar = reinterpret_cast<std::uint64_t*>(smem + 3 * kBoxBytes);
  if (threadIdx.x != 0) return;
  rl::ptx::mbarrier_init(bar, 1);
  rl::ptx::fence_mbarrier_init();
  rl::ptx::mbarrier_arrive_expect_tx(bar, 2 * kBoxBytes + 64);
  rl::ptx::tma_load_2d(smem, &in, 0, 0, bar);
  rl::ptx::tma_load_2d(smem + kBoxBytes, &in, 8, 4, bar);
  rl::ptx::bulk_load(smem + 2 * kBoxBytes, plain, 64, bar);
  rl::ptx::mbarrier_wait_parity(bar, 0);
  rl::ptx::fence_proxy_async_shared();
  rl::ptx::tma_store_2d(&out, 8, blockIdx.x == 0 ? 4 : -2, smem + kBoxBytes);
  rl::ptx::bulk_store(plain_out + 16 * blockIdx.x, smem + 2 * kBoxBytes, 48);
  rl::ptx::bulk_commit_group();
  rl::ptx::bulk_wait_group<0>();
}

TEST(Counts, tma_counts_the_in_bounds_part_of_each_box_and_bulk_copies_their_bytes) {
  std::int32_t* in = device_array<std::int32_t>(kCols * kRows);
  std::int32_t* out = device_array<std::int32_t>(kCols * kRows);
  std::int32_t* plain = device_array<std::int32_t>(16);
  std::int32_t* plain_out = device_array<std::int32_t>(2 * 16);
  const h::TensorMap in_map = tensor_map(in, kCols, kRows, kBoxCols, kBoxRows);
  const h::TensorMap out_map = tensor_map(out, kCols, kRows, kBoxCols, kBoxRows);
  Expected want;
  want.load = 2 * (kBoxBytes + 4 * 4 * 2 + 64);  // 2 blocks
  want.store = 2 * (4 * 4 * 2 + 48);
  expect_counts(want, [&] {
    rl::launch(tma_boxes, dim3(2), dim3(32), 3 * kBoxBytes + 8, nullptr, in_map, out_map, plain,
               plain_out);
    sync();
  });
  for (auto* p : {in, out, plain, plain_out}) cudaFree(p);
}

// Rank 0 of each 2-CTA cluster multicasts one in-bounds 32 x 8 box to both.
constexpr int kMcCols = 32, kMcRows = 8, kMcBytes = 4 * kMcCols * kMcRows;

__global__ void multicast_box(const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap map) {
  RL_DYNAMIC_SHARED(unsigned char, smem);
  auto* bar = reinterpret_cast<std::uint64_t*>(smem + kMcBytes);
  if (threadIdx.x == 0) {
    rl::ptx::mbarrier_init(bar, 1);
    rl::ptx::fence_mbarrier_init();
    rl::ptx::mbarrier_arrive_expect_tx(bar, kMcBytes);
  }
  rl::ptx::barrier_cluster_sync();
  if (rl::ptx::cluster_ctarank() == 0 && threadIdx.x == 0)
    rl::ptx::tma_load_2d_multicast(smem, &map, 0, 0, bar, 0b11);
  rl::ptx::mbarrier_wait_parity(bar, 0);
}

TEST(Counts, a_multicast_counts_its_box_once_for_all_its_ctas) {
  std::int32_t* tensor = device_array<std::int32_t>(kMcCols * kMcRows);
  const h::TensorMap map = tensor_map(tensor, kMcCols, kMcRows, kMcCols, kMcRows);
  Expected want;
  want.load = 2 * kMcBytes;  // 4 CTAs, 2 clusters, one multicast each
  expect_counts(want, [&] {
    launch_in_2cta_clusters(multicast_box, 4, 32, kMcBytes + 8, map);
    sync();
  });
  cudaFree(tensor);
}

// ---- wgmma: 2*64*N*K per warpgroup instruction ------------------------------------

// A and B descriptors 0: every operand address within the first 128 bytes of
// zeroed shared memory (the values do not matter to the count).
__global__ void two_wgmmas() {
  RL_DYNAMIC_SHARED(unsigned char, smem);
  for (unsigned i = threadIdx.x; i < 256; i += blockDim.x) smem[i] = 0;
  __syncthreads();
  float d[64] = {};
  rl::ptx::wgmma_fence();
  rl::ptx::wgmma_m64n128k16_f32<__half, false>(d, 0, 0, 0);
  rl::ptx::wgmma_m64n128k16_f32<__half, false>(d, 0, 0, 1);
  rl::ptx::wgmma_commit_group();
  rl::ptx::wgmma_wait_group<0>();
}

TEST(Counts, wgmma_counts_2mnk_once_per_warpgroup) {
  Expected want;
  want.tensor_ops = {{"tensor_fp16_f32", 2 * 2 * 2.0 * 64 * 128 * 16}};  // 2 blocks, 2 each
  expect_counts(want, [] {
    rl::launch(two_wgmmas, dim3(2), dim3(128), 256, nullptr);
    sync();
  });
}

// ---- tcgen05.mma (RL_EMU_CC=100): 2*M*N*K per issue ---------------------------------

namespace t5 = rl::emu::tcgen05;

__global__ void one_tcgen05_mma(std::uint32_t idesc) {
  RL_DYNAMIC_SHARED(unsigned char, smem);
  __shared__ std::uint32_t tmem_base;
  __shared__ std::uint64_t bar;
  for (unsigned i = threadIdx.x; i < 16384; i += blockDim.x) smem[i] = 0;
  if (threadIdx.x < 32) t5::alloc(&tmem_base, 64);
  if (threadIdx.x == 0) h::mbarrier_init(&bar, 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    const std::uint32_t base = h::shared_address(smem);
    const auto none = rl::ptx::Tcgen05Swizzle::none;
    rl::ptx::tcgen05_mma<rl::ptx::Tcgen05Kind::f16>(
        tmem_base, rl::ptx::tcgen05_smem_descriptor(base, 128, 256, none),
        rl::ptx::tcgen05_smem_descriptor(base + 8192, 128, 256, none), idesc, false);
    t5::commit(&bar);
  }
  while (!h::mbarrier_try_wait_parity(&bar, 0)) {
  }
  __syncthreads();
  if (threadIdx.x < 32) t5::dealloc(tmem_base, 64);
}

TEST(CountsTcgen05, tcgen05_mma_counts_2mnk_once_per_issue) {
  if (!rl::emu::has_tcgen05()) GTEST_SKIP() << "needs RL_EMU_CC=100";
  const std::uint32_t bf16 = rl::ptx::tcgen05_idesc_f16(rl::ptx::Tcgen05F16Type::bf16, 128, 64);
  Expected want;
  want.tensor_ops = {{"tensor_bf16", 3 * 2.0 * 128 * 64 * 16}};  // 3 CTAs
  expect_counts(want, [&] {
    rl::launch(one_tcgen05_mma, dim3(3), dim3(128), 16384, nullptr, bf16);
    sync();
  });
}

}  // namespace
