// A genuinely misaligned 16-byte vector access in a kernel (an int4 store at
// a float array + 1 element, as a wrong offset in llm.c's store128 would make
// it) is reported as a misaligned address naming kernel, block, thread,
// instruction, address and the alignment it needs, and fails the launch
// with cudaErrorMisalignedAddress, sticky as on a GPU.  On the CPU the access
// is an aligned SSE move that raises a general-protection fault, which Linux
// reports as "SIGSEGV at address (nil)"; emu/src/thread_faults.cpp decodes it.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "rl/cuda.hpp"

namespace {

#if defined(__x86_64__)

// Under the asan preset UBSan checks the alignment of the int4 access first
// and halts with its own report (tests/emu/emu_diagnostics_test.cpp,
// misaligned_float4_dereference_is_reported_by_ubsan); without its check the
// access reaches the CPU, whose fault is what this file tests.
#if defined(__SANITIZE_ADDRESS__)
#define RL_NO_UBSAN_ALIGNMENT_CHECK __attribute__((no_sanitize("alignment")))
#else
#define RL_NO_UBSAN_ALIGNMENT_CHECK
#endif

// Copies four floats per thread with one int4 load and one int4 store
// (movdqa, movaps: objdump -d shows them); thread `bad_thread` of block
// `bad_block` stores one float further on, 4 bytes off 16-byte alignment.
RL_NO_UBSAN_ALIGNMENT_CHECK __global__ void copy_int4_with_one_offset(float* out, const float* in,
                                                                      int bad_block,
                                                                      int bad_thread) {
  const int t = static_cast<int>(threadIdx.x);
  const int i = 4 * (static_cast<int>(blockIdx.x * blockDim.x) + t);
  const int shift = static_cast<int>(blockIdx.x) == bad_block && t == bad_thread ? 1 : 0;
  *reinterpret_cast<int4*>(out + i + shift) = *reinterpret_cast<const int4*>(in + i);
}

constexpr int kThreads = 8;
constexpr int kBlocks = 2;

struct Buffers {
  alignas(16) float in[4 * kThreads * kBlocks + 4] = {};
  alignas(16) float out[4 * kThreads * kBlocks + 4] = {};
};

TEST(MisalignedVectorAccess, fails_the_launch_naming_kernel_block_thread_address_and_alignment) {
  Buffers b;
  testing::internal::CaptureStderr();
  rl::launch(copy_int4_with_one_offset, dim3(kBlocks), dim3(kThreads), 0, nullptr, b.out,
             static_cast<const float*>(b.in), 1, 3);
  const cudaError_t launch = cudaGetLastError();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(launch, cudaErrorMisalignedAddress);
  char address[32];
  std::snprintf(address, sizeof address, "%p", static_cast<void*>(b.out + 4 * (kThreads + 3) + 1));
  const std::string report =
      std::string(
          "rl::emu: kernel (anonymous namespace)::copy_int4_with_one_offset(float*, float "
          "const*, int, int), block (1,0,0), thread (3,0,0): misaligned address: movaps "
          "(16-byte store) address ") +
      address + " is not 16-byte aligned\n";
  EXPECT_EQ(err.substr(0, err.find('\n') + 1), report) << err;
  // Sticky, as on a GPU: the next launch runs nothing and reports it too.
  b.out[0] = -1.0f;
  rl::launch(copy_int4_with_one_offset, dim3(1), dim3(kThreads), 0, nullptr, b.out,
             static_cast<const float*>(b.in), -1, -1);
  EXPECT_EQ(cudaGetLastError(), cudaErrorMisalignedAddress);
  EXPECT_EQ(b.out[0], -1.0f);
  EXPECT_EQ(cudaDeviceReset(), cudaSuccess);
  rl::launch(copy_int4_with_one_offset, dim3(1), dim3(kThreads), 0, nullptr, b.out,
             static_cast<const float*>(b.in), -1, -1);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(b.out[0], 0.0f);
}

// A general-protection fault that is not a misalignment (a non-canonical
// pointer) is described and handed on: the process dies of the signal, or
// of ASan's report under the asan preset.
__global__ void load_through_non_canonical_pointer(int* out, std::uintptr_t address) {
  *out = *reinterpret_cast<volatile int*>(address);
}

TEST(MisalignedVectorAccess, other_general_protection_faults_are_described_and_handed_on) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "ThreadSanitizer's instrumentation maps the wild address to its shadow first, "
                  "and that access faults inside its runtime, not in the kernel";
#endif
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  int out = 0;
  EXPECT_DEATH(rl::launch(load_through_non_canonical_pointer, dim3(1), dim3(1), 0, nullptr, &out,
                          std::uintptr_t{0x8000000000000000}),
               "rl::emu: SIGSEGV in kernel \\(anonymous namespace\\)::"
               "load_through_non_canonical_pointer\\(int\\*, unsigned long\\), block \\(0,0,0\\), "
               "thread \\(0,0,0\\): general-protection fault: .* \\(a non-canonical address\\)");
}

#endif  // __x86_64__

}  // namespace
