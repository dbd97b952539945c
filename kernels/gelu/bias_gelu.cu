// Bias + GELU (tanh form), y[r][c] = gelu(x[r][c] + bias[c]): the epilogue of
// a transformer MLP's first matmul, and the smallest example of fusion on the
// memory-bound side of the roofline.
//
// Two rungs, one kernel template; the only thing that changes is fusion:
//   unfused  two launches, as two framework ops would run: t = x + bias, then
//            y = gelu(t).  The intermediate t goes to DRAM and comes back, so
//            the pair moves (4N + C) elements for the same FLOPs.
//   fused    one launch: the bias is added in registers and GELU applied
//            before the store.  (2N + C) elements: half the traffic, twice the
//            arithmetic intensity.  Both rungs are memory bound, so the fused
//            point moves right on the chart and should run in about half the
//            time: the arrow from unfused to fused is the whole lesson.
// Both use 128-bit loads and stores (4 floats or 8 bf16, fp32 math), so the
// comparison is fusion alone, not vectorisation.  The unfused bf16 pair stores
// t in bf16, as a framework would; both rungs are checked against one float64
// reference, the unfused bf16 pair with that extra rounding in its error
// bound (BiasGeluWorkload::error_bound).
#include "gelu/bias_gelu_launch.hpp"
#include "gelu/gelu_forms.hpp"
#include "gelu/gelu_launch.hpp"
#include "rl/cuda.hpp"
#include "rl/device_instances.hpp"
#include "rl/packed128.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "gelu/bias_gelu.hpp"
#endif

#include <cstdint>

