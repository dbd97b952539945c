// The emulator's Hopper instructions (rl/emu/hopper.hpp) against cases
// computed by hand from the PTX ISA: descriptor decoding and operand
// addresses under each swizzle ("Matrix Descriptor Format", "Shared Memory
// Matrix Layout"), the wgmma accumulator layout ("Register Fragments",
// m64nNk16 D), mbarrier phases and transaction counts ("mbarrier"), TMA boxes
// at tensor edges with zero fill and the emulated cuTensorMapEncodeTiled's
// refusals ("cp.async.bulk.tensor", driver API "Tensor Map Object
// Management").  No RL_EMU_CC needed: these call rl::emu::hopper directly.
#include "rl/cuda.hpp"
#include "rl/emu/hopper.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace h = rl::emu::hopper;

// ------------------------------------------------------------- descriptors

TEST(HopperDescriptor, decodes_start_lbo_sbo_base_offset_and_each_swizzle_code) {
  // start 0x1234 << 4, LBO 0x200 << 4, SBO 0x40 << 4, base offset 5, swizzle 1 (128B).
  const std::uint64_t desc =
      0x1234ull | (0x200ull << 16) | (0x40ull << 32) | (5ull << 49) | (1ull << 62);
  const h::Descriptor d = h::decode_descriptor(desc);
  EXPECT_EQ(d.start, 0x12340u);
  EXPECT_EQ(d.lbo, 0x2000u);
  EXPECT_EQ(d.sbo, 0x400u);
  EXPECT_EQ(d.base_offset, 5u);
  EXPECT_EQ(d.swizzle_bytes, 128u);
  EXPECT_EQ(h::decode_descriptor(0).swizzle_bytes, 0u);
  EXPECT_EQ(h::decode_descriptor(2ull << 62).swizzle_bytes, 64u);
  EXPECT_EQ(h::decode_descriptor(3ull << 62).swizzle_bytes, 32u);
}

TEST(HopperDescriptor, k_major_without_swizzle_walks_8x16_byte_core_matrices) {
  // LBO 128 (next core matrix in K), SBO 256 (next in M/N), 2-byte elements.
  const h::Descriptor d{0x400, 128, 256, 0, 0};
  EXPECT_EQ(h::operand_address(d, false, 2, 0, 0), 0x400u);
  EXPECT_EQ(h::operand_address(d, false, 2, 0, 7), 0x400u + 14);   // same 16-byte row
  EXPECT_EQ(h::operand_address(d, false, 2, 0, 8), 0x400u + 128);  // next core matrix in K
  EXPECT_EQ(h::operand_address(d, false, 2, 3, 9), 0x400u + 128 + 48 + 2);
  EXPECT_EQ(h::operand_address(d, false, 2, 9, 0), 0x400u + 256 + 16);  // second 8-row group
}

TEST(HopperDescriptor, k_major_128b_swizzle_xors_the_16_byte_chunk_with_the_row) {
  // Rows of 128 bytes, SBO 1024; a 1024-aligned start.  Row 1, k 0: linear
  // 128, row bits (9:7) = 1 -> chunk 0 ^ 1 = 1: 128 + 16.  Row 5, k 9 (byte
  // 18, chunk 1): linear 640 + 18, chunk 1 ^ 5 = 4: 640 + 64 + 2.
  const h::Descriptor d{0x2000, 16, 1024, 0, 128};
  EXPECT_EQ(h::operand_address(d, false, 2, 0, 0), 0x2000u);
  EXPECT_EQ(h::operand_address(d, false, 2, 1, 0), 0x2000u + 144);
  EXPECT_EQ(h::operand_address(d, false, 2, 5, 9), 0x2000u + 640 + 66);
  EXPECT_EQ(h::operand_address(d, false, 2, 8, 0), 0x2000u + 1024);  // next group: row 0 again
  // The rung's k16 step (+32 bytes on the start) lands on chunk 2 ^ row.
  const h::Descriptor step{0x2000 + 32, 16, 1024, 0, 128};
  EXPECT_EQ(h::operand_address(step, false, 2, 3, 0), 0x2000u + 384 + ((2 ^ 3) * 16));
}

TEST(HopperDescriptor, k_major_64b_and_32b_swizzles_use_two_and_one_row_bits) {
  // 64B: rows of 64 bytes; row 3 starts at 192 = bit 7 set (+ bit 6): the
  // XOR reads bits 8:7 = 1 -> chunk 0 ^ 1.  32B: rows of 32 bytes; row 4 at
  // 128: bit 7 = 1 -> chunk 0 ^ 1; row 3 at 96: bit 7 = 0, unchanged.
  const h::Descriptor d64{0, 0, 512, 0, 64};
  EXPECT_EQ(h::operand_address(d64, false, 2, 3, 0), 192u + 16);
  EXPECT_EQ(h::operand_address(d64, false, 2, 6, 0), 384u + 48);  // bits 8:7 = 3
  const h::Descriptor d32{0, 0, 256, 0, 32};
  EXPECT_EQ(h::operand_address(d32, false, 2, 4, 0), 128u + 16);
  EXPECT_EQ(h::operand_address(d32, false, 2, 3, 0), 96u);
}

TEST(HopperDescriptor, mn_major_128b_puts_64_columns_per_k_row_and_lbo_between_column_blocks) {
  // The GEMM rung's B: LBO 8192 between N blocks of 64, SBO 1024 per 8 K rows.
  const h::Descriptor d{0, 8192, 1024, 0, 128};
  EXPECT_EQ(h::operand_address(d, true, 2, 5, 0), 10u);               // row 0 unswizzled
  EXPECT_EQ(h::operand_address(d, true, 2, 0, 1), 128u + 16);         // k row 1: chunk 0 ^ 1
  EXPECT_EQ(h::operand_address(d, true, 2, 64, 0), 8192u);            // second column block
  EXPECT_EQ(h::operand_address(d, true, 2, 0, 9), 1024u + 128 + 16);  // next 8-row group
}

TEST(HopperDescriptor, refuses_what_it_does_not_emulate) {
  EXPECT_THROW(h::operand_address({0, 0, 0, 1, 128}, false, 2, 0, 0), std::invalid_argument);
  EXPECT_THROW(h::operand_address({0, 0, 0, 0, 0}, true, 2, 0, 0), std::invalid_argument);
}

