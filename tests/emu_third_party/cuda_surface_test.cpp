// The device-side surface one call at a time: cooperative groups (block,
// static and runtime tiles, grid queries), cg::reduce, the cache-operator
// loads and stores, the 16-bit math functions and NaN-propagating min/max,
// and the shared-address conversions (32-bit window addresses, as
// rl::ptx::shared_address gives them), each against values computed here.
#include <gtest/gtest.h>

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cmath>
#include <vector>

#include "rl/cuda.hpp"
#include "third_party_style.hpp"

namespace cg = cooperative_groups;

namespace {

// What one thread of a tile of Size reports.  No padding (the 8-byte
// members first, sixteen 4-byte ones after), so runs compare bytewise.
struct Record {
  unsigned long long dynamic_rank, dynamic_size;
  unsigned rank, size, meta_rank, meta_size;
  int from_rank0, down1, up1, xor1;
  unsigned ballot_odd;
  int any_rank3, all_below_size;
  int sum, minimum, maximum;
  unsigned dynamic_meta_rank, unused;
};
static_assert(sizeof(Record) == 2 * 8 + 16 * 4);

template <unsigned Size>
__global__ void tile_kernel(Record* out) {
  cg::thread_block block = cg::this_thread_block();
  auto tile = cg::tiled_partition<Size>(block);
  const int v = static_cast<int>(block.thread_rank()) * 10;
  Record r{};
  r.rank = tile.thread_rank();
  r.size = tile.size();
  r.meta_rank = tile.meta_group_rank();
  r.meta_size = tile.meta_group_size();
  r.from_rank0 = tile.shfl(v, 0);
  r.down1 = tile.shfl_down(v, 1);
  r.up1 = tile.shfl_up(v, 1);
  r.xor1 = tile.shfl_xor(v, 1);
  r.ballot_odd = tile.ballot(tile.thread_rank() % 2 == 1);
  r.any_rank3 = tile.any(tile.thread_rank() == 3);
  r.all_below_size = tile.all(tile.thread_rank() < Size);
  r.sum = cg::reduce(tile, v, cg::plus<int>());
  r.minimum = cg::reduce(tile, v, cg::less<int>());
  r.maximum = cg::reduce(tile, v, cg::greater<int>());
  cg::thread_group dynamic = cg::tiled_partition(block, Size);
  r.dynamic_rank = dynamic.thread_rank();
  r.dynamic_size = dynamic.size();
  r.dynamic_meta_rank = dynamic.meta_group_rank();
  tile.sync();
  dynamic.sync();
  // Each block its own records (racecheck caught both blocks writing one set).
  out[blockIdx.x * block.size() + block.thread_rank()] = r;
}

template <unsigned Size>
void check_tiles() {
  SCOPED_TRACE(testing::Message() << "tile size " << Size);
  const dim3 block(16, 6);  // 96 threads, 2-D: ranks are x + 16 y
  const unsigned threads = 96, blocks = 2;
  const auto runs = third_party_style::under_two_schedules([&] {
    Record* d;
    cudaCheck(cudaMalloc(&d, blocks * threads * sizeof(Record)));
    rl::launch(tile_kernel<Size>, dim3(blocks), block, 0, nullptr, d);
    cudaCheck(cudaGetLastError());
    std::vector<Record> h(blocks * threads);
    cudaCheck(cudaMemcpy(h.data(), d, h.size() * sizeof(Record), cudaMemcpyDeviceToHost));
    cudaCheck(cudaFree(d));
    return h;
  });
  ASSERT_TRUE(third_party_style::bitwise_equal(runs[0], runs[1]));
  for (unsigned i = 0; i < blocks * threads; ++i) {
    const Record& r = runs[0][i];
    const unsigned t = i % threads;  // every block sees the same ranks
    const unsigned rank = t % Size, base = t - rank;
    const int v = static_cast<int>(t) * 10;
    EXPECT_EQ(r.rank, rank);
    EXPECT_EQ(r.size, Size);
    EXPECT_EQ(r.meta_rank, t / Size);
    EXPECT_EQ(r.meta_size, (threads + Size - 1) / Size);
    EXPECT_EQ(r.from_rank0, static_cast<int>(base) * 10);
    EXPECT_EQ(r.down1, rank + 1 < Size ? v + 10 : v) << t;  // past the tile's end: own value
    EXPECT_EQ(r.up1, rank >= 1 ? v - 10 : v) << t;
    EXPECT_EQ(r.xor1, Size > 1 ? static_cast<int>(t ^ 1U) * 10 : v) << t;
    unsigned odd = 0;
    for (unsigned k = 1; k < Size; k += 2) odd |= 1U << k;
    EXPECT_EQ(r.ballot_odd, odd) << t;  // tile-relative bits
    EXPECT_EQ(r.any_rank3, Size > 3 ? 1 : 0);
    EXPECT_EQ(r.all_below_size, 1);
    int sum = 0;
    for (unsigned k = 0; k < Size; ++k) sum += static_cast<int>(base + k) * 10;
    EXPECT_EQ(r.sum, sum) << t;
    EXPECT_EQ(r.minimum, static_cast<int>(base) * 10);
    EXPECT_EQ(r.maximum, static_cast<int>(base + Size - 1) * 10);
    EXPECT_EQ(r.dynamic_rank, rank);
    EXPECT_EQ(r.dynamic_size, Size);
    EXPECT_EQ(r.dynamic_meta_rank, t / Size);
  }
}

__global__ void block_and_grid_kernel(unsigned* out) {
  cg::thread_block block = cg::this_thread_block();
  cg::grid_group grid = cg::this_grid();
  const unsigned long long g = grid.thread_rank();
  unsigned* o = out + 10 * g;
  o[0] = block.thread_rank();
  o[1] = block.size();
  o[2] = block.group_index().x + 100 * block.group_index().y;
  o[3] = block.thread_index().x + 100 * block.thread_index().y;
  o[4] = block.dim_threads().x * block.dim_threads().y;
  o[5] = static_cast<unsigned>(grid.size());
  o[6] = static_cast<unsigned>(grid.block_rank());
  o[7] = static_cast<unsigned>(grid.num_blocks());
  o[8] = grid.is_valid() ? 1U : 0U;
  o[9] = static_cast<unsigned>(cg::thread_rank(block) + cg::group_size(block));
  cg::sync(block);
}

// A tile of a tile: ranks and meta groups are relative to the parent warp.
__global__ void nested_tile_kernel(unsigned* out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  auto quarter = cg::tiled_partition<8>(warp);
  unsigned* o = out + 4 * block.thread_rank();
  o[0] = quarter.thread_rank();
  o[1] = quarter.meta_group_rank();
  o[2] = quarter.meta_group_size();
  o[3] = cg::reduce(quarter, block.thread_rank(), cg::plus<unsigned>());
}

// Arguments to the runtime tiled_partition outside CUDA's native sizes fail
// the launch (the emulator reports the exception and returns an error).
__global__ void bad_dynamic_tile_kernel() {
  cg::thread_group tile = cg::tiled_partition(cg::this_thread_block(), 12);
  tile.sync();
}

__global__ void cache_ops_kernel(const float4* in4, float4* out4, const half* inh, half* outh,
                                 const int* ini, int* outi, unsigned long long* addresses) {
  const int i = threadIdx.x;
  __stcs(out4 + i, __ldcs(in4 + i));
  __stcg(outh + i, __ldcg(inh + i));
  int v = __ldca(ini + i) + __ldlu(ini + i) + __ldcv(ini + i) + __ldg(ini + i);
  __stwb(outi + i, v);
  __stwt(outi + i, __ldcv(outi + i) + 1);
  __shared__ float smem[32];
  const std::size_t s = __cvta_generic_to_shared(&smem[i]);
  const bool round_trips = __cvta_shared_to_generic(s) == static_cast<void*>(&smem[i]);
  const bool same_as_ptx = s == rl::emu::hopper::shared_address(&smem[i]);
  addresses[i] = round_trips && same_as_ptx && s <= 0xFFFFFFFFULL ? s : ~0ULL;
}

template <typename T>
concept HasLdcs = requires(const T* p) {
  __ldcs(p);
};
struct NotACudaType {
  int x;
};

}  // namespace

