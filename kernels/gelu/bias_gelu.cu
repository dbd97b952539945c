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
// t in bf16, as a framework would; that extra rounding stays well inside the
// bf16 tolerance, so both rungs are checked against one float64 reference.
#include "gelu/bias_gelu.hpp"

namespace rl::gelu {

// Cost model: rl::gelu::bias_gelu_cost in bias_gelu.hpp (the unfused pair moves
// the intermediate t out and back: (4N + C) elements against the fused (2N + C)).

// Column of element `index` of a row-major [rows][width] matrix is index % width.
// Each thread computes it with one division up front and then advances it by
// its grid stride modulo width (an add and a compare per vector), since a
// 64-bit division per element would cost more instructions than the GELU.
//
// rl-static: kernel=bias_gelu_vec128 max_regs=48 max_smem=0 sass=LDG.E.128,STG.E.128
template <typename T, bool kAddBias, bool kApplyGelu>
__global__ void bias_gelu_vec128(T* __restrict__ y, const T* __restrict__ x,
                                 const T* __restrict__ bias, std::int64_t n, int width) {
  constexpr int kVec = Packed128<T>::size;
  const std::int64_t n_vec = n / kVec;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  auto apply = [&](float v, int column) {
    if constexpr (kAddBias) v += to_f32(bias[column]);
    if constexpr (kApplyGelu) v = gelu_tanh_f32(v);
    return from_f32<T>(v);
  };
  int column = static_cast<int>((first * kVec) % width);
  const int column_step = static_cast<int>((stride * kVec) % width);
  for (std::int64_t i = first; i < n_vec; i += stride) {
    Packed128<T> v = load128(x + i * kVec);
    // A vector can cross one or more row ends (any width works, even width < kVec).
    for (int j = 0, c = column; j < kVec; ++j) {
      v[j] = apply(to_f32(v[j]), c);
      if (++c == width) c = 0;
    }
    store128(y + i * kVec, v);
    column += column_step;
    if (column >= width) column -= width;
  }
  // The last n % kVec elements, one per thread of the first threads.
  const std::int64_t tail = n_vec * kVec + first;
  if (tail < n) y[tail] = apply(to_f32(x[tail]), static_cast<int>(tail % width));
}

// One pass over the rows x width elements: t = x + bias, y = gelu(t), or both.
template <typename T, bool kAddBias, bool kApplyGelu>
void launch_bias_gelu_pass(const BiasGeluArgs<T>& a, T* out, const T* in, cudaStream_t stream) {
  constexpr int kThreads = 256;
  const std::int64_t n = a.rows * a.width;
  rl::launch(bias_gelu_vec128<T, kAddBias, kApplyGelu>,
             grid_stride_grid(n / Packed128<T>::size, kThreads, a.max_blocks), dim3(kThreads), 0,
             stream, out, in, kAddBias ? a.bias : nullptr, n, a.width);
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

template <typename T>
KernelRecord bias_gelu_record(bool fused) {
  const std::string precision = precision_name<T>();
  // Named like the other ladders' records (gelu_tanh_f32_vec4, layernorm_unfused_bf16).
  const std::string stem = std::string("bias_gelu_tanh_") + (sizeof(T) == 4 ? "f32" : "bf16");
  const std::string unfused_name = stem + "_unfused";
  return KernelRecord{
      .name = fused ? stem + "_fused" : unfused_name,
      .family = "bias_gelu",
      .variant = fused ? "fused" : "unfused",
      .precision = precision,
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
  };
}

RL_REGISTER_KERNEL(bias_gelu_record<float>(false));
RL_REGISTER_KERNEL(bias_gelu_record<float>(true));
RL_REGISTER_KERNEL(bias_gelu_record<__nv_bfloat16>(false));
RL_REGISTER_KERNEL(bias_gelu_record<__nv_bfloat16>(true));

}  // namespace rl::gelu
