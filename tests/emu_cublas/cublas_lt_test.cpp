// The emulated cublasLtMatmul against a float64 reference, in the layouts
// llm.c uses (dev/cuda/matmul_forward.cu's matmul_forward3 and llmc's
// matmul_cublaslt): weight^T . input with bias and GELU epilogues, bf16 with
// an aux output, strided batches accumulated in place; and its refusals.
#include <cmath>
#include <numbers>
#include <string>

#include "cublas_test_support.hpp"

namespace {

using namespace rl::test::cublas;

double gelu_tanh(double x) {
  const double s = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + std::tanh(s * (x + 0.044715 * x * x * x)));
}
double gelu_erf(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2));
}

// Within fp32's rounding of a float64 value (twice the correctly rounded
// bound, so the last bit of a libm tanh may differ).
bool within_fp32_rounding(double got, double want) {
  return std::fabs(got - want) <= 0x1.0p-23 * std::fabs(want);
}

// matmul_forward3: out (B*T x OC, row-major) = inp (B*T x C) . weight^T + bias,
// as column-major OC x B*T = weight^T (OC x C) . inp (C x B*T).
struct ForwardCase {
  int BT = 6, C = 5, OC = 7;
  std::vector<double> inp = integer_values(BT * C, 30);
  std::vector<double> weight = integer_values(OC * C, 31);
  std::vector<double> bias = integer_values(OC, 32);
  double pre(int r, int o, bool with_bias) const {
    double sum = with_bias ? bias[o] : 0.0;
    for (int i = 0; i < C; ++i) sum += inp[r * C + i] * weight[o * C + i];
    return sum;
  }
};

std::vector<float> matmul_forward3(const ForwardCase& f, cublasLtEpilogue_t epilogue) {
  LtHandle lt;
  auto d_inp = to_device(narrow<float>(f.inp));
  auto d_weight = to_device(narrow<float>(f.weight));
  auto d_bias = to_device(narrow<float>(f.bias));
  rl::DeviceBuffer<float> d_out(f.BT * f.OC);
  Desc desc;
  desc.set(CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T);
  desc.set(CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
  desc.set(CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue);
  const float* bias = d_bias.get();
  desc.set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
  Layout weight(CUDA_R_32F, f.C, f.OC, f.C), input(CUDA_R_32F, f.C, f.BT, f.C),
      output(CUDA_R_32F, f.OC, f.BT, f.OC);
  cublasLtMatmulPreference_t preference = nullptr;
  EXPECT_EQ(cublasLtMatmulPreferenceCreate(&preference), CUBLAS_STATUS_SUCCESS);
  const std::size_t workspace_size = 32 * 1024 * 1024;
  EXPECT_EQ(
      cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                           &workspace_size, sizeof workspace_size),
      CUBLAS_STATUS_SUCCESS);
  cublasLtMatmulHeuristicResult_t heuristic{};
  int returned = 0;
  EXPECT_EQ(cublasLtMatmulAlgoGetHeuristic(lt.handle, desc.desc, weight.layout, input.layout,
                                           output.layout, output.layout, preference, 1, &heuristic,
                                           &returned),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(returned, 1);
  EXPECT_EQ(heuristic.state, CUBLAS_STATUS_SUCCESS);
  const float alpha = 1.0F, beta = 0.0F;
  EXPECT_EQ(cublasLtMatmul(lt.handle, desc.desc, &alpha, d_weight.get(), weight.layout, d_inp.get(),
                           input.layout, &beta, d_out.get(), output.layout, d_out.get(),
                           output.layout, &heuristic.algo, nullptr, 0, nullptr),
            CUBLAS_STATUS_SUCCESS);
  cublasLtMatmulPreferenceDestroy(preference);
  return d_out.download();
}

TEST(EmuCublasLt, llmc_matmul_forward3_default_and_bias_epilogues_match_float64_exactly) {
  const ForwardCase f;
  for (const auto epilogue : {CUBLASLT_EPILOGUE_DEFAULT, CUBLASLT_EPILOGUE_BIAS}) {
    const auto out = matmul_forward3(f, epilogue);
    for (int r = 0; r < f.BT; ++r) {
      for (int o = 0; o < f.OC; ++o) {
        EXPECT_EQ(out[r * f.OC + o], f.pre(r, o, epilogue == CUBLASLT_EPILOGUE_BIAS))
            << "epilogue " << epilogue << " at " << r << "," << o;
      }
    }
  }
}

// The GELU epilogues apply the tanh form.  The erf form differs from it by up
// to 4.7e-4 at small pre-activations (and by less than fp32's rounding at
// large positive ones), so a reference with it must fail the same comparison.
TEST(EmuCublasLt, gelu_epilogues_apply_tanh_gelu_and_an_erf_gelu_reference_fails) {
  const ForwardCase f;
  for (const auto epilogue : {CUBLASLT_EPILOGUE_GELU, CUBLASLT_EPILOGUE_GELU_BIAS}) {
    const bool with_bias = epilogue == CUBLASLT_EPILOGUE_GELU_BIAS;
    const auto out = matmul_forward3(f, epilogue);
    int erf_rejections = 0;
    for (int r = 0; r < f.BT; ++r) {
      for (int o = 0; o < f.OC; ++o) {
        const double pre = f.pre(r, o, with_bias);
        EXPECT_TRUE(within_fp32_rounding(out[r * f.OC + o], gelu_tanh(pre)))
            << out[r * f.OC + o] << " vs " << gelu_tanh(pre) << " at pre-activation " << pre;
        if (!within_fp32_rounding(out[r * f.OC + o], gelu_erf(pre))) ++erf_rejections;
      }
    }
    EXPECT_GT(erf_rejections, 0) << "epilogue " << epilogue;
  }
}

// llmc/matmul.cuh's forward matmul in bf16: GELU_AUX_BIAS keeps the
// pre-activation (bias included) in aux, D gets GELU of it, each rounded once
// to bf16.
TEST(EmuCublasLt, bf16_gelu_aux_bias_stores_the_pre_activation_and_rounds_gelu_once) {
  LtHandle lt;
  const int m = 7, n = 6, k = 5;  // out (m x n) = weight^T (m x k) . inp (k x n)
  const auto a = integer_values(k * m, 33);
  const auto b = integer_values(k * n, 34);
  const auto bias = integer_values(m, 35);
  auto da = to_device(narrow<__nv_bfloat16>(a));
  auto db = to_device(narrow<__nv_bfloat16>(b));
  auto d_bias = to_device(narrow<__nv_bfloat16>(bias));
  rl::DeviceBuffer<__nv_bfloat16> dd(m * n), d_aux(m * n);
  Desc desc;
  desc.set(CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T);
  desc.set(CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
  desc.set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, std::int64_t{m});
  desc.set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, d_aux.get());
  desc.set(CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_GELU_AUX_BIAS);
  desc.set(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, CUDA_R_16BF);
  desc.set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, d_bias.get());
  desc.set(CUBLASLT_MATMUL_DESC_SCALE_TYPE, CUDA_R_32F);
  Layout la(CUDA_R_16BF, k, m, k), lb(CUDA_R_16BF, k, n, k), lc(CUDA_R_16BF, m, n, m);
  const float alpha = 1.0F, beta = 0.0F;
  ASSERT_EQ(
      cublasLtMatmul(lt.handle, desc.desc, &alpha, da.get(), la.layout, db.get(), lb.layout, &beta,
                     dd.get(), lc.layout, dd.get(), lc.layout, nullptr, nullptr, 0, nullptr),
      CUBLAS_STATUS_SUCCESS);
  const auto d = widen(dd.download());
  const auto aux = widen(d_aux.download());
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < m; ++i) {
      double pre = bias[i];
      for (int p = 0; p < k; ++p) pre += a[i * k + p] * b[j * k + p];
      EXPECT_EQ(aux[i + j * m], pre) << i << "," << j;
      const double want = static_cast<float>(__nv_bfloat16(gelu_tanh(pre)));
      EXPECT_EQ(d[i + j * m], want) << "pre-activation " << pre;
    }
  }
}