TEST(CudaSurface, TiledPartitionOfEverySizeShufflesVotesAndReducesWithinItsTile) {
  check_tiles<1>();
  check_tiles<2>();
  check_tiles<4>();
  check_tiles<8>();
  check_tiles<16>();
  check_tiles<32>();
}

TEST(CudaSurface, TileOfATileRanksWithinItsWarp) {
  const unsigned threads = 64;
  unsigned* d;
  cudaCheck(cudaMalloc(&d, 4 * threads * sizeof(unsigned)));
  rl::launch(nested_tile_kernel, dim3(1), dim3(threads), 0, nullptr, d);
  cudaCheck(cudaGetLastError());
  std::vector<unsigned> h(4 * threads);
  cudaCheck(cudaMemcpy(h.data(), d, h.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  cudaCheck(cudaFree(d));
  for (unsigned t = 0; t < threads; ++t) {
    const unsigned base = t / 8 * 8;
    EXPECT_EQ(h[4 * t], t % 8);
    EXPECT_EQ(h[4 * t + 1], (t % 32) / 8);  // within the warp, not the block
    EXPECT_EQ(h[4 * t + 2], 4U);
    EXPECT_EQ(h[4 * t + 3], 8 * base + 28);  // base + (base+1) + ... + (base+7)
  }
}

TEST(CudaSurface, ThreadBlockAndGridQueriesMatchTheBuiltins) {
  const dim3 grid(3, 2), block(8, 4);
  const unsigned total = 3 * 2 * 8 * 4;
  unsigned* d;
  cudaCheck(cudaMalloc(&d, 10 * total * sizeof(unsigned)));
  rl::launch(block_and_grid_kernel, grid, block, 0, nullptr, d);
  cudaCheck(cudaGetLastError());
  std::vector<unsigned> h(10 * total);
  cudaCheck(cudaMemcpy(h.data(), d, h.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  cudaCheck(cudaFree(d));
  for (unsigned by = 0; by < 2; ++by)
    for (unsigned bx = 0; bx < 3; ++bx)
      for (unsigned ty = 0; ty < 4; ++ty)
        for (unsigned tx = 0; tx < 8; ++tx) {
          const unsigned block_rank = bx + 3 * by, thread = tx + 8 * ty;
          const unsigned* o = &h[10 * (block_rank * 32 + thread)];
          EXPECT_EQ(o[0], thread);
          EXPECT_EQ(o[1], 32U);
          EXPECT_EQ(o[2], bx + 100 * by);
          EXPECT_EQ(o[3], tx + 100 * ty);
          EXPECT_EQ(o[4], 32U);
          EXPECT_EQ(o[5], total);
          EXPECT_EQ(o[6], block_rank);
          EXPECT_EQ(o[7], 6U);
          EXPECT_EQ(o[8], 0U);  // not launched cooperatively
          EXPECT_EQ(o[9], thread + 32U);
        }
}

TEST(CudaSurface, RuntimeTiledPartitionRefusesNonNativeSizes) {
  rl::launch(bad_dynamic_tile_kernel, dim3(1), dim3(32), 0, nullptr);
  EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  cudaGetLastError();
}

TEST(CudaSurface, CacheOperatorAccessesCopyAndSharedAddressesRoundTrip) {
  static_assert(HasLdcs<float4> && HasLdcs<half2> && HasLdcs<nv_bfloat16> && HasLdcs<long>);
  static_assert(!HasLdcs<NotACudaType>, "only the types CUDA overloads them for");
  const int n = 32;
  std::vector<float4> in4(n);
  std::vector<half> inh(n);
  std::vector<int> ini(n);
  for (int i = 0; i < n; ++i) {
    const auto f = static_cast<float>(i);
    in4[i] = make_float4(1.0f * f, 2.0f * f, 3.0f * f, 4.0f * f);
    inh[i] = __float2half(0.5f * f);
    ini[i] = i;
  }
  float4 *d_in4, *d_out4;
  half *d_inh, *d_outh;
  int *d_ini, *d_outi;
  unsigned long long* d_addr;
  cudaCheck(cudaMalloc(&d_in4, n * sizeof(float4)));
  cudaCheck(cudaMalloc(&d_out4, n * sizeof(float4)));
  cudaCheck(cudaMalloc(&d_inh, n * sizeof(half)));
  cudaCheck(cudaMalloc(&d_outh, n * sizeof(half)));
  cudaCheck(cudaMalloc(&d_ini, n * sizeof(int)));
  cudaCheck(cudaMalloc(&d_outi, n * sizeof(int)));
  cudaCheck(cudaMalloc(&d_addr, n * sizeof(unsigned long long)));
  cudaCheck(cudaMemcpy(d_in4, in4.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
  cudaCheck(cudaMemcpy(d_inh, inh.data(), n * sizeof(half), cudaMemcpyHostToDevice));
  cudaCheck(cudaMemcpy(d_ini, ini.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  rl::launch(cache_ops_kernel, dim3(1), dim3(n), 0, nullptr, d_in4, d_out4, d_inh, d_outh, d_ini,
             d_outi, d_addr);
  cudaCheck(cudaGetLastError());
  std::vector<float4> out4(n);
  std::vector<half> outh(n);
  std::vector<int> outi(n);
  std::vector<unsigned long long> addr(n);
  cudaCheck(cudaMemcpy(out4.data(), d_out4, n * sizeof(float4), cudaMemcpyDeviceToHost));
  cudaCheck(cudaMemcpy(outh.data(), d_outh, n * sizeof(half), cudaMemcpyDeviceToHost));
  cudaCheck(cudaMemcpy(outi.data(), d_outi, n * sizeof(int), cudaMemcpyDeviceToHost));
  cudaCheck(
      cudaMemcpy(addr.data(), d_addr, n * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(out4[i].w, 4.0f * static_cast<float>(i));
    EXPECT_EQ(__half2float(outh[i]), 0.5f * static_cast<float>(i));
    EXPECT_EQ(outi[i], 4 * i + 1);
    ASSERT_NE(addr[i], ~0ULL) << "shared address not 32-bit, not rl::ptx's, or not invertible";
    if (i > 0) {
      EXPECT_EQ(addr[i] - addr[i - 1], sizeof(float));  // addresses keep their spacing
    }
  }
  for (void* p : {static_cast<void*>(d_in4), static_cast<void*>(d_out4), static_cast<void*>(d_inh),
                  static_cast<void*>(d_outh), static_cast<void*>(d_ini), static_cast<void*>(d_outi),
                  static_cast<void*>(d_addr)})
    cudaCheck(cudaFree(p));
}

// Each 16-bit math function is the float64 result rounded once to the type.
TEST(CudaSurface, HalfAndBf16MathFunctionsAreTheDoubleResultRoundedOnce) {
  for (float x : {0.0f, 0.375f, 1.0f, 2.5f, 7.0f, 11.125f}) {
    const half h = __float2half(x);
    const nv_bfloat16 b = __float2bfloat16(x);
    const double xd = x;
    EXPECT_EQ(__half_as_ushort(hexp(h)), __half_as_ushort(__double2half(std::exp(xd))));
    EXPECT_EQ(__half_as_ushort(hexp2(h)), __half_as_ushort(__double2half(std::exp2(xd))));
    EXPECT_EQ(__half_as_ushort(hsqrt(h)), __half_as_ushort(__double2half(std::sqrt(xd))));
    EXPECT_EQ(__half_as_ushort(hsin(h)), __half_as_ushort(__double2half(std::sin(xd))));
    EXPECT_EQ(__half_as_ushort(htanh(h)), __half_as_ushort(__double2half(std::tanh(xd))));
    EXPECT_EQ(__bfloat16_as_ushort(hexp(b)), __bfloat16_as_ushort(__double2bfloat16(std::exp(xd))));
    if (x > 0.0f) {
      EXPECT_EQ(__half_as_ushort(hlog(h)), __half_as_ushort(__double2half(std::log(xd))));
      EXPECT_EQ(__half_as_ushort(hrsqrt(h)), __half_as_ushort(__double2half(1.0 / std::sqrt(xd))));
      EXPECT_EQ(__half_as_ushort(hrcp(h)), __half_as_ushort(__double2half(1.0 / xd)));
    }
    const half2 pair = h2sqrt(__halves2half2(h, __float2half(4.0f)));
    EXPECT_EQ(__half_as_ushort(__low2half(pair)), __half_as_ushort(hsqrt(h)));
    EXPECT_EQ(__half2float(__high2half(pair)), 2.0f);
    EXPECT_EQ(__half2float(__high2half(h2exp(__halves2half2(h, __float2half(0.0f))))), 1.0f);
  }
  // Negative case for the rounding: a value whose float result rounds to a
  // different half than the exact one would show up as a mismatch above;
  // here, exp(1) in half is 2.719 (0x4170), not e truncated (0x416F).
  EXPECT_EQ(__half_as_ushort(hexp(__float2half(1.0f))), 0x4170);
}

TEST(CudaSurface, NanMinMaxPropagateNanWhereThePlainFormsDropIt) {
  const half nan = __ushort_as_half(0x7E00), one = __float2half(1.0f), two = __float2half(2.0f);
  EXPECT_EQ(__half2float(__hmax(nan, one)), 1.0f);
  EXPECT_TRUE(__hisnan(__hmax_nan(nan, one)));
  EXPECT_TRUE(__hisnan(__hmin_nan(one, nan)));
  EXPECT_EQ(__half_as_ushort(__hmax_nan(nan, one)), 0x7FFF);  // canonical NaN
  EXPECT_EQ(__half2float(__hmax_nan(one, two)), 2.0f);
  EXPECT_EQ(__half2float(__hmin_nan(one, two)), 1.0f);
  const half2 m = __hmax2_nan(__halves2half2(nan, one), __halves2half2(one, two));
  EXPECT_TRUE(__hisnan(__low2half(m)));
  EXPECT_EQ(__half2float(__high2half(m)), 2.0f);
  const nv_bfloat16 bnan = __ushort_as_bfloat16(0x7FC0);
  EXPECT_TRUE(__hisnan(__hmin_nan(bnan, __float2bfloat16(1.0f))));
  EXPECT_EQ(__bfloat162float(__hmin(bnan, __float2bfloat16(1.0f))), 1.0f);
}
