// Shared-memory (L1/shared) bandwidth ceiling: smem.read, the level above L2
// in the hierarchy view (`roofline plot --view hierarchy`, docs/roofline.md).
//
// The idea: one resident wave of blocks (enough CTAs per SM to fill it), each
// fills a kWords-float4 (8 KiB) shared array once, then every warp reads it
// with 128-bit loads (ld.shared.v4.f32, LDS.128), kUnroll independent loads a
// trip.  A warp's 32 lanes read 32 consecutive float4s, 512 bytes starting on
// a multiple of 32 words: each quarter-warp phase covers all 32 banks once,
// so no load is bank-conflicted.  The offset moves on by one warp's worth (32
// float4s) every trip, so a load's address depends on the trip and the
// compiler cannot hoist the loads out of the loop (at a fixed offset every
// trip would read the same unchanged words).
//
// The check is exact: the words are small integers (stream_pattern, 1..15,
// shifted by the block so that blocks differ), each thread sums what it read
// lane by lane in fp32 and writes the sum; sums stay below 2^24 (kMaxIters),
// so the host's reference, worked out from the 16-trip period of the offset,
// is exact.  A missing, extra or misplaced load changes the output.
//
// Bytes, by the cost-model convention (docs/architecture.md):
//   bytes_model = threads x iters x kUnroll x 16: the shared-memory bytes the
//                 loads read, which is what smem.read measures (a memory
//                 ceiling's value is bytes_model / time);
//   bytes_min   = threads x 4: the compulsory DRAM traffic, the one float each
//                 thread writes (the fill is computed, not read from memory).
// FLOPs: the one add per float read.  No derived peak: the model derives
// peaks for compute units only, and a datasheet rarely states this one.
#include "ceilings/stream_pattern.hpp"
#include "rl/cuda.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "ceilings/support.hpp"
#include "rl/device_buffer.hpp"
#include "rl/registry.hpp"

#include <array>
#include <memory>
#include <vector>
#endif

#include <cstddef>
#include <cstdint>

namespace rl::ceilings {
namespace {

constexpr int kUnroll = 4;        // independent LDS.128 a trip
constexpr unsigned kWords = 512;  // float4s in a block's array: 8 KiB
constexpr unsigned kStep = 32;    // float4s the offset moves on a trip: one warp's worth

}  // namespace

// Word w of block b's array, lane c: the pattern shifted by 7 a block, so an
// output written by the wrong block differs.
__host__ __device__ inline float smem_word(unsigned block, unsigned w, unsigned c,
                                           std::uint64_t seed) {
  return stream_pattern(std::uint64_t{4} * w + c + 7u * block, seed);
}

// Kernels outside the anonymous namespace: their mangled names then carry
// them as plain identifiers (the static checks match on those).
// The SASS (nvcc 13.0, sm_80, 89, 90a, 100a, 120): nvcc unrolls the trip loop
// 4x, so the hot loop is 16 LDS.128 and their 64 FADDs in 139 instructions
// (the rest: addresses, offset, trip count), no local memory.  That is 8.7
// issue slots a load; a warp's LDS.128 (512 B at 128 B a clock per SM) takes
// 4 clocks, in which the SM's four schedulers issue 16.
// rl-static: kernel=smem_read_lds128 max_regs=48 max_smem=8192 sass=LDS.128,STS.128
// rl-static: kernel=smem_read_lds128 loop_ratio=FADD/LDS.128==4
// rl-static: kernel=smem_read_lds128 loop_share=LDS.128:11
// rl-static: kernel=fill_stream_pattern max_regs=32 max_smem=0
__global__ void smem_read_lds128(int iters, std::uint64_t seed, float* __restrict__ out) {
  __shared__ float4 words[kWords];
  for (unsigned w = threadIdx.x; w < kWords; w += blockDim.x)
    words[w] = make_float4(smem_word(blockIdx.x, w, 0, seed), smem_word(blockIdx.x, w, 1, seed),
                           smem_word(blockIdx.x, w, 2, seed), smem_word(blockIdx.x, w, 3, seed));
  __syncthreads();
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  unsigned offset = 0;
  for (int it = 0; it < iters; ++it) {
    float4 v[kUnroll];
    for (int u = 0; u < kUnroll; ++u)
      v[u] = words[(threadIdx.x + static_cast<unsigned>(u) * blockDim.x + offset) % kWords];
    for (int u = 0; u < kUnroll; ++u) add_lanes(acc, v[u]);
    offset = (offset + kStep) % kWords;
  }
  out[std::size_t{blockIdx.x} * blockDim.x + threadIdx.x] = lane_sum(acc);
}

#if !defined(__CUDA_ARCH__)
namespace {

constexpr int kSmemBlock = 256;
// Each lane sums at most 15 x 4 x iters and a thread's four lanes are added:
// 60 x 4 x iters < 2^24 keeps every sum exact in fp32.
constexpr std::int64_t kMaxIters = 65536;
// About a millisecond on a large GPU at the large preset (H100: 132 SMs x
// 2048 threads x 2048 trips x 64 B = 35 GB at some 30 TB/s), in whole
// 16-trip periods of the offset.
constexpr std::int64_t kLargeIters = 2048;

std::vector<Shape> smem_shapes(SizePreset preset) {
  return loop_shapes(preset, one_wave_blocks(smem_read_lds128, kSmemBlock, 1024), kSmemBlock,
                     kLargeIters);
}

roofline::Cost smem_cost(const Shape& shape) {
  const LoopShape s = parse_loop_shape(shape, kMaxIters);
  const double threads = static_cast<double>(s.blocks) * static_cast<double>(s.threads);
  const double loads = threads * kUnroll * static_cast<double>(s.iters);
  return {.flops = 4 * loads,
          .bytes_min = threads * sizeof(float),
          .bytes_model = loads * 16,
          .unit = roofline::ComputeUnit::fp32};
}

class SmemRead final : public Workload {
 public:
  SmemRead(const LoopShape& shape, std::uint64_t seed)
      : shape_(shape), seed_(seed), out_(static_cast<std::size_t>(shape.blocks * shape.threads)) {}

