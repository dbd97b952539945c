// Compiles every rl::ptx narrow-float cvt wrapper (rl/ptx_cvt_narrow.hpp) for
// the architectures that have them and for one that has none, so ptxas checks
// each instruction string and operand constraint, and the guards that keep the
// Blackwell forms out of older targets.  Nothing runs this kernel.
#include "rl/cuda.hpp"
#include "rl/ptx_cvt_narrow.hpp"

__global__ void rl_ptx_cvt_narrow_compile_check(unsigned* out, const float* in) {
  const float a = in[threadIdx.x];
  const float b = in[threadIdx.x + 32];
  unsigned packed = rl::ptx::cvt_rn_e4m3x2_f32(a, b);
  packed ^= rl::ptx::cvt_rn_e5m2x2_f32(a, b);
  packed ^= rl::ptx::cvt_rn_e2m3x2_f32(a, b);
  packed ^= rl::ptx::cvt_rn_e3m2x2_f32(a, b);
  packed ^= rl::ptx::cvt_rn_e2m1x2_f32(a, b);
  packed ^= rl::ptx::cvt_rz_ue8m0x2_f32(a, b);
  packed ^= rl::ptx::cvt_rp_ue8m0x2_f32(a, b);
  out[threadIdx.x] = packed;
}
