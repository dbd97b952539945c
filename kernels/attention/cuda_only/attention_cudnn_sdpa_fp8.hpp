// Attention, cuDNN FP8 SDPA: cuDNN's fused attention forward on e4m3 Q, K, V
// (the frontend's sdpa_fp8), the library baseline of
// attention_wgmma_fp8_e4m3 on the same workload (attention_fp8_workload.hpp:
// e4m3 codes with power-of-two per-tensor scales, O in bf16).  Included by
// attention_cudnn_sdpa.cpp after its own record, so that both records share
// its graph code (bhnd_tensor, sdpa_options, build_plan) and its one compile
// of the frontend's headers (the slowest compile of the build).
//
// The graph: Q, K, V as FP8_E4M3 [B, H, N, d]; the descales s_Q, s_K, s_V;
// P scaled by scale_s = 2^8 before its rounding to e4m3 and descaled by
// descale_s = 2^-8 (what the hand-written rung does, so both read against
// the same fp8_tolerance); O in BFLOAT16 with scale_o = 1; the amax outputs
// (Amax_S, Amax_O, for a training recipe's next scales) written and unused.
// The six scalars live in one device buffer written when the graph is
// built, outside the timed launch.  One graph per problem and scales, built
// on the first launch (validation's, untimed) and kept by the record's
// launcher.
//
// Where it runs: cuDNN's FP8 SDPA forward needs compute capability 9.0 or
// later (the record's min_cc; below it the harness records the instance as
// skipped with that reason); where the installed cuDNN has no engine for it
// (an older cuDNN, or O in bf16 not supported), check_support's error is the
// instance's failure, naming the step.  Not yet run on a GPU: compiled only.
#pragma once

#include "attention/attention_fp8_workload.hpp"

#include <map>
#include <memory>
#include <string>
#include <tuple>

namespace rl::attention {
namespace {

class CudnnSdpaFp8 {
 public:
  explicit CudnnSdpaFp8(const Fp8Args& a) : p_{a.B, a.H, a.N, a.d, a.causal}, scalars_(kScalars) {
    const float values[kScalars] = {a.q_descale,
                                    a.k_descale,
                                    a.v_descale,
                                    1.0f / static_cast<float>(kFp8PScale),
                                    static_cast<float>(kFp8PScale),
                                    1.0f,
                                    0.0f,
                                    0.0f};
    scalars_.upload(values);
    RL_CUDNN_CHECK(cudnnCreate(&handle_));
    try {
      build(a.scale);
    } catch (...) {
      cudnnDestroy(handle_);
      throw;
    }
  }
  CudnnSdpaFp8(const CudnnSdpaFp8&) = delete;
  CudnnSdpaFp8& operator=(const CudnnSdpaFp8&) = delete;
  ~CudnnSdpaFp8() { cudnnDestroy(handle_); }

  void launch(const Fp8Args& a, cudaStream_t stream) {
    RL_CUDNN_CHECK(cudnnSetStream(handle_, stream));
    pack_[kQ] = const_cast<Fp8*>(a.Q);  // the variant pack takes void*
    pack_[kK] = const_cast<Fp8*>(a.K);
    pack_[kV] = const_cast<Fp8*>(a.V);
    pack_[kO] = a.O;
    check(graph_->execute(handle_, pack_, workspace_.get()), "execute (fp8)");
  }

 private:
  // The scalars' uids follow kO; their order is scalars_'s.
  static constexpr int kScalars = 8;
  enum : std::int64_t { kFirstScalar = kO + 1 };

  void build(float scale) {
    graph_->set_io_data_type(fe::DataType_t::FP8_E4M3)
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
    std::shared_ptr<fe::graph::Tensor_attributes> scalar[kScalars];
    const char* const names[kScalars] = {"descale_q", "descale_k", "descale_v", "descale_s",
                                         "scale_s",   "scale_o",   "amax_s",    "amax_o"};
    for (int i = 0; i < 6; ++i)
      scalar[i] = graph_->tensor(fe::graph::Tensor_attributes()
                                     .set_name(names[i])
                                     .set_uid(kFirstScalar + i)
                                     .set_dim({1, 1, 1, 1})
                                     .set_stride({1, 1, 1, 1})
                                     .set_data_type(fe::DataType_t::FLOAT));
    const auto out =
        graph_->sdpa_fp8(bhnd_tensor(*graph_, p_, "Q", kQ), bhnd_tensor(*graph_, p_, "K", kK),
                         bhnd_tensor(*graph_, p_, "V", kV), scalar[0], scalar[1], scalar[2],
                         scalar[3], scalar[4], scalar[5], sdpa_options(p_, scale));
    as_bhnd(out[0]->set_output(true), p_, kO).set_data_type(fe::DataType_t::BFLOAT16);
    for (int i = 6; i < kScalars; ++i) {  // Amax_S, Amax_O
      const auto& amax = out[static_cast<std::size_t>(i - 4)];
      if (amax == nullptr) continue;  // not produced: not in the variant pack either
      pack_[kFirstScalar + i] = scalars_.get() + i;
      amax->set_output(true)
          .set_name(names[i])
          .set_uid(kFirstScalar + i)
          .set_dim({1, 1, 1, 1})
          .set_stride({1, 1, 1, 1})
          .set_data_type(fe::DataType_t::FLOAT);
    }
    for (int i = 0; i < 6; ++i) pack_[kFirstScalar + i] = scalars_.get() + i;
    build_plan(*graph_, handle_, workspace_, plan_);
  }

  Dims p_;
  DeviceBuffer<float> scalars_;
  cudnnHandle_t handle_ = nullptr;
  std::shared_ptr<fe::graph::Graph> graph_ = std::make_shared<fe::graph::Graph>();
  std::unordered_map<std::int64_t, void*> pack_;
  DeviceBuffer<unsigned char> workspace_;
  std::string plan_;
};

// The record's launcher: one CudnnSdpaFp8 per problem and scales, built on
// first use (validation runs before timing) and kept for the process.
Fp8Launcher cudnn_sdpa_fp8_launcher() {
  using Key = std::tuple<int, int, int, int, bool, float, float, float, float>;
  auto plans = std::make_shared<std::map<Key, std::unique_ptr<CudnnSdpaFp8>>>();
  return [plans](const Fp8Args& a, cudaStream_t stream) {
    const Key key{a.B, a.H, a.N, a.d, a.causal, a.scale, a.q_descale, a.k_descale, a.v_descale};
    auto& plan = (*plans)[key];
    if (plan == nullptr) plan = std::make_unique<CudnnSdpaFp8>(a);
    plan->launch(a, stream);
  };
}

}  // namespace

RL_REGISTER_KERNEL(
    make_fp8_record({.name = "attention_cudnn_sdpa_fp8_e4m3",
                     .variant = "cudnn_sdpa_fp8",
                     .baseline = "attention_cudnn_sdpa_bf16",
                     .launcher = cudnn_sdpa_fp8_launcher(),
                     .bytes_model = &fp8_bytes_min,  // the library's tiling is unknown
                     .scratch_bytes = [](const Dims&) { return std::size_t{0}; },
                     .idea = "cuDNN's fused SDPA on e4m3 Q, K, V (frontend sdpa_fp8), O in bf16",
                     .library = "cuDNN",
                     .gpu_only = true,
                     .max_cc = 0,
                     .workspace_bytes = kWorkspaceCapBytes}));

}  // namespace rl::attention
