#include "fixtures.hpp"

#include "rl/roofline/counter_agreement.hpp"
#include "rl/roofline/model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rl::roofline::testing {

namespace {

Context fixture_context() {
  Context c;
  c.backend = Backend::emulator;
  c.device.name = "CPU emulator (test fixture, not GPU data)";
  c.device.uuid = "";
  c.device.compute_capability = "8.0";
  c.device.sm_count = 4;
  c.device.l2_bytes = 4 << 20;
  c.device.memory_bytes = std::int64_t{1} << 30;
  c.driver_version = "";
  c.cuda_runtime_version = "emulated";
  c.library_versions = {{"benchmark", "1.7.1"}};
  c.nvml_available = false;
  c.nvml_note = "emulator: no NVML";
  c.host = "fixture-host";
  c.timestamp_utc = "2026-11-21T00:00:00Z";
  c.git_commit = "fixture";
  c.size_preset = "small";
  return c;
}

Ceiling ceiling(std::string name, std::string kind, double value) {
  Ceiling c;
  c.name = std::move(name);
  c.kind = kind;
  c.value = value;
  c.best = value * 1.02;
  c.unit = kind == "memory" ? "B/s" : "FLOP/s";
  c.method = "test fixture (not a measurement)";
  return c;
}

}  // namespace

KernelResult kernel_with_samples(const std::string& name, std::vector<double> samples) {
  KernelResult k;
  k.name = name;
  k.family = "gelu";
  k.variant = name;
  k.precision = Precision::fp32;
  k.unit = ComputeUnit::fp32;
  k.shape = {{"n", 1 << 20}};
  k.flops = 8.0 * (1 << 20);
  k.bytes_min = k.bytes_model = 8.0 * (1 << 20);
  k.intensity = k.flops / k.bytes_model;
  k.validated = true;
  k.status = Status::ok;
  TimeStats t;
  t.samples = std::move(samples);
  auto sorted = t.samples;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  t.median = n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  t.min = sorted.front();
  t.max = sorted.back();
  double mean = 0;
  for (double s : sorted) mean += s / static_cast<double>(n);
  for (double s : sorted) t.stddev += (s - mean) * (s - mean) / static_cast<double>(n);
  t.stddev = std::sqrt(t.stddev);
  t.repetitions = static_cast<int>(n);
  k.time_s = t;
  k.achieved_flops_per_s = k.flops / t.median;
  k.achieved_bytes_per_s = k.bytes_model / t.median;
  return k;
}

KernelResult timed_kernel(const std::string& name, double median, double spread, int repetitions) {
  std::vector<double> samples;
  for (int i = 0; i < repetitions; ++i)
    samples.push_back(median * (1.0 + spread * static_cast<double>(i % 5 - 2)));
  return kernel_with_samples(name, std::move(samples));
}

Results emulator_fixture() {
  Results r;
  r.context = fixture_context();
  r.ceilings = {ceiling("hbm.copy", "memory", 2.0e9), ceiling("l2.read", "memory", 6.0e9),
                ceiling("fp32.fma", "compute", 4.0e9), ceiling("tc.bf16", "compute", 1.6e10)};

  KernelResult naive = timed_kernel("gelu_tanh_f32_naive", 2.0e-2, 0.01, 10);
  naive.variant = "naive";
  naive.bytes_model = 3 * naive.bytes_min;  // writes and re-reads an intermediate
  naive.intensity = naive.flops / naive.bytes_model;
  naive.achieved_bytes_per_s = naive.bytes_model / naive.time_s->median;
  KernelResult fused = timed_kernel("gelu_tanh_f32_fused_vec4", 6.0e-3, 0.01, 10);
  fused.variant = "fused_vec4";
  fused.baseline = naive.name;

  KernelResult gemm = timed_kernel("gemm_bf16_wmma", 4.0e-3, 0.02, 10);
  gemm.family = "gemm";
  gemm.variant = "wmma";
  gemm.precision = Precision::bf16;
  gemm.unit = ComputeUnit::tc_bf16;
  gemm.shape = {{"m", 256}, {"n", 256}, {"k", 256}};
  gemm.flops = 2.0 * 256 * 256 * 256;
  gemm.bytes_min = gemm.bytes_model = 3.0 * 256 * 256 * 2;
  gemm.intensity = gemm.flops / gemm.bytes_model;
  gemm.achieved_flops_per_s = gemm.flops / gemm.time_s->median;
  gemm.achieved_bytes_per_s = gemm.bytes_model / gemm.time_s->median;

  KernelResult broken = timed_kernel("layernorm_f32_broken", 1.0e-3, 0.0, 1);
  broken.family = "layernorm";
  broken.variant = "broken";
  broken.shape = {{"rows", 64}, {"C", 768}};
  broken.validated = false;
  broken.status = Status::failed_validation;
  broken.error = "element 17: got NaN, expected 0.25";
  broken.max_rel_err = std::numeric_limits<double>::infinity();
  broken.time_s.reset();
  broken.achieved_flops_per_s = broken.achieved_bytes_per_s = 0;

  r.kernels = {naive, fused, gemm, broken};
  apply_roofline(r);
  return r;
}

Results counters_fixture() {
  Results r = emulator_fixture();
  KernelResult& gemm = r.kernels[2];
  gemm.bytes_l2_load = 4.0 * 256 * 256 * 2;  // A and B each read twice (two tile columns)
  gemm.bytes_l2_store = 256.0 * 256 * 2;
  gemm.tensor_ops = 2.0 * 256 * 256 * 256;
  KernelCounters exact;
  exact.source = CounterSource::emulator;
  exact.passes = 1;
  exact.values = {{"l2_load_bytes", *gemm.bytes_l2_load},
                  {"l2_store_bytes", *gemm.bytes_l2_store},
                  {"l2_bytes", *gemm.bytes_l2_load + *gemm.bytes_l2_store},
                  {"tensor_bf16", *gemm.tensor_ops}};
  gemm.counters = exact;
  compare_counters(gemm);

  // A deliberately wrong model: it declares one read of the input, the
  // counts say the kernel loaded a quarter more.
  KernelResult& fused = r.kernels[1];
  fused.bytes_l2_load = 4.0 * (1 << 20);
  fused.bytes_l2_store = 4.0 * (1 << 20);
  KernelCounters wrong = exact;
  wrong.values = {{"l2_load_bytes", 5.0 * (1 << 20)},
                  {"l2_store_bytes", 4.0 * (1 << 20)},
                  {"l2_bytes", 9.0 * (1 << 20)}};
  fused.counters = wrong;
  compare_counters(fused);

  KernelCounters refused;
  refused.source = CounterSource::cupti;
  refused.chip = "GH100";
  refused.unavailable = "no profiling permission (ERR_NVGPUCTRPERM)";
  r.kernels[0].counters = refused;
  return r;
}

Results crowded_fixture(int kernel_count) {
  Results r = emulator_fixture();
  r.kernels.clear();
  for (int i = 0; i < kernel_count; ++i) {
    KernelResult k = timed_kernel("crowded_kernel_number_" + std::to_string(i),
                                  1.0e-2 * (1.0 + 0.01 * i), 0.01, 5);
    k.bytes_model = k.bytes_min * (1.0 + 0.01 * i);
    k.intensity = k.flops / k.bytes_model;
    k.achieved_bytes_per_s = k.bytes_model / k.time_s->median;
    r.kernels.push_back(k);
  }
  return r;
}

}  // namespace rl::roofline::testing