// llmc's strided-batched form with accumulate (beta = 1, C == D), fp16 data.
TEST(EmuCublasLt, fp16_strided_batches_accumulate_in_place) {
  LtHandle lt;
  const int m = 3, n = 4, k = 5, batches = 2;
  const auto a = integer_values(m * k * batches, 36);  // op N: m x k per batch
  const auto b = integer_values(n * k * batches, 37);  // op T: stored n x k
  const auto d0 = integer_values(m * n * batches, 38);
  auto da = to_device(narrow<__half>(a));
  auto db = to_device(narrow<__half>(b));
  auto dd = to_device(narrow<__half>(d0));
  Desc desc;
  desc.set(CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_N);
  desc.set(CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_T);
  Layout la(CUDA_R_16F, m, k, m), lb(CUDA_R_16F, n, k, n), ld(CUDA_R_16F, m, n, m);
  const std::size_t strides[] = {std::size_t{m} * k, std::size_t{n} * k, std::size_t{m} * n};
  Layout* layouts[] = {&la, &lb, &ld};
  for (int i = 0; i < 3; ++i) {
    layouts[i]->set(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, batches);
    layouts[i]->set(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, strides[i]);
  }
  const float alpha = 1.0F, beta = 1.0F;
  ASSERT_EQ(
      cublasLtMatmul(lt.handle, desc.desc, &alpha, da.get(), la.layout, db.get(), lb.layout, &beta,
                     dd.get(), ld.layout, dd.get(), ld.layout, nullptr, nullptr, 0, nullptr),
      CUBLAS_STATUS_SUCCESS);
  const auto got = widen(dd.download());
  for (int batch = 0; batch < batches; ++batch) {
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < m; ++i) {
        double want = d0[batch * m * n + i + j * m];
        for (int p = 0; p < k; ++p) {
          want += a[batch * m * k + i + p * m] * b[batch * n * k + j + p * n];
        }
        EXPECT_EQ(got[batch * m * n + i + j * m], want) << batch << ": " << i << "," << j;
      }
    }
  }
}

