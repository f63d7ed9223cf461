//===- CudaOpsNorm.cpp - Handlers: normalization, embedding, indexing and the 2-d loss ===//

#include "cuda/CudaBackendImpl.h"
#include "cuda/CudaKernelsIndexing.h"
#include "cuda/CudaKernelsNorm.h"

namespace coop::rt::cuda {
namespace {

/// `t` read by row-major element index; an empty view when absent.
ElementView viewOf(const Tensor *t) {
  ElementView v;
  if (t) {
    v.t = stridedOf(*t);
    v.shape = shapeOf(*t);
  }
  return v;
}

/// Output `index`'s memory, or nullptr for an output output_mask leaves out.
char *maskedOutput(const Call &c, int index) { return index >= 0 ? c.out(index).data : nullptr; }

/// Rows and columns of a layer norm: columns span normalized_shape.
void layerNormGeometry(const Call &c, const Tensor &input, LayerNorm &p) {
  int64_t dims[kMaxRank];
  int n = std::max(0, c.ints("normalized_shape", dims, kMaxRank));
  p.cols = 1;
  for (int k = 0; k < n; ++k)
    p.cols *= dims[k];
  p.rows = p.cols ? input.numel() / p.cols : 0;
}

// native_layer_norm(input, weight?, bias?, normalized_shape, eps)
void layerNorm(CudaBackend &b, const Call &c) {
  LayerNorm p;
  p.input = viewOf(c.tensor(0));
  p.weight = viewOf(c.tensor(1));
  p.bias = viewOf(c.tensor(2));
  layerNormGeometry(c, *c.tensor(0), p);
  p.eps = static_cast<float>(c.f("eps", 1e-5));
  p.out = c.out(0).data;
  p.mean = c.out(1).data;
  p.rstd = c.out(2).data;
  b.check(launchLayerNorm(p, b.stream), "native_layer_norm kernel");
}

// native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd,
// weight?, bias?, output_mask)
void layerNormBackward(CudaBackend &b, const Call &c) {
  LayerNorm p;
  p.grad = viewOf(c.tensor(0));
  p.input = viewOf(c.tensor(1));
  p.savedMean = viewOf(c.tensor(2));
  p.savedRstd = viewOf(c.tensor(3));
  p.weight = viewOf(c.tensor(4));
  layerNormGeometry(c, *c.tensor(1), p);
  int outs[3];
  maskedOutputs(c, outs);
  p.gradInput = maskedOutput(c, outs[0]);
  p.gradWeight = maskedOutput(c, outs[1]);
  p.gradBias = maskedOutput(c, outs[2]);
  b.check(launchLayerNormBackward(p, b.stream), "native_layer_norm_backward kernel");
}

/// An [N, C, ...] input's sizes: S is the product of the spatial dims.
void batchNormGeometry(const Tensor &input, BatchNorm &p) {
  p.N = input.shape[0];
  p.C = input.rank > 1 ? input.shape[1] : 1;
  p.S = 1;
  for (int d = 2; d < input.rank; ++d)
    p.S *= input.shape[d];
}

// native_batch_norm(input, weight?, bias?, running_mean?, running_var?,
// training, momentum, eps) -> out, save_mean, save_invstd[, running_mean,
// running_var]: the last two, when present, are the running statistics
// updated in place (they hold the old values already).
void batchNorm(CudaBackend &b, const Call &c) {
  BatchNorm p;
  p.input = viewOf(c.tensor(0));
  p.weight = viewOf(c.tensor(1));
  p.bias = viewOf(c.tensor(2));
  p.runningMean = viewOf(c.tensor(3));
  p.runningVar = viewOf(c.tensor(4));
  batchNormGeometry(*c.tensor(0), p);
  p.training = c.b("training");
  p.momentum = c.f("momentum", 0.1);
  p.eps = c.f("eps", 1e-5);
  p.out = c.out(0).data;
  p.saveMean = c.out(1).data;
  p.saveMeanCount = c.out(1).numel();
  p.saveInvstd = c.out(2).data;
  p.saveInvstdCount = c.out(2).numel();
  if (c.numOutputs == 5) {
    p.newMean = c.out(3).data;
    p.newVar = c.out(4).data;
  }
  b.check(launchBatchNorm(p, b.stream), "native_batch_norm kernel");
}

// native_batch_norm_backward(grad_out, input, weight?, running_mean?,
// running_var?, save_mean?, save_invstd?, train, eps, output_mask)
void batchNormBackward(CudaBackend &b, const Call &c) {
  BatchNorm p;
  p.grad = viewOf(c.tensor(0));
  p.input = viewOf(c.tensor(1));
  p.weight = viewOf(c.tensor(2));
  p.runningMean = viewOf(c.tensor(3));
  p.runningVar = viewOf(c.tensor(4));
  p.savedMean = viewOf(c.tensor(5));
  p.savedInvstd = viewOf(c.tensor(6));
  batchNormGeometry(*c.tensor(1), p);
  p.training = c.b("train");
  p.eps = c.f("eps", 1e-5);
  int outs[3];
  maskedOutputs(c, outs);
  p.gradInput = maskedOutput(c, outs[0]);
  p.gradWeight = maskedOutput(c, outs[1]);
  p.gradBias = maskedOutput(c, outs[2]);
  b.check(launchBatchNormBackward(p, b.stream), "native_batch_norm_backward kernel");
}

// embedding(weight [V, D], indices, padding_idx, scale_grad_by_freq, sparse)
void embedding(CudaBackend &b, const Call &c) {
  const Tensor &weight = *c.tensor(0), &indices = *c.tensor(1);
  Embedding p;
  p.indices = viewOf(&indices);
  p.count = indices.numel();
  p.rows = weight.shape[0];
  p.width = weight.shape[1];
  p.weight = stridedOf(weight);
  p.out = c.out(0).data;
  b.check(launchEmbedding(p, b.stream), "embedding kernel");
}

// embedding_dense_backward(grad_output, indices, num_weights, padding_idx,
// scale_grad_by_freq): the CPU kernel does not scale by frequency.
void embeddingBackward(CudaBackend &b, const Call &c) {
  const Tensor &indices = *c.tensor(1), &out = c.out(0);
  Embedding p;
  p.grad = viewOf(c.tensor(0));
  p.indices = viewOf(&indices);
  p.count = indices.numel();
  p.rows = out.shape[0];
  p.width = out.shape[1];
  p.paddingIdx = c.i("padding_idx", -1);
  p.out = out.data;
  b.check(launchEmbeddingBackward(p, b.stream), "embedding_dense_backward kernel");
}

/// The single index tensor of the `indices` list (the CPU kernel's
/// prepare accepts no other).
const Tensor &indexTensor(const Call &c) {
  return c.inputs[c.arg("indices")->list().items(0).operand()];
}

/// Rows of self that the index selects.
IndexRows indexRows(const Call &c) {
  const Tensor &self = *c.tensor(0), &index = indexTensor(c);
  IndexRows p;
  p.index = viewOf(&index);
  p.count = index.numel();
  p.rows = self.shape[0];
  p.inner = p.rows ? self.numel() / p.rows : 0;
  p.self = viewOf(&self);
  return p;
}

// index.Tensor(self, indices=[index]): out[i, ...] = self[index[i], ...].
void indexByTensor(CudaBackend &b, const Call &c) {
  IndexRows p = indexRows(c);
  p.width = static_cast<int>(elementSize(c.out(0).dtype));
  p.out = c.out(0).data;
  b.check(launchIndex(p, b.stream), "index.Tensor kernel");
}

// index_put(self, indices=[index], values, accumulate): self, with the
// selected rows set to (or increased by) values broadcast to index's shape
// followed by self's trailing dims.
void indexPut(CudaBackend &b, const Call &c) {
  const Tensor &self = *c.tensor(0), &index = indexTensor(c), &out = c.out(0);
  IndexRows p = indexRows(c);
  Tensor indexed;
  indexed.rank = index.rank + self.rank - 1;
  std::copy(index.shape, index.shape + index.rank, indexed.shape);
  std::copy(self.shape + 1, self.shape + self.rank, indexed.shape + index.rank);
  p.indexed = shapeOf(indexed);
  p.values = operandOf(*c.tensor(2), indexed);
  p.accumulate = c.b("accumulate");
  p.out = out.data;
  if (out.data != self.data) // not in place: the rows not put keep self's values
    b.copy(out, self);
  b.check(launchIndexPut(p, b.stream), "index_put kernel");
}

/// nll_loss2d's operands: self [N, C, H, W], target [N, H, W].
Nll2d nll2d(const Call &c, const Tensor &self, const Tensor &target) {
  Nll2d p;
  p.self = stridedOf(self);
  p.target = stridedOf(target);
  p.N = self.shape[0];
  p.C = self.shape[1];
  p.H = self.shape[2];
  p.W = self.shape[3];
  p.ignore = c.i("ignore_index", -100);
  p.mean = c.i("reduction", 1) == 1;
  return p;
}

void nll2dForward(CudaBackend &b, const Call &c) {
  Nll2d p = nll2d(c, *c.tensor(0), *c.tensor(1));
  p.out = c.out(0).data;
  p.totalWeight = c.out(1).data;
  b.check(launchNll2dForward(p, b.stream), "nll_loss2d_forward kernel");
}

// nll_loss2d_backward(grad_output, self, target, weight?, reduction,
// ignore_index, total_weight)
void nll2dBackward(CudaBackend &b, const Call &c) {
  Nll2d p = nll2d(c, *c.tensor(1), *c.tensor(2));
  p.grad = c.tensor(0)->data;
  p.total = c.tensor(4)->data;
  p.out = c.out(0).data;
  b.check(launchNll2dBackward(p, b.stream), "nll_loss2d_backward kernel");
}

} // namespace

void addNormHandlers(HandlerTable &h) {
  h["aten.native_layer_norm"] = layerNorm;
  h["aten.native_layer_norm_backward"] = layerNormBackward;
  h["aten.native_batch_norm"] = batchNorm;
  h["aten.native_batch_norm_backward"] = batchNormBackward;
  h["aten.embedding"] = embedding;
  h["aten.embedding_dense_backward"] = embeddingBackward;
  h["aten.index.Tensor"] = indexByTensor;
  for (const char *name : {"aten.index_put", "aten.index_put_"})
    h[name] = indexPut;
  h["aten.nll_loss2d_forward"] = nll2dForward;
  h["aten.nll_loss2d_backward"] = nll2dBackward;
}

} // namespace coop::rt::cuda