// ------------------------------------------------------------- accumulators

TEST(HopperAccumulator, thread_register_to_row_and_column_follows_the_m64nNk_figure) {
  // Thread 0: d0..d3 = (0,0) (0,1) (8,0) (8,1); d4 = (0,8).
  EXPECT_EQ(h::accumulator_row(0, 0), 0u);
  EXPECT_EQ(h::accumulator_col(0, 1), 1u);
  EXPECT_EQ(h::accumulator_row(0, 2), 8u);
  EXPECT_EQ(h::accumulator_col(0, 4), 8u);
  // Thread 37 = warp 1, lane 5 (g 1, t 1); d6 = (16 + 1 + 8, 8 + 2).
  EXPECT_EQ(h::accumulator_row(37, 6), 25u);
  EXPECT_EQ(h::accumulator_col(37, 6), 10u);
  // Thread 127 = warp 3, lane 31 (g 7, t 3); d127 (N = 256) = (63, 255).
  EXPECT_EQ(h::accumulator_row(127, 127), 63u);
  EXPECT_EQ(h::accumulator_col(127, 127), 255u);
}

// ------------------------------------------------------------- mbarrier

TEST(HopperMbarrier, a_phase_completes_when_arrivals_and_transaction_bytes_are_both_done) {
  std::uint64_t bar = 0;
  h::mbarrier_init(&bar, 2);
  EXPECT_FALSE(h::mbarrier_test_wait_parity(&bar, 0));
  h::mbarrier_expect_tx(&bar, 256);  // the first arrival announces 256 bytes
  h::mbarrier_arrive(&bar);
  h::mbarrier_arrive(&bar);
  EXPECT_FALSE(h::mbarrier_test_wait_parity(&bar, 0)) << "bytes still pending";
  EXPECT_EQ(h::mbarrier_state(bar).tx_count, 256);
  h::mbarrier_complete_tx(&bar, 128);
  EXPECT_FALSE(h::mbarrier_test_wait_parity(&bar, 0));
  h::mbarrier_complete_tx(&bar, 128);
  EXPECT_TRUE(h::mbarrier_test_wait_parity(&bar, 0)) << "phase 0 done";
  EXPECT_FALSE(h::mbarrier_test_wait_parity(&bar, 1)) << "phase 1 just began";
  const h::MbarrierState s = h::mbarrier_state(bar);
  EXPECT_EQ(s.phase, 1u);
  EXPECT_EQ(s.pending, 2u) << "the next phase expects the init count again";
  EXPECT_EQ(s.tx_count, 0);
}

TEST(HopperMbarrier, bytes_may_complete_before_they_are_expected) {
  // TMA may count bytes down before the producer's expect_tx: tx goes
  // negative, and the phase still waits for the arrival.
  std::uint64_t bar = 0;
  h::mbarrier_init(&bar, 1);
  h::mbarrier_complete_tx(&bar, 64);
  EXPECT_EQ(h::mbarrier_state(bar).tx_count, -64);
  EXPECT_FALSE(h::mbarrier_test_wait_parity(&bar, 0));
  h::mbarrier_expect_tx(&bar, 64);
  EXPECT_FALSE(h::mbarrier_test_wait_parity(&bar, 0));
  h::mbarrier_arrive(&bar);
  EXPECT_TRUE(h::mbarrier_test_wait_parity(&bar, 0));
}

TEST(HopperMbarrier, the_state_word_round_trips_every_field) {
  const h::MbarrierState s{12345, 1048575, -1048575, 1};
  const h::MbarrierState t = h::mbarrier_state(h::mbarrier_word(s));
  EXPECT_EQ(t.pending, s.pending);
  EXPECT_EQ(t.expected, s.expected);
  EXPECT_EQ(t.tx_count, s.tx_count);
  EXPECT_EQ(t.phase, s.phase);
}

TEST(HopperMbarrier, init_refuses_a_zero_count) {
  std::uint64_t bar = 0;
  EXPECT_THROW(h::mbarrier_init(&bar, 0), std::runtime_error);
  EXPECT_THROW(h::mbarrier_init(&bar, 1u << 20), std::runtime_error);
}

// Runs `launch`, which must fail; returns what the emulator printed.
std::string stderr_of_failed_launch(const std::function<void()>& launch) {
  (void)cudaGetLastError();
  testing::internal::CaptureStderr();
  launch();
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(cudaDeviceSynchronize(), cudaSuccess) << "the launch should have failed";
  return err;
}

// A consumer waits for a phase nobody will complete: the launch fails and
// the message names the barrier.
__global__ void wait_forever() {
  __shared__ std::uint64_t bar;
  h::mbarrier_init(&bar, 1);
  while (!h::mbarrier_try_wait_parity(&bar, 0)) {
  }
}

TEST(HopperMbarrier, a_wait_that_can_never_complete_is_a_deadlock_naming_the_barrier) {
  (void)cudaGetLastError();
  testing::internal::CaptureStderr();
  rl::launch(wait_forever, dim3(1), dim3(32), 0, nullptr);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(cudaGetLastError(), cudaSuccess);
  EXPECT_NE(cudaDeviceSynchronize(), cudaSuccess);  // the failure is reported there too, once
  EXPECT_NE(err.find("deadlock"), std::string::npos) << err;
  EXPECT_NE(err.find("mbarrier at shared address"), std::string::npos) << err;
  EXPECT_NE(err.find("parity 0"), std::string::npos) << err;
  EXPECT_NE(err.find("32 on mbarriers or named barriers"), std::string::npos) << err;
}

// The arrival came (0 of 1 pending), the bytes never will (no copy completes them): the
// report names the barrier's outstanding transaction count.  Thread 1 waits
// at __syncthreads for thread 0, which sleeps on the barrier.
__global__ void wait_for_bytes() {
  __shared__ std::uint64_t bar;
  if (threadIdx.x == 0) {
    h::mbarrier_init(&bar, 1);
    h::mbarrier_expect_tx(&bar, 256);
    h::mbarrier_arrive(&bar);
    while (!h::mbarrier_try_wait_parity(&bar, 0)) {
    }
  }
  __syncthreads();
}

