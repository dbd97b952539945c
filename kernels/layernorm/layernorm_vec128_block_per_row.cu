// LayerNorm layernorm_vec128_block_per_row_*: its baseline
// layernorm_block_per_row_* (a block of 512 threads per row, three sweeps over
// the row) with 128-bit accesses.
//
// The one idea against layernorm_block_per_row_*: each thread moves 16-byte
// chunks (LDG.E.128: 4 floats or 8 bf16) of x, weight and bias and stores y the
// same way, so a quarter (fp32) or an eighth (bf16) of the memory instructions
// carry the same bytes.  The row is still swept three times (mean, centred
// variance, normalisation), the re-reads served by cache while the rows in
// flight fit; layernorm_vec128_rowcached_* then holds the row in registers
// instead.  Unlike layernorm_block_per_row_* it runs at every C of the large
// preset, so layernorm_vec128_rowcached_*'s arrow has a baseline at each shape
// (at C = 768 fp32 a row is 192 chunks: 320 of the 512 threads idle).  A row
// whose start is not 16-byte aligned (C not a multiple of the vector width) and
// the ragged end of a row use scalar accesses.
#include "layernorm/layernorm_device.hpp"
#include "layernorm/layernorm_launch.hpp"
#include "rl/device_instances.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "layernorm/layernorm_cost.hpp"
#include "layernorm/layernorm_workload.hpp"
#endif

namespace rl::layernorm {

constexpr int kVec128RowThreads = 512;

// rl-static: kernel=layernorm_vec128_block_per_row max_regs=64 max_smem=128
// rl-static: kernel=layernorm_vec128_block_per_row sass=LDG.E.128,STG.E.128
template <typename T>
__global__ void __launch_bounds__(kVec128RowThreads)
    layernorm_vec128_block_per_row(T* __restrict__ y, float* __restrict__ mean,
                                   float* __restrict__ rstd, const T* __restrict__ x,
                                   const T* __restrict__ weight, const T* __restrict__ bias,
                                   int C) {
  constexpr int kVec = Packed128<T>::size;
  constexpr int kStride = kVec128RowThreads * kVec;
  __shared__ float scratch[32];
  const int row = static_cast<int>(blockIdx.x);
  const int first = static_cast<int>(threadIdx.x) * kVec;
  const T* xr = x + static_cast<std::int64_t>(row) * C;
  T* yr = y + static_cast<std::int64_t>(row) * C;
  const bool aligned = C % kVec == 0;  // then every row starts 16-byte aligned

  float sum = 0.0f;
  for (int e = first; e < C; e += kStride) {
    const Packed128<T> v = load_chunk(xr, e, C, aligned);  // zero past the end of the row
    for (int j = 0; j < kVec; ++j) sum += to_f32(v[j]);
  }
  const float m = block_sum(sum, scratch) / static_cast<float>(C);

  float var = 0.0f;
  for (int e = first; e < C; e += kStride) {
    const Packed128<T> v = load_chunk(xr, e, C, aligned);
    for (int j = 0; j < kVec; ++j) {
      const float d = e + j < C ? to_f32(v[j]) - m : 0.0f;
      var += d * d;
    }
  }
  const float s = rsqrtf(block_sum(var, scratch) / static_cast<float>(C) + kEps);

  for (int e = first; e < C; e += kStride) {
    const Packed128<T> v = load_chunk(xr, e, C, aligned);
    const Packed128<T> w = load_chunk(weight, e, C, aligned);
    const Packed128<T> b = load_chunk(bias, e, C, aligned);
    Packed128<T> out;
    for (int j = 0; j < kVec; ++j)
      out[j] = from_f32<T>((to_f32(v[j]) - m) * s * to_f32(w[j]) + to_f32(b[j]));
    store_chunk(yr, e, C, aligned, out);
  }
  if (threadIdx.x == 0) {
    mean[row] = m;
    rstd[row] = s;
  }
}

template <typename T>
void launch_layernorm_vec128_block_per_row(const Args<T>& a, cudaStream_t stream) {
  rl::launch(layernorm_vec128_block_per_row<T>, dim3(static_cast<unsigned>(a.rows)),
             dim3(kVec128RowThreads), 0, stream, a.y, a.mean, a.rstd, a.x, a.weight, a.bias, a.C);
}

RL_DEVICE_INSTANCES(&launch_layernorm_vec128_block_per_row<float>,
                    &launch_layernorm_vec128_block_per_row<__nv_bfloat16>);

#if !defined(__CUDA_ARCH__)
// Cost model: three sweeps by 512 threads per row, as layernorm_block_per_row_*.
double bytes_model_vec128_block_per_row(const Dims& d) {
  return x_read_bytes(d, 3, kVec128RowThreads) + bytes_except_x(d);
}

RL_REGISTER_KERNEL(make_record<float>({.name = "layernorm_vec128_block_per_row_f32",
                                       .variant = "vec128_block_per_row",
                                       .baseline = "layernorm_block_per_row_f32",
                                       .launcher = &launch_layernorm_vec128_block_per_row<float>,
                                       .bytes_model = &bytes_model_vec128_block_per_row,
                                       .idea = "128-bit loads and stores"}));
RL_REGISTER_KERNEL(
    make_record<__nv_bfloat16>({.name = "layernorm_vec128_block_per_row_bf16",
                                .variant = "vec128_block_per_row",
                                .baseline = "layernorm_block_per_row_bf16",
                                .launcher = &launch_layernorm_vec128_block_per_row<__nv_bfloat16>,
                                .bytes_model = &bytes_model_vec128_block_per_row,
                                .idea = "128-bit loads and stores"}));
#endif  // !__CUDA_ARCH__

}  // namespace rl::layernorm
