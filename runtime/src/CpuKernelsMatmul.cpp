//===- CpuKernelsMatmul.cpp - CPU kernels: matrix products ----------------===//
//
// mm, bmm, addmm and baddbmm, each product a fixed-order sum in double.
// CUDA: cuBLAS (CudaBackend.cpp) or CudaKernelsMatmul.cu's fallback product.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"


namespace coop::rt {
namespace {

using namespace cpu;

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

// mm(self, mat2), bmm(self, mat2), addmm(self, mat1, mat2): out = beta * self
// + alpha * mat1 @ mat2.
template <int Kind> std::string prepareMatmul(const Signature &sig) {
  TRY(expect(sig, 1));
  int first = Kind == 2 ? 1 : 0, rank = Kind == 1 ? 3 : 2;
  TRY(needTensor(sig, first, Kind == 2 ? "mat1" : "self"));
  TRY(needTensor(sig, first + 1, "mat2"));
  const Tensor &a = *sig.call.tensor(first), &b = *sig.call.tensor(first + 1);
  const Tensor &out = sig.outputs[0];
  if (a.rank != rank || b.rank != rank || out.rank != rank)
    return "operands are not all rank " + std::to_string(rank);
  int m = rank - 2;
  bool ok = a.shape[m + 1] == b.shape[m] && out.shape[m] == a.shape[m] &&
            out.shape[m + 1] == b.shape[m + 1] &&
            (rank == 2 || (a.shape[0] == b.shape[0] && out.shape[0] == a.shape[0]));
  if (!ok)
    return "shapes " + shapeText(a) + " x " + shapeText(b) + " -> " + shapeText(out) +
           " do not multiply";
  if (Kind == 2) {
    TRY(needTensor(sig, 0, "self"));
    if (!broadcastsTo(*sig.call.tensor(0), out))
      return "self " + shapeText(*sig.call.tensor(0)) + " does not broadcast to " +
             shapeText(out);
  }
  return "";
}

/// out = alpha * a @ b (+ beta * bias, broadcast), `batch` products. Each
/// element is the fixed-order sum over k in double; rows are computed a few
/// at a time against b's rows converted once to contiguous doubles, so the
/// inner loop runs over j with unit stride and the same order of sums.
void matmul(const Tensor &a, const Tensor &b, const Tensor &out, int64_t batch,
            const Tensor *bias, double beta, double alpha) {
  constexpr int64_t kRows = 4;
  int r = a.rank - 2;
  int64_t M = a.shape[r], K = a.shape[r + 1], N = b.shape[r + 1];
  const float *A = a.ptr<float>(), *B = b.ptr<float>();
  int64_t as0 = a.strides[r], as1 = a.strides[r + 1], bs0 = b.strides[r], bs1 = b.strides[r + 1];
  int64_t ab = r ? a.strides[0] : 0, bb = r ? b.strides[0] : 0;
  Walk w(out);
  int ib = bias ? w.add(*bias) : 0;
  float *o = outf(out);
  std::vector<double> rowsOfB(size_t(K * N)), sums(size_t(kRows * N));
  for (int64_t t = 0; t < batch; ++t) {
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < N; ++j)
        rowsOfB[size_t(k * N + j)] = B[t * bb + k * bs0 + j * bs1];
    for (int64_t i0 = 0; i0 < M; i0 += kRows) {
      int64_t rows = std::min(kRows, M - i0);
      std::fill(sums.begin(), sums.end(), 0.0);
      for (int64_t k = 0; k < K; ++k) {
        const double *bk = &rowsOfB[size_t(k * N)];
        for (int64_t i = 0; i < rows; ++i) {
          double av = A[t * ab + (i0 + i) * as0 + k * as1];
          double *sum = &sums[size_t(i * N)];
          for (int64_t j = 0; j < N; ++j)
            sum[j] += av * bk[j];
        }
      }
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < N; ++j, w.next()) {
          double value = alpha * sums[size_t(i * N + j)];
          if (bias)
            value += beta * ldf(*bias, w.off[ib]);
          o[(t * M + i0 + i) * N + j] = static_cast<float>(value);
        }
    }
  }
}

void runMm(const Call &c) { matmul(*c.tensor(0), *c.tensor(1), c.out(0), 1, nullptr, 0, 1); }
void runBmm(const Call &c) {
  matmul(*c.tensor(0), *c.tensor(1), c.out(0), c.tensor(0)->shape[0], nullptr, 0, 1);
}
void runAddmm(const Call &c) {
  matmul(*c.tensor(1), *c.tensor(2), c.out(0), 1, c.tensor(0), c.f("beta", 1), c.f("alpha", 1));
}

//===----------------------------------------------------------------------===//
// baddbmm(self, batch1, batch2, beta=1, alpha=1): beta * self + alpha *
// batch1 @ batch2, self broadcast to [B, M, N] (ignored when beta is 0, as
// ATen); each product a fixed-order sum in double.
//===----------------------------------------------------------------------===//

std::string prepareBaddbmm(const Signature &sig) {
  TRY(operands(sig, 3));
  const Tensor &self = *sig.call.tensor(0), &a = *sig.call.tensor(1), &b = *sig.call.tensor(2);
  const Tensor &out = sig.outputs[0];
  TRY(dtypeIs(self, "self", coop_pb::FLOAT32));
  TRY(dtypeIs(a, "batch1", coop_pb::FLOAT32));
  TRY(dtypeIs(b, "batch2", coop_pb::FLOAT32));
  TRY(dtypeIs(out, "the output", coop_pb::FLOAT32));
  if (a.rank != 3 || b.rank != 3 || out.rank != 3 || a.shape[0] != b.shape[0] ||
      a.shape[2] != b.shape[1] || out.shape[0] != a.shape[0] || out.shape[1] != a.shape[1] ||
      out.shape[2] != b.shape[2])
    return "batch1 " + shapeText(a) + " x batch2 " + shapeText(b) + " -> " + shapeText(out) +
           " is not a batched matrix product";
  if (!broadcastsTo(self, out))
    return "self " + shapeText(self) + " does not broadcast to " + shapeText(out);
  return "";
}

void runBaddbmm(const Call &c) {
  double beta = c.f("beta", 1);
  matmul(*c.tensor(1), *c.tensor(2), c.out(0), c.tensor(1)->shape[0],
         beta != 0 ? c.tensor(0) : nullptr, beta, c.f("alpha", 1));
}

} // namespace

std::vector<KernelDef> matmulCpuKernels() {
  std::vector<KernelDef> k;
  KernelAdder add{k};
  // Linear algebra.
  add("aten.mm", {"self", "mat2"}, "", prepareMatmul<0>, runMm);
  add("aten.bmm", {"self", "mat2"}, "", prepareMatmul<1>, runBmm);
  add("aten.addmm", {"self", "mat1", "mat2"},
      "beta:scalar? alpha:scalar?", prepareMatmul<2>, runAddmm);
  add("aten.baddbmm", {"self", "batch1", "batch2"},
      "beta:scalar? alpha:scalar?", prepareBaddbmm, runBaddbmm);
  return k;
}

} // namespace coop::rt