TEST(HopperMbarrier, a_deadlock_report_names_the_missing_transaction_bytes) {
  const std::string err =
      stderr_of_failed_launch([&] { rl::launch(wait_for_bytes, dim3(1), dim3(2), 0, nullptr); });
  EXPECT_NE(err.find("deadlock"), std::string::npos) << err;
  EXPECT_NE(err.find("1 at __syncthreads"), std::string::npos) << err;
  EXPECT_NE(
      err.find(
          "1 on mbarriers or named barriers; thread 0 waits on the mbarrier at shared address"),
      std::string::npos)
      << err;
  EXPECT_NE(err.find("pending arrivals 0 of 1, transaction count 256 bytes"), std::string::npos)
      << err;
}

// Lanes 1..31 wait in __syncwarp for lane 0, which sleeps on a barrier no
// one completes: the report says what lane 0 does.
__global__ void warp_waits_for_a_sleeper() {
  __shared__ std::uint64_t bar;
  if (threadIdx.x == 0) {
    h::mbarrier_init(&bar, 1);
    while (!h::mbarrier_try_wait_parity(&bar, 0)) {
    }
  }
  __syncwarp();
}

TEST(HopperMbarrier, a_warp_collective_waiting_for_a_sleeping_lane_says_it_sleeps) {
  const std::string err = stderr_of_failed_launch(
      [&] { rl::launch(warp_waits_for_a_sleeper, dim3(1), dim3(32), 0, nullptr); });
  EXPECT_NE(err.find("for lane 0, which sleeps on an mbarrier"), std::string::npos) << err;
}

// Producer thread 0 arrives after the consumers have started waiting: every
// thread sees the phase complete (try_wait lets thread 0 run).
__global__ void producer_consumer(int* seen) {
  __shared__ std::uint64_t bar;
  __shared__ int value;
  if (threadIdx.x == 0) h::mbarrier_init(&bar, 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int i = 0; i < 100; ++i) __nanosleep(1);  // let the consumers spin first
    value = 42;
    h::mbarrier_arrive(&bar);
  } else {
    while (!h::mbarrier_try_wait_parity(&bar, 0)) {
    }
    seen[threadIdx.x] = value;
  }
}

TEST(HopperMbarrier, waiting_threads_see_what_the_arrival_released) {
  std::vector<int> host(64, 0);
  int* seen = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&seen), 64 * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemset(seen, 0, 64 * sizeof(int)), cudaSuccess);
  rl::launch(producer_consumer, dim3(1), dim3(64), 0, nullptr, seen);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(host.data(), seen, 64 * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int t = 1; t < 64; ++t) EXPECT_EQ(host[t], 42) << t;
  cudaFree(seen);
}

// ------------------------------------------------------------- wgmma

// A(m, k) = 1 where k == m % 16, else 0; B(k, n) = 8k + n (exact in bf16):
// D(m, n) = B(m % 16, n) = 8 (m % 16) + n, so each thread's register i must
// hold 8 (row % 16) + col for the hand layout's (row, col).  A K-major
// without swizzle (LBO 128, SBO 256), B K-major 128B-swizzled (SBO 1024),
// both written through hand-written address formulas.  The accumulators
// start at 1000 and scale-d = 1 adds them.
struct LayoutDescriptors {
  std::uint64_t a, b;
};

// Thread 0 writes the A and B tiles above, then the block meets.
__device__ LayoutDescriptors layout_tiles() {
  __shared__ __align__(1024) unsigned char a_tile[64 * 32];
  __shared__ __align__(1024) unsigned char b_tile[8 * 128];
  if (threadIdx.x == 0) {
    for (unsigned m = 0; m < 64; ++m)
      for (unsigned k = 0; k < 16; ++k) {
        const __nv_bfloat16 v = __float2bfloat16(k == m % 16 ? 1.0f : 0.0f);
        std::memcpy(a_tile + (m / 8) * 256 + (k / 8) * 128 + (m % 8) * 16 + (k % 8) * 2, &v, 2);
      }
    const std::uint32_t b_base = h::shared_address(b_tile);
    for (unsigned n = 0; n < 8; ++n)
      for (unsigned k = 0; k < 16; ++k) {
        const __nv_bfloat16 v = __float2bfloat16(static_cast<float>(8 * k + n));
        const std::uint32_t linear = b_base + n * 128 + k * 2;
        const std::uint32_t swizzled = linear ^ (((linear >> 7) & 7u) << 4);
        std::memcpy(b_tile + (swizzled - b_base), &v, 2);
      }
  }
  __syncthreads();
  return {(h::shared_address(a_tile) >> 4) | (8ull << 16) | (16ull << 32),
          (h::shared_address(b_tile) >> 4) | (64ull << 32) | (1ull << 62)};
}

__global__ void wgmma_layout(float* out, int scale_d) {
  const unsigned t = threadIdx.x;
  const auto [desc_a, desc_b] = layout_tiles();
  float d[4] = {1000.0f, 1000.0f, 1000.0f, 1000.0f};
  h::wgmma({h::WgmmaInput::bf16, 8, desc_a, desc_b, scale_d != 0, 1, 1, false, false}, d);
  h::wgmma_commit_group();
  h::wgmma_wait_group(0);
  for (int i = 0; i < 4; ++i) out[t * 4 + i] = d[i];
}

TEST(HopperWgmma, accumulators_land_where_the_fragment_figure_puts_them) {
  for (int scale_d : {0, 1}) {
    SCOPED_TRACE(scale_d);
    float* out = nullptr;
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&out), 128 * 4 * sizeof(float)), cudaSuccess);
    rl::launch(wgmma_layout, dim3(1), dim3(128), 0, nullptr, out, scale_d);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<float> host(128 * 4);
    ASSERT_EQ(cudaMemcpy(host.data(), out, host.size() * sizeof(float), cudaMemcpyDeviceToHost),
              cudaSuccess);
    for (unsigned t = 0; t < 128; ++t)
      for (unsigned i = 0; i < 4; ++i) {
        // By hand: row = 16 warp + lane / 4 + 8 (i / 2 % 2), col = 2 (lane % 4) + i % 2.
        const unsigned lane = t % 32, row = 16 * (t / 32) + lane / 4 + 8 * ((i / 2) % 2);
        const unsigned col = 2 * (lane % 4) + i % 2;
        EXPECT_EQ(host[t * 4 + i], static_cast<float>((scale_d ? 1000 : 0) + 8 * (row % 16) + col))
            << "thread " << t << " d" << i;
      }
    cudaFree(out);
  }
}