TEST(EmuCublasLt, attributes_read_back_what_was_set_and_report_their_storage_size) {
  Desc desc;
  desc.set(CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T);
  std::int32_t transa = -1;
  std::size_t written = 0;
  EXPECT_EQ(cublasLtMatmulDescGetAttribute(desc.desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa,
                                           sizeof transa, &written),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(transa, CUBLAS_OP_T);
  EXPECT_EQ(written, sizeof(std::int32_t));
  // The query form: no buffer, size 0, only the size comes back.
  EXPECT_EQ(cublasLtMatmulDescGetAttribute(desc.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, nullptr, 0,
                                           &written),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(written, sizeof(void*));

  Layout layout(CUDA_R_16BF, 3, 4, 5);
  layout.set(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, std::int64_t{60});
  std::int64_t stride = 0, ld = 0;
  EXPECT_EQ(
      cublasLtMatrixLayoutGetAttribute(layout.layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                       &stride, sizeof stride, &written),
      CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(stride, 60);
  EXPECT_EQ(cublasLtMatrixLayoutGetAttribute(layout.layout, CUBLASLT_MATRIX_LAYOUT_LD, &ld,
                                             sizeof ld, &written),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(ld, 5);
  std::int32_t too_small = 0;  // LD is an int64_t
  EXPECT_EQ(cublasLtMatrixLayoutGetAttribute(layout.layout, CUBLASLT_MATRIX_LAYOUT_LD, &too_small,
                                             sizeof too_small, &written),
            CUBLAS_STATUS_INVALID_VALUE);
}

TEST(EmuCublasLt, refusals_and_invalid_values_as_cublaslt_answers_them) {
  LtHandle lt;
  rl::DeviceBuffer<float> buffer(64);
  float* p = buffer.get();
  const float one = 1.0F;
  Layout a(CUDA_R_32F, 4, 4, 4), b(CUDA_R_32F, 4, 4, 4), c(CUDA_R_32F, 4, 4, 4);
  const auto matmul = [&](const Desc& desc, const Layout& la) {
    return cublasLtMatmul(lt.handle, desc.desc, &one, p, la.layout, p, b.layout, &one, p, c.layout,
                          p, c.layout, nullptr, nullptr, 0, nullptr);
  };
  {
    Desc ok;
    EXPECT_EQ(matmul(ok, a), CUBLAS_STATUS_SUCCESS);
    const std::int8_t small = 1;  // TRANSA is stored as int32_t
    EXPECT_EQ(cublasLtMatmulDescSetAttribute(ok.desc, CUBLASLT_MATMUL_DESC_TRANSA, &small, 1),
              CUBLAS_STATUS_INVALID_VALUE);
  }
  {
    Layout wide(CUDA_R_32F, 4, 5, 4);  // op(A) 4 x 5 against op(B) 4 x 4
    Layout short_ld(CUDA_R_32F, 4, 4, 3);
    Desc desc;
    EXPECT_EQ(matmul(desc, wide), CUBLAS_STATUS_INVALID_VALUE);
    EXPECT_EQ(matmul(desc, short_ld), CUBLAS_STATUS_INVALID_VALUE);
  }
  {
    Desc bias_without_pointer;
    bias_without_pointer.set(CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS);
    EXPECT_EQ(matmul(bias_without_pointer, a), CUBLAS_STATUS_INVALID_VALUE);
  }
  testing::internal::CaptureStderr();
  {
    Desc dgelu;
    dgelu.set(CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_DGELU);
    EXPECT_EQ(matmul(dgelu, a), CUBLAS_STATUS_NOT_SUPPORTED);
    const float* scale = p;
    EXPECT_EQ(cublasLtMatmulDescSetAttribute(dgelu.desc, CUBLASLT_MATMUL_DESC_C_SCALE_POINTER,
                                             &scale, sizeof scale),
              CUBLAS_STATUS_NOT_SUPPORTED);
    // A's scale pointer is kept (block scales use it), and refused at the
    // matmul in the default SCALAR_32F mode.
    Desc scalar_scale;
    scalar_scale.set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, scale);
    EXPECT_EQ(matmul(scalar_scale, a), CUBLAS_STATUS_NOT_SUPPORTED);
    Layout row_major(CUDA_R_32F, 4, 4, 4);
    row_major.set(CUBLASLT_MATRIX_LAYOUT_ORDER, std::int32_t{CUBLASLT_ORDER_ROW});
    Desc plain;
    EXPECT_EQ(matmul(plain, row_major), CUBLAS_STATUS_NOT_SUPPORTED);
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "rl::emu: cublasLtMatmul with epilogue 192 is not emulated (emu/README.md, "
            "\"cuBLAS\")\n"
            "rl::emu: cublasLtMatmulDescSetAttribute of attribute 19 is not emulated "
            "(emu/README.md, \"cuBLAS\")\n"
            "rl::emu: cublasLtMatmul with SCALAR_32F A/B scale pointers is not emulated "
            "(emu/README.md, \"cuBLAS\")\n"
            "rl::emu: cublasLtMatmul with layout order 1 is not emulated (emu/README.md, "
            "\"cuBLAS\")\n");
}

}  // namespace
