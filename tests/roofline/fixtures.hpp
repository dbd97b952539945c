// Results fixtures for the roofline tests.  Every fixture says in its context
// that it is emulator/fixture output: these numbers are test inputs chosen to
// exercise the code, never GPU measurements.
#pragma once

#include "rl/roofline/results.hpp"

#include <string>
#include <vector>

namespace rl::roofline::testing {

// A small, complete results set: memory and compute ceilings, a naive/fused
// pair with the same shape, a failed validation (max_rel_err = +inf, not timed).
Results emulator_fixture();

// The emulator fixture with counters (issue 28), comparisons filled by
// compare_counters: kernel 2 (gemm_bf16_wmma, 256^3) declares bytes_l2_load,
// bytes_l2_store and tensor_ops and the emulator's counts equal them; kernel 1
// (gelu_tanh_f32_fused_vec4) declares L2 bytes the counts exceed by a quarter
// on loads (a wrong model); kernel 0 carries CUPTI's refusal (no profiling
// permission).  Invented inputs, never GPU counts.
Results counters_fixture();

// Many kernels at nearly the same intensity and rate: labels must not overlap.
Results crowded_fixture(int kernel_count);

// A timed kernel (family gelu, shape n=2^20, validated) with exactly these
// samples; median (the mean of the middle two for an even count), min, max and
// stddev come from them.
KernelResult kernel_with_samples(const std::string& name, std::vector<double> samples);

// A timed kernel whose samples are `median` * (1 + spread * k) for k in
// {-2..2} (repeated), for compare tests.
KernelResult timed_kernel(const std::string& name, double median, double spread, int repetitions);

}  // namespace rl::roofline::testing