// The accumulators of a wgmma become readable only at the wgmma.wait_group
// that covers it ("wgmma.wait_group": accessing them earlier is undefined).
// Two chained wgmmas on d (groups 1 and 2) and one on e (group 1), each
// adding A*B = 8 (row % 16) + col to 1000:
//   before any wait  d and e read as the poison NaN;
//   wait_group 1     completes group 1: e = 1000 + P, but d stays in flight
//                    (group 2 still writes it), so still NaN;
//   wait_group 0     d = 1000 + 2P (the chain started from group 1's result).
__global__ void wgmma_wait_points(float* out) {
  const unsigned t = threadIdx.x;
  const auto [desc_a, desc_b] = layout_tiles();
  const h::WgmmaOp op{h::WgmmaInput::bf16, 8, desc_a, desc_b, true, 1, 1, false, false};
  float d[4] = {1000.0f, 1000.0f, 1000.0f, 1000.0f};
  float e[4] = {1000.0f, 1000.0f, 1000.0f, 1000.0f};
  h::wgmma(op, d);
  h::wgmma(op, e);
  h::wgmma_commit_group();
  h::wgmma(op, d);
  h::wgmma_commit_group();
  float* mine = out + t * 16;
  for (int i = 0; i < 4; ++i) mine[i] = d[i] + e[i];
  h::wgmma_wait_group(1);
  for (int i = 0; i < 4; ++i) mine[4 + i] = e[i];
  for (int i = 0; i < 4; ++i) mine[8 + i] = d[i];
  h::wgmma_wait_group(0);
  for (int i = 0; i < 4; ++i) mine[12 + i] = d[i];
}

TEST(HopperWgmma, accumulators_are_poison_until_the_wait_group_that_covers_them) {
  float* out = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&out), 128 * 16 * sizeof(float)), cudaSuccess);
  rl::launch(wgmma_wait_points, dim3(1), dim3(128), 0, nullptr, out);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<float> host(128 * 16);
  ASSERT_EQ(cudaMemcpy(host.data(), out, host.size() * sizeof(float), cudaMemcpyDeviceToHost),
            cudaSuccess);
  for (unsigned t = 0; t < 128; ++t)
    for (unsigned i = 0; i < 4; ++i) {
      SCOPED_TRACE("thread " + std::to_string(t) + " d" + std::to_string(i));
      const unsigned lane = t % 32, row = 16 * (t / 32) + lane / 4 + 8 * ((i / 2) % 2);
      const float product = static_cast<float>(8 * (row % 16) + 2 * (lane % 4) + i % 2);
      const float* mine = &host[t * 16];
      EXPECT_TRUE(std::isnan(mine[i])) << "read before any wait";
      EXPECT_EQ(mine[4 + i], 1000.0f + product) << "e after wait_group 1";
      EXPECT_TRUE(std::isnan(mine[8 + i])) << "d after wait_group 1 (group 2 pending)";
      EXPECT_EQ(mine[12 + i], 1000.0f + 2 * product) << "d after wait_group 0";
    }
  cudaFree(out);
}

// Writing an in-flight accumulator (here: re-zeroing it between the wgmma
// and its wait, as a misplaced initialisation would) is reported at the wait.
__global__ void wgmma_write_in_flight(int write) {
  __shared__ __align__(1024) unsigned char tile[64 * 32];
  for (unsigned i = threadIdx.x; i < sizeof tile; i += blockDim.x) tile[i] = 0;
  __syncthreads();
  const std::uint64_t desc = (h::shared_address(tile) >> 4) | (8ull << 16) | (16ull << 32);
  float d[4] = {};
  h::wgmma({h::WgmmaInput::bf16, 8, desc, desc, true, 1, 1, false, false}, d);
  h::wgmma_commit_group();
  if (write != 0 && threadIdx.x == 5) d[2] = 0.0f;
  h::wgmma_wait_group(0);
}

