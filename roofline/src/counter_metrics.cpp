// The suite's counter set (issue 28 item 1), as data.  Names were checked
// against CUPTI 13.0's Profiler Host API for GA100, AD102, GH100, GB100,
// GB110, GB202, GB10B and GB20B (`roofline counters --chip all` prints what
// each chip has); a name no chip has would show as MISSING there.
#include "rl/roofline/counter_metrics.hpp"

#include <array>

namespace rl::roofline {

namespace {

using M = CounterMetric;
constexpr double kSectorBytes = 32;

// ---- memory traffic, one role per level of the hierarchy ----
constexpr std::array kDramRead{
    M{"dram__bytes_read.sum"}, M{"dram__bytes_op_read.sum"},  // the GB20x spelling
    M{"fbpa__dram_read_bytes.sum", 1, "counted at the frame-buffer partitions"},
    M{"lts__t_sectors_aperture_sysmem_op_read.sum", kSectorBytes,
      "L2 sectors read from system memory x 32 B: an integrated GPU's DRAM is system memory"}};
constexpr std::array kDramWrite{
    M{"dram__bytes_write.sum"}, M{"dram__bytes_op_write.sum"},
    M{"fbpa__dram_write_bytes.sum", 1, "counted at the frame-buffer partitions"},
    M{"lts__t_sectors_aperture_sysmem_op_write.sum", kSectorBytes,
      "L2 sectors written to system memory x 32 B: an integrated GPU's DRAM is system memory"}};
constexpr std::array kL2Bytes{M{"lts__t_bytes.sum"},
                              M{"lts__t_sectors.sum", kSectorBytes, "L2 sectors x 32 B"}};
constexpr std::array kL1Bytes{M{"l1tex__t_bytes.sum"},
                              M{"l1tex__t_sectors.sum", kSectorBytes, "L1 sectors x 32 B"}};

// ---- scalar FLOP instructions (thread instructions, predicate true) ----
constexpr std::array kFfma{M{"sm__sass_thread_inst_executed_op_ffma_pred_on.sum"}};
constexpr std::array kFadd{M{"sm__sass_thread_inst_executed_op_fadd_pred_on.sum"}};
constexpr std::array kFmul{M{"sm__sass_thread_inst_executed_op_fmul_pred_on.sum"}};
constexpr std::array kFfma2{M{"sm__sass_thread_inst_executed_op_ffma2_pred_on.sum"}};
constexpr std::array kFadd2{M{"sm__sass_thread_inst_executed_op_fadd2_pred_on.sum"}};
constexpr std::array kFmul2{M{"sm__sass_thread_inst_executed_op_fmul2_pred_on.sum"}};
constexpr std::array kDfma{M{"sm__sass_thread_inst_executed_op_dfma_pred_on.sum"}};
constexpr std::array kDadd{M{"sm__sass_thread_inst_executed_op_dadd_pred_on.sum"}};
constexpr std::array kDmul{M{"sm__sass_thread_inst_executed_op_dmul_pred_on.sum"}};
constexpr std::array kHfma{M{"sm__sass_thread_inst_executed_op_hfma_pred_on.sum"}};
constexpr std::array kHadd{M{"sm__sass_thread_inst_executed_op_hadd_pred_on.sum"}};
constexpr std::array kHmul{M{"sm__sass_thread_inst_executed_op_hmul_pred_on.sum"}};

// ---- tensor-path math operations, per input (and accumulator) type ----
// Some chips fold input or accumulator types into one counter: GH100 FP16
// inputs with either accumulator, GH100 and AD10x FP8 inputs, TU10x FP16, BF16
// and TF32 inputs into FP32, GB100 FP4, FP6 and FP8 inputs; and GB202's FP6/FP4
// counter holds the FP4 ops it also counts apart.  A folded counter names the
// roles it contains (CounterMetric::contains); where a plan reads it, the
// readout leaves those roles out, so each op is counted once.
constexpr std::string_view kEitherAccumulator = "FP16 and FP32 accumulation counted together";
constexpr std::array<std::string_view, 1> kHoldsFp16F16{"tensor_fp16_f16"};
constexpr std::array<std::string_view, 2> kHoldsBf16Tf32{"tensor_bf16", "tensor_tf32"};
constexpr std::array<std::string_view, 1> kHoldsFp8F16{"tensor_fp8_f16"};
constexpr std::array<std::string_view, 2> kHoldsFp6Fp4F32{"tensor_fp6_fp4_f32", "tensor_fp4"};
constexpr std::array<std::string_view, 1> kHoldsFp6Fp4F16{"tensor_fp6_fp4_f16"};
constexpr std::array<std::string_view, 1> kHoldsFp4{"tensor_fp4"};  // FP4 in, FP32 accumulate
constexpr std::array kTensorFp16F32{
    M{"sm__ops_path_tensor_src_fp16_dst_fp32.sum"},
    M{"sm__ops_path_tensor_src_fp16.sum", 1, kEitherAccumulator, kHoldsFp16F16},
    M{"sm__ops_path_tensor_src_fp16_bf16_tf32_dst_fp32.sum", 1,
      "FP16, BF16 and TF32 inputs counted together", kHoldsBf16Tf32}};
constexpr std::array kTensorFp16F16{M{"sm__ops_path_tensor_src_fp16_dst_fp16.sum"}};
constexpr std::array kTensorBf16{M{"sm__ops_path_tensor_src_bf16_dst_fp32.sum"}};
constexpr std::array kTensorTf32{M{"sm__ops_path_tensor_src_tf32_dst_fp32.sum"}};
constexpr std::array kTensorFp64{M{"sm__ops_path_tensor_src_fp64.sum"}};
constexpr std::array kTensorInt8{M{"sm__ops_path_tensor_src_int8.sum"}};
constexpr std::array kTensorFp8F32{
    M{"sm__ops_path_tensor_src_fp8_dst_fp32.sum"},
    M{"sm__ops_path_tensor_src_fp8.sum", 1, kEitherAccumulator, kHoldsFp8F16},
    M{"sm__ops_path_tensor_src_fp4_fp6_fp8_dst_fp32.sum", 1,
      "FP4, FP6 and FP8 inputs counted together", kHoldsFp6Fp4F32}};
constexpr std::array kTensorFp8F16{M{"sm__ops_path_tensor_src_fp8_dst_fp16.sum"},
                                   M{"sm__ops_path_tensor_src_fp4_fp6_fp8_dst_fp16.sum", 1,
                                     "FP4, FP6 and FP8 inputs counted together", kHoldsFp6Fp4F16}};
// The role's own counter, yet it holds the FP4 ops "tensor_fp4" counts apart.
constexpr std::array kTensorFp6Fp4F32{
    M{"sm__ops_path_tensor_src_fp4_fp6_dst_fp32.sum", 1, {}, kHoldsFp4}};
constexpr std::array kTensorFp6Fp4F16{M{"sm__ops_path_tensor_src_fp4_fp6_dst_fp16.sum"}};
constexpr std::array kTensorFp4{M{"sm__ops_path_tensor_src_fp4_dst_fp32.sum"}};

// ---- time, clock and tensor-pipe activity ----
constexpr std::array kDuration{M{"gpu__time_duration.sum"}};
constexpr std::array kSmClock{
    M{"sm__cycles_elapsed.avg.per_second"},
    M{"gpc__cycles_elapsed.avg.per_second", 1, "the GPC clock, which the SMs run on"}};
constexpr std::array kTensorActive{
    M{"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"},
    M{"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed", 1,
      "the HMMA part of the tensor pipe only"},
    M{"sm__pipe_tensor_subpipe_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed", 1,
      "the HMMA sub-pipe of the tensor pipe only"}};

constexpr std::string_view kNoPackedFp32 =
    "no packed FP32 instruction counter on this chip; CUPTI counts FFMA2, FADD2 and FMUL2 on "
    "GB100 and GB110";
constexpr std::string_view kNoTensorPath = "no tensor path for this input type on this chip";
constexpr std::string_view kFolded =
    "folded into another role's counter on this chip, or no such tensor path here";

constexpr auto every = CounterNeed::every_chip;
constexpr auto some = CounterNeed::where_present;

const std::array kRoles{
    CounterRole{"dram_bytes_read", "DRAM bytes read", "bytes", every, kDramRead},
    CounterRole{"dram_bytes_write", "DRAM bytes written", "bytes", every, kDramWrite},
    CounterRole{"l2_bytes", "L2 bytes requested", "bytes", every, kL2Bytes},
    CounterRole{"l1_bytes", "L1/shared bytes requested", "bytes", every, kL1Bytes},
    CounterRole{"ffma", "FP32 FMA instructions (2 FLOP/thread)", "thread instructions", every,
                kFfma},
    CounterRole{"fadd", "FP32 add instructions", "thread instructions", every, kFadd},
    CounterRole{"fmul", "FP32 multiply instructions", "thread instructions", every, kFmul},
    CounterRole{"ffma2", "packed FP32 FMA instructions (4 FLOP/thread)", "thread instructions",
                some, kFfma2, kNoPackedFp32},
    CounterRole{"fadd2", "packed FP32 add instructions", "thread instructions", some, kFadd2,
                kNoPackedFp32},
    CounterRole{"fmul2", "packed FP32 multiply instructions", "thread instructions", some, kFmul2,
                kNoPackedFp32},
    CounterRole{"dfma", "FP64 FMA instructions", "thread instructions", every, kDfma},
    CounterRole{"dadd", "FP64 add instructions", "thread instructions", every, kDadd},
    CounterRole{"dmul", "FP64 multiply instructions", "thread instructions", every, kDmul},
    CounterRole{"hfma", "FP16 FMA instructions", "thread instructions", every, kHfma},
    CounterRole{"hadd", "FP16 add instructions", "thread instructions", every, kHadd},
    CounterRole{"hmul", "FP16 multiply instructions", "thread instructions", every, kHmul},
    CounterRole{"tensor_fp16_f32", "tensor ops, FP16 in, FP32 accumulate", "ops", every,
                kTensorFp16F32},
    CounterRole{"tensor_fp16_f16", "tensor ops, FP16 in, FP16 accumulate", "ops", some,
                kTensorFp16F16, kFolded},
    CounterRole{"tensor_bf16", "tensor ops, BF16 in", "ops", some, kTensorBf16, kNoTensorPath},
    CounterRole{"tensor_tf32", "tensor ops, TF32 in", "ops", some, kTensorTf32, kNoTensorPath},
    CounterRole{"tensor_fp64", "tensor ops, FP64 in", "ops", some, kTensorFp64, kNoTensorPath},
    CounterRole{"tensor_int8", "tensor ops, INT8 in", "ops", every, kTensorInt8},
    CounterRole{"tensor_fp8_f32", "tensor ops, FP8 in, FP32 accumulate", "ops", some, kTensorFp8F32,
                kNoTensorPath},
    CounterRole{"tensor_fp8_f16", "tensor ops, FP8 in, FP16 accumulate", "ops", some, kTensorFp8F16,
                kFolded},
    CounterRole{"tensor_fp6_fp4_f32", "tensor ops, FP6/FP4 in, FP32 accumulate", "ops", some,
                kTensorFp6Fp4F32, kFolded},
    CounterRole{"tensor_fp6_fp4_f16", "tensor ops, FP6/FP4 in, FP16 accumulate", "ops", some,
                kTensorFp6Fp4F16, kFolded},
    CounterRole{"tensor_fp4", "tensor ops, FP4 in", "ops", some, kTensorFp4, kNoTensorPath},
    CounterRole{"duration", "kernel duration", "ns", every, kDuration},
    CounterRole{"sm_clock", "SM clock during the kernel", "cycles/s", every, kSmClock},
    CounterRole{"tensor_pipe_active", "tensor pipe busy", "% of elapsed cycles", every,
                kTensorActive},
};

}  // namespace

std::span<const CounterRole> counter_roles() {
  return kRoles;
}

}  // namespace rl::roofline