  void run(cudaStream_t stream) override {
    rl::launch(smem_read_lds128, dim3(static_cast<unsigned>(shape_.blocks)),
               dim3(static_cast<unsigned>(shape_.threads)), 0, stream,
               static_cast<int>(shape_.iters), seed_, out_.get());
  }

  Validation validate(cudaStream_t stream) override {
    // The offset repeats every kPeriod trips, so a thread's sum is
    // (whole periods) x (one period's sum) + the first (iters % kPeriod)
    // trips.  Blocks repeat every 15 (the pattern's period).
    constexpr unsigned kPeriod = kWords / kStep;
    const auto threads = static_cast<unsigned>(shape_.threads);
    const std::int64_t periods = shape_.iters / kPeriod;
    const auto rest = static_cast<unsigned>(shape_.iters % kPeriod);
    std::array<std::vector<double>, 15> expected;  // by block % 15, then thread
    for (unsigned b = 0; b < 15 && b < shape_.blocks; ++b) {
      expected[b].resize(threads);
      for (unsigned t = 0; t < threads; ++t) {
        double period = 0, head = 0;
        for (unsigned trip = 0; trip < kPeriod; ++trip)
          for (unsigned u = 0; u < kUnroll; ++u) {
            const unsigned w = (t + u * threads + trip * kStep) % kWords;
            double word = 0;
            for (unsigned c = 0; c < 4; ++c) word += smem_word(b, w, c, seed_);
            period += word;
            if (trip < rest) head += word;
          }
        expected[b][t] = static_cast<double>(periods) * period + head;
      }
    }
    return run_and_compare_exact(*this, out_, stream, [&](std::size_t i) {
      return expected[(i / threads) % 15][i % threads];
    });
  }

 private:
  LoopShape shape_;
  std::uint64_t seed_;
  DeviceBuffer<float> out_;
};

}  // namespace

// Only drawn in the hierarchy view: roof_of judges kernels against the hbm.*
// and l2.* ceilings, never this one.
RL_REGISTER_KERNEL(KernelRecord{
    .name = "smem_read_lds128",
    .family = "ceilings",
    .variant = "smem_read",
    .precision = roofline::Precision::fp32,
    .unit = roofline::ComputeUnit::fp32,
    .baseline = "",
    .ceiling = "smem.read",
    .gpu_only = false,
    .min_cc = 0,
    .shapes = smem_shapes,
    .cost = smem_cost,
    .make_workload = [](const Shape& shape, std::uint64_t seed) -> std::unique_ptr<Workload> {
      return std::make_unique<SmemRead>(parse_loop_shape(shape, kMaxIters), seed);
    },
});
#endif  // !__CUDA_ARCH__

}  // namespace rl::ceilings