TEST(HopperWgmma, writing_an_in_flight_accumulator_is_reported_at_the_wait) {
  rl::launch(wgmma_write_in_flight, dim3(1), dim3(128), 0, nullptr, 0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << "no write: a clean wait";
  const std::string err = stderr_of_failed_launch(
      [&] { rl::launch(wgmma_write_in_flight, dim3(1), dim3(128), 0, nullptr, 1); });
  EXPECT_NE(err.find("thread 5 wrote accumulator register 2 of an in-flight wgmma.mma_async"),
            std::string::npos)
      << err;
}

// A from registers ("Register Fragments", the matrix-A figures), hand-placed
// per type: with B(k, n) = 1 where k == n (N = K), D = A, so register i of
// thread t must hold A at the accumulator figure's (row, col).  Thread t of
// warp w = t / 32, g = (t % 32) / 4, q = t % 4 packs element i as:
//   f16  m64nNk16 (8 per thread):  row 16w + g + 8 ((i / 2) % 2), col 2q + i % 2 + 8 (i / 4)
//   tf32 m64nNk8  (4 per thread):  row 16w + g + 8 (i % 2),       col q + 4 (i / 2)
//   s8   m64nNk32 (16 per thread): row 16w + g + 8 ((i / 4) % 2), col 4q + i % 4 + 16 (i / 8)
// A(m, k) = m + k / 16 (f16), m + k / 8 (tf32): exact in either; s8:
// m + 2k - 64.  imm-scale-a = -1 negates A (f16 case).
enum class RegA { f16, tf32, s8 };

__global__ void wgmma_register_a(RegA type, float* out_f, std::int32_t* out_i) {
  __shared__ __align__(1024) unsigned char b_tile[32 * 32];
  const unsigned t = threadIdx.x, w = t / 32, g = (t % 32) / 4, q = t % 4;
  const unsigned k_dim = type == RegA::f16 ? 16 : type == RegA::tf32 ? 8 : 32;
  const unsigned eb = 32 / k_dim;
  if (t == 0) {
    // B K-major, no swizzle: N = K rows of 32 bytes as two 8 x 16-byte core
    // matrices along K (LBO 128), 8-row groups SBO 256 apart.
    std::memset(b_tile, 0, sizeof b_tile);
    for (unsigned n = 0; n < k_dim; ++n) {
      unsigned char* at =
          b_tile + (n / 8) * 256 + ((n * eb) / 16) * 128 + (n % 8) * 16 + (n * eb) % 16;
      if (type == RegA::f16) {
        const __half one = __float2half(1.0f);
        std::memcpy(at, &one, 2);
      } else if (type == RegA::tf32) {
        const float one = 1.0f;
        std::memcpy(at, &one, 4);
      } else {
        *at = 1;
      }
    }
  }
  __syncthreads();
  std::uint32_t a[4] = {};
  auto* bytes = reinterpret_cast<unsigned char*>(a);
  for (unsigned i = 0; i < 16 / eb; ++i) {
    unsigned row = 0, col = 0;
    if (type == RegA::f16) {
      row = 16 * w + g + 8 * ((i / 2) % 2);
      col = 2 * q + i % 2 + 8 * (i / 4);
      const __half v = __float2half(static_cast<float>(row) + static_cast<float>(col) / 16);
      std::memcpy(bytes + 2 * i, &v, 2);
    } else if (type == RegA::tf32) {
      row = 16 * w + g + 8 * (i % 2);
      col = q + 4 * (i / 2);
      const float v = static_cast<float>(row) + static_cast<float>(col) / 8;
      std::memcpy(bytes + 4 * i, &v, 4);
    } else {
      row = 16 * w + g + 8 * ((i / 4) % 2);
      col = 4 * q + i % 4 + 16 * (i / 8);
      bytes[i] = static_cast<unsigned char>(static_cast<std::int8_t>(row + 2 * col - 64));
    }
  }
  const std::uint64_t desc_b = (h::shared_address(b_tile) >> 4) | (8ull << 16) | (16ull << 32);
  const h::WgmmaInput input = type == RegA::f16    ? h::WgmmaInput::f16
                              : type == RegA::tf32 ? h::WgmmaInput::tf32
                                                   : h::WgmmaInput::s8;
  h::WgmmaOp op{input, k_dim, 0, desc_b, false, type == RegA::f16 ? -1 : 1, 1, false, false};
  op.a_registers = a;
  float df[16] = {};
  std::int32_t di[16] = {};
  if (type == RegA::s8)
    h::wgmma(op, di);
  else
    h::wgmma(op, df);
  h::wgmma_commit_group();
  h::wgmma_wait_group(0);
  for (unsigned i = 0; i < k_dim / 2; ++i) {
    out_f[t * 16 + i] = df[i];
    out_i[t * 16 + i] = di[i];
  }
}

TEST(HopperWgmma, a_from_registers_follows_the_matrix_a_fragment_figures) {
  float* out_f = nullptr;
  std::int32_t* out_i = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&out_f), 128 * 16 * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&out_i), 128 * 16 * sizeof(std::int32_t)),
            cudaSuccess);
  for (RegA type : {RegA::f16, RegA::tf32, RegA::s8}) {
    SCOPED_TRACE(static_cast<int>(type));
    rl::launch(wgmma_register_a, dim3(1), dim3(128), 0, nullptr, type, out_f, out_i);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<float> f(128 * 16);
    std::vector<std::int32_t> i32(128 * 16);
    ASSERT_EQ(cudaMemcpy(f.data(), out_f, f.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(i32.data(), out_i, i32.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    const unsigned n = type == RegA::f16 ? 16 : type == RegA::tf32 ? 8 : 32;
    for (unsigned t = 0; t < 128; ++t)
      for (unsigned i = 0; i < n / 2; ++i) {
        const unsigned row = h::accumulator_row(t, i), col = h::accumulator_col(t, i);
        if (type == RegA::f16)
          EXPECT_EQ(f[t * 16 + i], -(static_cast<float>(row) + static_cast<float>(col) / 16))
              << t << " " << i;
        else if (type == RegA::tf32)
          EXPECT_EQ(f[t * 16 + i], static_cast<float>(row) + static_cast<float>(col) / 8)
              << t << " " << i;
        else
          EXPECT_EQ(i32[t * 16 + i], static_cast<std::int32_t>(row + 2 * col) - 64)
              << t << " " << i;
      }
  }
  cudaFree(out_f);
  cudaFree(out_i);
}

// ------------------------------------------------------------- TMA

TEST(HopperTma, encode_refuses_what_the_driver_refuses) {
  alignas(16) static std::uint16_t data[64 * 64];
  h::TensorMap map{};
  const std::uint64_t dims[2] = {64, 64}, strides[1] = {128};
  const std::uint32_t box[2] = {64, 8}, es[2] = {1, 1};
  const char* why = "";
  auto encode = [&](const void* address, const std::uint64_t* st, const std::uint32_t* bx,
                    h::TmaSwizzle sw) {
    return h::encode_tensor_map_tiled(&map, h::TmaDataType::bfloat16, 2, address, dims, st, bx, es,
                                      h::TmaInterleave::none, sw, h::TmaOobFill::zeros, &why);
  };
  EXPECT_EQ(encode(data, strides, box, h::TmaSwizzle::b128), 0);
  EXPECT_EQ(encode(reinterpret_cast<const char*>(data) + 8, strides, box, h::TmaSwizzle::b128), 1);
  EXPECT_STREQ(why, "globalAddress must be 16-byte aligned");
  const std::uint64_t odd_pitch[1] = {120};
  EXPECT_EQ(encode(data, odd_pitch, box, h::TmaSwizzle::b128), 1);
  EXPECT_STREQ(why, "globalStrides[i] must be a multiple of 16");
  const std::uint32_t too_wide[2] = {128, 8};  // 256 bytes > the 128B span
  EXPECT_EQ(encode(data, strides, too_wide, h::TmaSwizzle::b128), 1);
  const std::uint32_t wide_64[2] = {64, 8};  // 128 bytes > the 64B span
  EXPECT_EQ(encode(data, strides, wide_64, h::TmaSwizzle::b64), 1);
  const std::uint32_t big_box[2] = {8, 257};
  EXPECT_EQ(encode(data, strides, big_box, h::TmaSwizzle::none), 1);
  EXPECT_STREQ(why, "boxDim[i] must be 1 .. 256");
  const std::uint32_t narrow[2] = {4, 8};  // 8 bytes: not a 16-byte multiple
  EXPECT_EQ(encode(data, strides, narrow, h::TmaSwizzle::none), 1);
}

// A 3 x 5 int32 tensor (value 100 r + c, pitch 32 bytes), a 4-wide x 2-high
// box without swizzle: at (2, 1) it covers columns 2..5 (5 is outside) of
// rows 1..2; at (-2, 2) columns -2..1 of rows 2..3 (row 3 outside).
__global__ void tma_edges(const h::TensorMap map, std::int32_t* out) {
  __shared__ __align__(128) std::int32_t box[2][8];
  __shared__ std::uint64_t bar;
  h::mbarrier_init(&bar, 1);
  h::mbarrier_expect_tx(&bar, 2 * 32);
  h::mbarrier_arrive(&bar);
  const std::int32_t at0[2] = {2, 1}, at1[2] = {-2, 2};
  h::tma_load(box[0], map, at0, 2, &bar);
  h::tma_load(box[1], map, at1, 2, &bar);
  out[16] = h::mbarrier_test_wait_parity(&bar, 0) ? 1 : 0;
  for (int i = 0; i < 16; ++i) out[i] = box[i / 8][i % 8];
}

// The int32 tensor of the edge tests: 3 rows of 5 (pitch 8 elements), 4 x 2 boxes.
h::TensorMap edge_map(std::int32_t* tensor) {
  h::TensorMap map{};
  const std::uint64_t dims[2] = {5, 3}, strides[1] = {32};
  const std::uint32_t box[2] = {4, 2}, es[2] = {1, 1};
  EXPECT_EQ(
      h::encode_tensor_map_tiled(&map, h::TmaDataType::int32, 2, tensor, dims, strides, box, es,
                                 h::TmaInterleave::none, h::TmaSwizzle::none, h::TmaOobFill::zeros),
      0);
  return map;
}

TEST(HopperTma, a_box_at_the_tensor_edge_reads_zeros_outside_and_completes_its_full_bytes) {
  std::int32_t* tensor = nullptr;
  std::int32_t* out = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&tensor), 3 * 8 * sizeof(std::int32_t)),
            cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&out), 17 * sizeof(std::int32_t)), cudaSuccess);
  std::vector<std::int32_t> host(3 * 8, -1);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 5; ++c) host[r * 8 + c] = 100 * r + c;
  ASSERT_EQ(cudaMemcpy(tensor, host.data(), host.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  const h::TensorMap map = edge_map(tensor);
  rl::launch(tma_edges, dim3(1), dim3(1), 0, nullptr, map, out);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<std::int32_t> got(17);
  ASSERT_EQ(cudaMemcpy(got.data(), out, got.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  const std::vector<std::int32_t> expected = {102, 103, 104, 0,   202, 203, 204, 0,  // box 0
                                              0,   0,   200, 201, 0,   0,   0,   0,  // box 1
                                              1};  // 2 x 32 bytes completed the phase
  EXPECT_EQ(got, expected);
  cudaFree(tensor);
  cudaFree(out);
}

// A 128B-swizzled box lands as wgmma reads it: 8 rows of 64 bf16 at a
// 1024-aligned address, row r's 16-byte chunk c at chunk c ^ r.
__global__ void tma_swizzle(const h::TensorMap map, std::uint16_t* out) {
  __shared__ __align__(1024) std::uint16_t box[8 * 64];
  __shared__ std::uint64_t bar;
  h::mbarrier_init(&bar, 1);
  h::mbarrier_expect_tx(&bar, sizeof box);
  h::mbarrier_arrive(&bar);
  const std::int32_t at[2] = {0, 0};
  h::tma_load(box, map, at, 2, &bar);
  for (int i = 0; i < 8 * 64; ++i) out[i] = box[i];
}

TEST(HopperTma, the_128b_swizzle_moves_chunk_c_of_row_r_to_chunk_c_xor_r) {
  std::uint16_t* tensor = nullptr;
  std::uint16_t* out = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&tensor), 8 * 64 * 2), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&out), 8 * 64 * 2), cudaSuccess);
  std::vector<std::uint16_t> host(8 * 64);
  for (int i = 0; i < 8 * 64; ++i) host[i] = static_cast<std::uint16_t>(i);
  ASSERT_EQ(cudaMemcpy(tensor, host.data(), host.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
  h::TensorMap map{};
  const std::uint64_t dims[2] = {64, 8}, strides[1] = {128};
  const std::uint32_t box[2] = {64, 8}, es[2] = {1, 1};
  ASSERT_EQ(
      h::encode_tensor_map_tiled(&map, h::TmaDataType::bfloat16, 2, tensor, dims, strides, box, es,
                                 h::TmaInterleave::none, h::TmaSwizzle::b128, h::TmaOobFill::zeros),
      0);
  rl::launch(tma_swizzle, dim3(1), dim3(1), 0, nullptr, map, out);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<std::uint16_t> got(8 * 64);
  ASSERT_EQ(cudaMemcpy(got.data(), out, got.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  // Row 3, chunk 1 (elements 8..15 of row 3) sits at chunk 1 ^ 3 = 2.
  EXPECT_EQ(got[3 * 64 + 2 * 8], 3 * 64 + 8);
  EXPECT_EQ(got[0 * 64 + 5], 5);               // row 0 is not moved
  EXPECT_EQ(got[7 * 64 + 0], 7 * 64 + 7 * 8);  // row 7, chunk 0 holds chunk 7
  cudaFree(tensor);
  cudaFree(out);
}

// A 1-D box past the tensor's end and a 5-D box across three of its edges:
// "cp.async.bulk.tensor" tile mode, elements outside read as zero.  The
// 5-D tensor T(x0..x4) = 1 + x0 + 10 x1 + 100 x2 + 1000 x3 + 10000 x4,
// dims {4, 2, 2, 2, 3}, dense int32.
__global__ void tma_ranks(const h::TensorMap map1, const h::TensorMap map5, std::int32_t* out) {
  __shared__ __align__(128) std::int32_t box1[8];
  __shared__ __align__(128) std::int32_t box5[4 * 1 * 2 * 1 * 2];
  __shared__ std::uint64_t bar;
  h::mbarrier_init(&bar, 1);
  h::mbarrier_expect_tx(&bar, sizeof box1 + sizeof box5);
  h::mbarrier_arrive(&bar);
  const std::int32_t at1[1] = {4};
  const std::int32_t at5[5] = {0, 1, -1, 1, 2};
  h::tma_load(box1, map1, at1, 1, &bar);
  h::tma_load(box5, map5, at5, 5, &bar);
  out[0] = h::mbarrier_test_wait_parity(&bar, 0) ? 1 : 0;
  for (int i = 0; i < 8; ++i) out[1 + i] = box1[i];
  for (int i = 0; i < 16; ++i) out[9 + i] = box5[i];
}

TEST(HopperTma, boxes_of_rank_1_and_5_read_zeros_outside_the_tensor) {
  std::int32_t *t1 = nullptr, *t5 = nullptr, *out = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&t1), 10 * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&t5), 96 * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&out), 25 * 4), cudaSuccess);
  std::vector<std::int32_t> h1(10), h5(96);
  for (int i = 0; i < 10; ++i) h1[i] = 50 + i;
  for (int x4 = 0; x4 < 3; ++x4)
    for (int x3 = 0; x3 < 2; ++x3)
      for (int x2 = 0; x2 < 2; ++x2)
        for (int x1 = 0; x1 < 2; ++x1)
          for (int x0 = 0; x0 < 4; ++x0)
            h5[(((x4 * 2 + x3) * 2 + x2) * 2 + x1) * 4 + x0] =
                1 + x0 + 10 * x1 + 100 * x2 + 1000 * x3 + 10000 * x4;
  ASSERT_EQ(cudaMemcpy(t1, h1.data(), 10 * 4, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(t5, h5.data(), 96 * 4, cudaMemcpyHostToDevice), cudaSuccess);
  h::TensorMap map1{}, map5{};
  const std::uint64_t dim1[1] = {10};
  const std::uint32_t box1[1] = {8}, es1[1] = {1};
  ASSERT_EQ(
      h::encode_tensor_map_tiled(&map1, h::TmaDataType::int32, 1, t1, dim1, nullptr, box1, es1,
                                 h::TmaInterleave::none, h::TmaSwizzle::none, h::TmaOobFill::zeros),
      0);
  const std::uint64_t dim5[5] = {4, 2, 2, 2, 3}, stride5[4] = {16, 32, 64, 128};
  const std::uint32_t box5[5] = {4, 1, 2, 1, 2}, es5[5] = {1, 1, 1, 1, 1};
  ASSERT_EQ(
      h::encode_tensor_map_tiled(&map5, h::TmaDataType::int32, 5, t5, dim5, stride5, box5, es5,
                                 h::TmaInterleave::none, h::TmaSwizzle::none, h::TmaOobFill::zeros),
      0);
  rl::launch(tma_ranks, dim3(1), dim3(1), 0, nullptr, map1, map5, out);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<std::int32_t> got(25);
  ASSERT_EQ(cudaMemcpy(got.data(), out, 25 * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(got[0], 1) << "both boxes' full bytes (32 + 64) completed the phase";
  const std::vector<std::int32_t> row1(got.begin() + 1, got.begin() + 9);
  EXPECT_EQ(row1, (std::vector<std::int32_t>{54, 55, 56, 57, 58, 59, 0, 0}));
  // Box element (j0, j2, j4) (j1 = j3 = 0) is at x = (j0, 1, j2 - 1, 1, 2 + j4):
  // inside only for j2 = 1 (x2 = 0) and j4 = 0 (x4 = 2).
  for (int j4 = 0; j4 < 2; ++j4)
    for (int j2 = 0; j2 < 2; ++j2)
      for (int j0 = 0; j0 < 4; ++j0) {
        const bool inside = j2 == 1 && j4 == 0;
        EXPECT_EQ(got[9 + (j4 * 2 + j2) * 4 + j0], inside ? 1 + j0 + 10 + 1000 + 20000 : 0)
            << j0 << " " << j2 << " " << j4;
      }
  cudaFree(t1);
  cudaFree(t5);
  cudaFree(out);
}

// A TMA store writes the box's elements inside the tensor and nothing
// outside it (the row padding and the cells past the edge keep -1), and only
// once the bulk wait_group covering it has passed; a second box crosses the
// left edge.  `reuse_early` overwrites the source before the wait: the store
// then writes the overwritten values (the emulator reads the source as late
// as the ISA allows, at the wait), so the missing wait.read is visible.
__global__ void tma_store_edges(const h::TensorMap map, const std::int32_t* tensor,
                                std::int32_t* seen, int reuse_early) {
  __shared__ __align__(128) std::int32_t box[2][8];
  for (int i = 0; i < 16; ++i) box[i / 8][i % 8] = 1000 + i;
  const std::int32_t at0[2] = {2, 1}, at1[2] = {-2, 2};
  h::tma_store(map, at0, 2, box[0]);
  h::bulk_commit_group();
  h::tma_store(map, at1, 2, box[1]);
  h::bulk_commit_group();
  if (reuse_early != 0)
    for (int i = 0; i < 16; ++i) box[i / 8][i % 8] = -7;
  seen[0] = tensor[1 * 8 + 2];  // before any wait: not yet written
  h::bulk_wait_group(1);        // the first box only
  seen[1] = tensor[1 * 8 + 2];
  seen[2] = tensor[2 * 8 + 0];
  h::bulk_wait_group(0);
}

TEST(HopperTma, a_store_writes_only_inside_the_tensor_and_only_by_the_covering_wait) {
  std::int32_t *tensor = nullptr, *seen = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&tensor), 3 * 8 * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&seen), 3 * 4), cudaSuccess);
  const h::TensorMap map = edge_map(tensor);
  for (int reuse_early : {0, 1}) {
    SCOPED_TRACE(reuse_early);
    const std::vector<std::int32_t> minus(3 * 8, -1);
    ASSERT_EQ(cudaMemcpy(tensor, minus.data(), 3 * 8 * 4, cudaMemcpyHostToDevice), cudaSuccess);
    rl::launch(tma_store_edges, dim3(1), dim3(1), 0, nullptr, map, tensor, seen, reuse_early);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<std::int32_t> got(3 * 8), s(3);
    ASSERT_EQ(cudaMemcpy(got.data(), tensor, got.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(s.data(), seen, 3 * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    const std::int32_t v = reuse_early != 0 ? -7 : 0;  // 0: use the box values below
    auto at = [&](std::int32_t value) { return reuse_early != 0 ? v : value; };
    // Box 0 at (col 2, row 1), 4 x 2: cols 2..4 inside (col 5 is outside), rows 1..2.
    // Box 1 at (col -2, row 2): cols 0..1 of row 2 inside (box cols 2, 3); row 3 outside.
    const std::vector<std::int32_t> expected = {
        -1,       -1,       -1,       -1,       -1,       -1, -1, -1,   // row 0 untouched
        -1,       -1,       at(1000), at(1001), at(1002), -1, -1, -1,   // row 1
        at(1010), at(1011), at(1004), at(1005), at(1006), -1, -1, -1};  // row 2
    EXPECT_EQ(got, expected);
    EXPECT_EQ(s[0], -1) << "written before its wait";
    EXPECT_EQ(s[1], at(1000));
    EXPECT_EQ(s[2], -1) << "box 1 written by wait_group 1, which only covers box 0";
  }
  cudaFree(tensor);
  cudaFree(seen);
}

// A 128B-swizzled box stored back through the same swizzle lands where it
// came from: load then store copies the tensor exactly.
__global__ void tma_swizzle_round_trip(const h::TensorMap from, const h::TensorMap to) {
  __shared__ __align__(1024) std::uint16_t box[8 * 64];
  __shared__ std::uint64_t bar;
  h::mbarrier_init(&bar, 1);
  h::mbarrier_expect_tx(&bar, sizeof box);
  h::mbarrier_arrive(&bar);
  const std::int32_t at[2] = {0, 0};
  h::tma_load(box, from, at, 2, &bar);
  h::tma_store(to, at, 2, box);
  h::bulk_commit_group();
  h::bulk_wait_group(0);
}

TEST(HopperTma, a_swizzled_store_undoes_the_swizzled_load) {
  std::uint16_t *a = nullptr, *b = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&a), 8 * 64 * 2), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&b), 8 * 64 * 2), cudaSuccess);
  std::vector<std::uint16_t> host(8 * 64);
  for (int i = 0; i < 8 * 64; ++i) host[i] = static_cast<std::uint16_t>(3 * i + 1);
  ASSERT_EQ(cudaMemcpy(a, host.data(), host.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemset(b, 0, host.size() * 2), cudaSuccess);
  h::TensorMap ma{}, mb{};
  const std::uint64_t dims[2] = {64, 8}, strides[1] = {128};
  const std::uint32_t box[2] = {64, 8}, es[2] = {1, 1};
  for (auto [map, ptr] : {std::pair{&ma, a}, std::pair{&mb, b}})
    ASSERT_EQ(h::encode_tensor_map_tiled(map, h::TmaDataType::bfloat16, 2, ptr, dims, strides, box,
                                         es, h::TmaInterleave::none, h::TmaSwizzle::b128,
                                         h::TmaOobFill::zeros),
              0);
  rl::launch(tma_swizzle_round_trip, dim3(1), dim3(1), 0, nullptr, ma, mb);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<std::uint16_t> got(8 * 64);
  ASSERT_EQ(cudaMemcpy(got.data(), b, got.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(got, host);
  cudaFree(a);
  cudaFree(b);
}

// ------------------------------------------------------------- cp.async.bulk

// Non-tensor bulk copies: global -> shared completes its bytes on the
// mbarrier; shared -> global waits for its bulk group, and a store still
// pending when the thread exits is performed then.
__global__ void bulk_copies(const std::int32_t* in, std::int32_t* out, std::int32_t* seen) {
  __shared__ __align__(16) std::int32_t stage[16];
  __shared__ std::uint64_t bar;
  h::mbarrier_init(&bar, 1);
  h::mbarrier_expect_tx(&bar, 64);
  h::mbarrier_arrive(&bar);
  seen[0] = h::mbarrier_test_wait_parity(&bar, 0) ? 1 : 0;
  h::bulk_load(stage, in, 64, &bar);
  seen[1] = h::mbarrier_test_wait_parity(&bar, 0) ? 1 : 0;
  for (int i = 0; i < 16; ++i) stage[i] *= 2;
  h::bulk_store(out, stage, 32);
  h::bulk_commit_group();
  seen[2] = out[0];
  h::bulk_wait_group(0);
  seen[3] = out[0];
  h::bulk_store(out + 8, stage + 8, 32);  // never waited for: performed at exit
}

TEST(HopperBulk, copies_complete_on_the_mbarrier_and_at_the_bulk_wait_or_thread_exit) {
  std::int32_t *in = nullptr, *out = nullptr, *seen = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&in), 64), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&out), 64), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&seen), 16), cudaSuccess);
  std::vector<std::int32_t> host(16);
  for (int i = 0; i < 16; ++i) host[i] = i + 1;
  ASSERT_EQ(cudaMemcpy(in, host.data(), 64, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemset(out, 0, 64), cudaSuccess);
  rl::launch(bulk_copies, dim3(1), dim3(1), 0, nullptr, in, out, seen);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<std::int32_t> got(16), s(4);
  ASSERT_EQ(cudaMemcpy(got.data(), out, 64, cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(s.data(), seen, 16, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(s, (std::vector<std::int32_t>{0, 1, 0, 2}));
  for (int i = 0; i < 16; ++i) EXPECT_EQ(got[i], 2 * (i + 1)) << i;
  cudaFree(in);
  cudaFree(out);
  cudaFree(seen);
}

__global__ void bulk_misaligned(const unsigned char* in) {
  __shared__ __align__(16) unsigned char stage[64];
  __shared__ std::uint64_t bar;
  h::mbarrier_init(&bar, 1);
  h::bulk_load(stage, in, 24, &bar);
}

TEST(HopperBulk, a_size_not_a_multiple_of_16_fails_the_launch) {
  unsigned char* in = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&in), 64), cudaSuccess);
  const std::string err = stderr_of_failed_launch(
      [&] { rl::launch(bulk_misaligned, dim3(1), dim3(1), 0, nullptr, in); });
  EXPECT_NE(err.find("size 24 is not a positive multiple of 16"), std::string::npos) << err;
  cudaFree(in);
}

}  // namespace
