// Inline PTX cannot run on the emulator: built with rl_emu_cuda_executable,
// this file must fail to compile with one line naming the instruction, at
// the asm statement's own line (a ctest builds it and checks the message).
// The asm in the branch the preprocessor leaves out must not matter.
__device__ unsigned shared_address(const void* p) {
  unsigned address;
#if defined(__CUDA_ARCH__)
  asm("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }" : "=r"(address) : "l"(p));
#else
  address = static_cast<unsigned>(reinterpret_cast<unsigned long>(p));
#endif
  return address;
}

__global__ void copy16(float* dst, const float* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(shared_address(dst)), "l"(src));
}

int main() {
  copy16<<<1, 1>>>(nullptr, nullptr);
}