namespace rl::gelu {

// Cost model: rl::gelu::bias_gelu_cost in bias_gelu.hpp (the unfused pair moves
// the intermediate t out and back: (4N + C) elements against the fused (2N + C)).

// Column of element `index` of a row-major [rows][width] matrix is index % width.
// Each thread computes it with one division up front and then advances it by
// its grid stride modulo width (an add and a compare per vector), since a
// 64-bit division per element would cost more instructions than the GELU.
//
// The bias: when width is a multiple of the vector length (kBiasVec), every
// vector of x lies inside one row and starts at a column that is a multiple of
// kVec, so the bias for the whole vector is one 128-bit load at that column
// (16-byte aligned: cudaMalloc'd bias, column % kVec == 0).  Otherwise a
// vector may cross one or more row ends (any width works, even width < kVec)
// and each element gathers its bias with a scalar load and a column wrap,
// about 30 instructions per 16 bytes of bf16 more than one vector load.
//
// Issue cost of the fused kernel (SASS of nvcc 13.0 for sm_90a, hot-loop
// instructions per element written): 128-bit bias 29.3 fp32 (117 per trip of
// 4) and 29.4 bf16 (235 per 8), against 32.8 (131) and 33.3 (266) with the
// per-element bias gather of odd widths; the tanh GELU alone is 26.3 and
// 25.9 (gelu_vec128.cu); sm_100a within 2%.  Budgets about 10% above, per
// 128-bit store, on every architecture:
// rl-static: kernel=bias_gelu_vec128 max_regs=48 max_smem=0 sass=LDG.E.128,STG.E.128
// rl-static: kernel=*bias_gelu_vec128<float,?true,?true,?true>* max_loop_instructions_per_store=129
// rl-static: kernel=*<float,?true,?true,?false>* max_loop_instructions_per_store=145
// rl-static: kernel=*<__nv_bfloat16,?true,?true,?true>* max_loop_instructions_per_store=259
// rl-static: kernel=*<__nv_bfloat16,?true,?true,?false>* max_loop_instructions_per_store=293
template <typename T, bool kAddBias, bool kApplyGelu, bool kBiasVec>
__global__ void bias_gelu_vec128(T* __restrict__ y, const T* __restrict__ x,
                                 const T* __restrict__ bias, std::int64_t n, int width) {
  constexpr int kVec = Packed128<T>::size;
  const std::int64_t n_vec = n / kVec;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  auto finish = [](float v) {
    if constexpr (kApplyGelu) v = gelu_tanh_f32(v);
    return from_f32<T>(v);
  };
  auto apply = [&](float v, int column) {
    if constexpr (kAddBias) v += to_f32(bias[column]);
    return finish(v);
  };
  int column = static_cast<int>((first * kVec) % width);
  const int column_step = static_cast<int>((stride * kVec) % width);
  for (std::int64_t i = first; i < n_vec; i += stride) {
    Packed128<T> v = load128(x + i * kVec);
    if constexpr (kAddBias && kBiasVec) {
      const Packed128<T> b = load128(bias + column);
      for (int j = 0; j < kVec; ++j) v[j] = finish(to_f32(v[j]) + to_f32(b[j]));
    } else {
      for (int j = 0, c = column; j < kVec; ++j) {
        v[j] = apply(to_f32(v[j]), c);
        if (++c == width) c = 0;
      }
    }
    store128(y + i * kVec, v);
    column += column_step;
    if (column >= width) column -= width;
  }
  // The last n % kVec elements, one per thread of the first threads (none
  // when kBiasVec: n is then a multiple of kVec).
  const std::int64_t tail = n_vec * kVec + first;
  if (tail < n) y[tail] = apply(to_f32(x[tail]), static_cast<int>(tail % width));
}

// One pass over the rows x width elements: t = x + bias, y = gelu(t), or both.
template <typename T, bool kAddBias, bool kApplyGelu>
void launch_bias_gelu_pass(const BiasGeluArgs<T>& a, T* out, const T* in, cudaStream_t stream) {
  constexpr int kThreads = 256;
  const std::int64_t n = a.rows * a.width;
  const dim3 grid = grid_stride_grid(n / Packed128<T>::size, kThreads, a.max_blocks);
  const T* bias = kAddBias ? a.bias : nullptr;
  if (kAddBias && bias_loads_are_vectors<T>(a.width))
    rl::launch(bias_gelu_vec128<T, kAddBias, kApplyGelu, true>, grid, dim3(kThreads), 0, stream,
               out, in, bias, n, a.width);
  else
    rl::launch(bias_gelu_vec128<T, kAddBias, kApplyGelu, false>, grid, dim3(kThreads), 0, stream,
               out, in, bias, n, a.width);
}

template <typename T>
void launch_bias_gelu_unfused(const BiasGeluArgs<T>& a, cudaStream_t stream) {
  launch_bias_gelu_pass<T, true, false>(a, a.scratch, a.x, stream);
  launch_bias_gelu_pass<T, false, true>(a, a.y, a.scratch, stream);
}

template <typename T>
void launch_bias_gelu_fused(const BiasGeluArgs<T>& a, cudaStream_t stream) {
  launch_bias_gelu_pass<T, true, true>(a, a.y, a.x, stream);
}

RL_DEVICE_INSTANCES(&launch_bias_gelu_unfused<float>, &launch_bias_gelu_fused<float>,
                    &launch_bias_gelu_unfused<__nv_bfloat16>,
                    &launch_bias_gelu_fused<__nv_bfloat16>);

#if !defined(__CUDA_ARCH__)
template <typename T>
KernelRecord bias_gelu_record(bool fused) {
  // Named like the other ladders' records (gelu_tanh_f32_vec4, layernorm_unfused_bf16).
  // Built by append: GCC 12 at -O2 under TSan reports a false -Warray-bounds
  // for `std::string + "literal"` on a named std::string here.
  const auto named = [](const char* suffix) {
    std::string name = sizeof(T) == 4 ? "bias_gelu_tanh_f32" : "bias_gelu_tanh_bf16";
    return name.append(suffix);
  };
  const std::string unfused_name = named("_unfused");
  return KernelRecord{
      .name = fused ? named("_fused") : unfused_name,
      .family = "bias_gelu",
      .variant = fused ? "fused" : "unfused",
      .precision = precision_of<T>(),
      .unit = roofline::ComputeUnit::fp32,
      .baseline = fused ? unfused_name : "",
      .ceiling = "",
      .gpu_only = false,
      .min_cc = 0,
      .shapes = [](SizePreset preset) { return bias_gelu_shapes(preset, sizeof(T)); },
      .cost = [fused](const Shape& shape) { return bias_gelu_cost(shape, sizeof(T), fused); },
      .make_workload =
          [fused](const Shape& shape, std::uint64_t seed) {
            return std::unique_ptr<Workload>(new BiasGeluWorkload<T>(
                fused ? &launch_bias_gelu_fused<T> : &launch_bias_gelu_unfused<T>, !fused,
                shape.at("rows"), shape.at("C"), seed));
          },
      .device_bytes = {},
      .idea = fused ? "one launch: the bias added in registers, t never written" : "",
      .library = {},
      .refuse_on = {},
      .fuses = fused ? unfused_name : "",
  };
}

RL_REGISTER_KERNEL(bias_gelu_record<float>(false));
RL_REGISTER_KERNEL(bias_gelu_record<float>(true));
RL_REGISTER_KERNEL(bias_gelu_record<__nv_bfloat16>(false));
RL_REGISTER_KERNEL(bias_gelu_record<__nv_bfloat16>(true));
#endif  // !__CUDA_ARCH__

}  // namespace rl::gelu
