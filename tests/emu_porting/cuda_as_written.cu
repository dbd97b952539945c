// CUDA as people write it, in one file, built with rl_emu_cuda_executable and
// checked exactly: launches with two, three and four configuration arguments,
// over several lines and inside a macro; a kernel template launched with and
// without its template arguments (deduced from the call, as nvcc does);
// extern __shared__ arrays of one and two dimensions, in a kernel and at
// namespace scope; __launch_bounds__, __restrict__ and a compiler barrier.
#include <cstdio>
#include <vector>

extern __shared__ int file_scope_shared[];

#define LAUNCH_FILL(kernel, grid, block, out, value) kernel<<<grid, block>>>(out, value)

template <typename T>
__global__ void __launch_bounds__(64) fill(T* __restrict__ out, T value) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = value;
}

template <int Columns>
__global__ void transpose_through_shared(const float* in, float* out, int rows) {
  extern __shared__ __align__(16) float tile[][Columns + 1];  // +1: no bank conflicts
  const int r = threadIdx.y, c = threadIdx.x;
  tile[r][c] = in[r * Columns + c];
  asm volatile("" ::: "memory");
  __syncthreads();
  out[c * rows + r] = tile[r][c];
}

__global__ void reverse_block(int* data) {
  const int i = threadIdx.x, n = blockDim.x;
  file_scope_shared[i] = data[blockIdx.x * n + i];
  __syncthreads();
  data[blockIdx.x * n + i] = file_scope_shared[n - 1 - i];
}

int main() {
  int failed = 0;
  float* f;
  double* d;
  cudaMalloc(&f, 128 * sizeof(float));
  cudaMalloc(&d, 64 * sizeof(double));
  fill<<<2, 64>>>(f, 1.5f);                // deduced: T = float
  fill<double><<<1, 64, 0>>>(d, 2.25);     // explicit
  LAUNCH_FILL(fill, 1, 32, f + 64, 3.0f);  // in a macro, deduced
  std::vector<float> hf(128);
  std::vector<double> hd(64);
  cudaMemcpy(hf.data(), f, hf.size() * sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(hd.data(), d, hd.size() * sizeof(double), cudaMemcpyDeviceToHost);
  for (int i = 0; i < 128; ++i) failed += hf[i] != (i >= 64 && i < 96 ? 3.0f : 1.5f);
  for (double x : hd) failed += x != 2.25;

  const int rows = 8;
  constexpr int kColumns = 12;
  std::vector<float> in(rows * kColumns), out(rows * kColumns);
  for (int i = 0; i < rows * kColumns; ++i) in[i] = static_cast<float>(i);
  float *d_in, *d_out;
  cudaMalloc(&d_in, in.size() * sizeof(float));
  cudaMalloc(&d_out, out.size() * sizeof(float));
  cudaMemcpy(d_in, in.data(), in.size() * sizeof(float), cudaMemcpyHostToDevice);
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  transpose_through_shared<kColumns>
      <<<1, dim3(kColumns, rows), rows*(kColumns + 1) * sizeof(float), stream>>>(d_in, d_out, rows);
  cudaStreamSynchronize(stream);
  cudaMemcpy(out.data(), d_out, out.size() * sizeof(float), cudaMemcpyDeviceToHost);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < kColumns; ++c) failed += out[c * rows + r] != in[r * kColumns + c];

  std::vector<int> data(3 * 40);
  for (int i = 0; i < 120; ++i) data[i] = i;
  int* d_data;
  cudaMalloc(&d_data, data.size() * sizeof(int));
  cudaMemcpy(d_data, data.data(), data.size() * sizeof(int), cudaMemcpyHostToDevice);
  reverse_block<<<3, 40, 40 * sizeof(int)>>>(d_data);
  cudaMemcpy(data.data(), d_data, data.size() * sizeof(int), cudaMemcpyDeviceToHost);
  for (int b = 0; b < 3; ++b)
    for (int i = 0; i < 40; ++i) failed += data[b * 40 + i] != b * 40 + 39 - i;

  for (void* p : {static_cast<void*>(f), static_cast<void*>(d), static_cast<void*>(d_in),
                  static_cast<void*>(d_out), static_cast<void*>(d_data)})
    cudaFree(p);
  cudaStreamDestroy(stream);
  failed += cudaGetLastError() != cudaSuccess;
  std::printf("cuda_as_written: %s\n", failed == 0 ? "all checks passed" : "checks FAILED");
  return failed == 0 ? 0 : 1;
}
