//===- CpuKernelsFill.cpp - CPU kernels: fills, copies and random masks ---===//
//
// zeros, ones and full (and their _like and new_ forms; empty ones are
// zero-filled), copies in logical order (clone, contiguous, view, reshape,
// ...), bernoulli_ and native_dropout. CUDA: CudaKernelsFill.cu's fill, copy
// and dropout kernels.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "Random.h"


namespace coop::rt {
namespace {

using namespace cpu;

//===----------------------------------------------------------------------===//
// Fills, copies, random
//===----------------------------------------------------------------------===//

std::string prepareFill(const Signature &sig) {
  if (sig.call.numOutputs != 1)
    return "has " + std::to_string(sig.call.numOutputs) + " outputs, expected 1";
  int64_t w = elementSize(sig.outputs[0].dtype);
  if (w != 1 && w != 4 && w != 8)
    return std::string("cannot fill ") + dtypeName(sig.outputs[0].dtype);
  return "";
}

void fill(const Tensor &out, double value) {
  int64_t n = out.numel();
  switch (out.dtype) {
  case coop_pb::FLOAT32: std::fill_n(out.ptr<float>(), n, static_cast<float>(value)); break;
  case coop_pb::FLOAT64: std::fill_n(out.ptr<double>(), n, value); break;
  case coop_pb::INT64: std::fill_n(out.ptr<int64_t>(), n, static_cast<int64_t>(value)); break;
  case coop_pb::INT32: std::fill_n(out.ptr<int32_t>(), n, static_cast<int32_t>(value)); break;
  default: std::fill_n(out.ptr<uint8_t>(), n, static_cast<uint8_t>(value != 0)); break;
  }
}

// empty/empty_like are zero-filled: a deterministic run reads no garbage.
void runZeros(const Call &c) { fill(c.out(0), 0); }
void runOnes(const Call &c) { fill(c.out(0), 1); }
void runFull(const Call &c) { fill(c.out(0), c.f("fill_value")); }

std::string prepareCopy(const Signature &sig) {
  if (sig.call.numOutputs != 1 || sig.call.numInputs != 1)
    return "takes one input and one output";
  if (sig.inputs[0].dtype != sig.outputs[0].dtype ||
      sig.inputs[0].numel() != sig.outputs[0].numel())
    return "copies " + shapeText(sig.inputs[0]) + " " + dtypeName(sig.inputs[0].dtype) +
           " into " + shapeText(sig.outputs[0]) + " " + dtypeName(sig.outputs[0].dtype);
  // A view or reshape's `size` (one dimension may be -1) is its output's shape.
  int64_t size[kMaxRank];
  int n = sig.call.ints("size", size, kMaxRank);
  const Tensor &out = sig.outputs[0];
  bool same = n < 0 || n == out.rank;
  for (int d = 0; same && d < n; ++d)
    same = size[d] == out.shape[d] || size[d] == -1;
  if (!same) {
    std::string text = "[";
    for (int d = 0; d < n && d < kMaxRank; ++d)
      text += (d ? "," : "") + std::to_string(size[d]);
    return "size " + text + (n > kMaxRank ? ",...]" : "]") + " is not the output's shape " +
           shapeText(out);
  }
  return "";
}

void runCopy(const Call &c) { copyTensor(c.out(0), c.inputs[0]); }

std::string prepareBernoulli(const Signature &sig) {
  TRY(expect(sig, 1));
  if (!sig.call.has("p"))
    return "has no float 'p'";
  return "";
}

void runBernoulli(const Call &c) {
  const Tensor &out = c.out(0);
  double p = c.f("p", 0.5);
  uint64_t key = streamKey(c.rngSeed);
  float *o = outf(out);
  for (int64_t i = 0, n = out.numel(); i < n; ++i)
    o[i] = uniform(key, c.rngOffset + i) < p ? 1.f : 0.f;
}

std::string prepareNativeDropout(const Signature &sig) {
  if (sig.call.numOutputs != 2)
    return "has " + std::to_string(sig.call.numOutputs) + " outputs, expected 2";
  TRY(needTensor(sig, 0, "input"));
  if (sig.outputs[0].dtype != coop_pb::FLOAT32 || sig.outputs[1].dtype != coop_pb::BOOL)
    return "outputs are not (float32, bool)";
  if (!sameShape(sig.outputs[0], *sig.call.tensor(0)) ||
      !sameShape(sig.outputs[1], *sig.call.tensor(0)))
    return "outputs do not have the input's shape";
  return "";
}

// native_dropout(input, p, train): keep element i when
// uniform(seed, offset + i) < 1 - p, scaled by 1 / (1 - p).
void runNativeDropout(const Call &c) {
  const Tensor &in = *c.tensor(0), &out = c.out(0), &mask = c.out(1);
  double p = c.b("train", true) ? c.f("p") : 0;
  float scale = p < 1 ? static_cast<float>(1 / (1 - p)) : 0.f;
  uint64_t key = streamKey(c.rngSeed);
  Walk w(out);
  int ia = w.add(in);
  float *o = outf(out);
  uint8_t *m = mask.ptr<uint8_t>();
  for (int64_t i = 0, n = out.numel(); i < n; ++i, w.next()) {
    bool keep = uniform(key, c.rngOffset + i) < 1 - p;
    m[i] = keep;
    o[i] = keep ? ldf(in, w.off[ia]) * scale : 0.f;
  }
}

} // namespace

std::vector<KernelDef> fillCpuKernels() {
  std::vector<KernelDef> k;
  KernelAdder add{k};
  // Fills: the *_like and new_* ones read only their input's shape.
  for (const char *name : {"aten.zeros_like", "aten.empty_like"})
    add(name, {"self"}, "", prepareFill, runZeros);
  for (const char *name : {"aten.new_zeros", "aten.new_empty"})
    add(name, {"self"}, "size:ints[0,)", prepareFill, runZeros);
  add("aten.ones_like", {"self"}, "", prepareFill, runOnes);
  add("aten.full_like", {"self"}, "fill_value:scalar", prepareFill, runFull);
  for (const char *name : {"aten.zeros", "aten.empty.memory_format"})
    add(name, {}, "size:ints[0,)", prepareFill, runZeros);
  add("aten.ones", {}, "size:ints[0,)", prepareFill, runOnes);
  add("aten.full", {}, "size:ints[0,) fill_value:scalar", prepareFill, runFull);
  // Copies in logical order.
  for (const char *name :
       {"coop.copy", "aten.clone", "aten.contiguous", "aten.alias", "aten.detach"})
    add(name, {"self"}, "", prepareCopy, runCopy);
  for (const char *name : {"aten._unsafe_view", "aten.view", "aten.reshape"})
    add(name, {"self"}, "size:ints? stride:ints?", prepareCopy, runCopy);
  // Random.
  add("aten.bernoulli_.float", {"self"}, "p:float[0,1] rng", prepareBernoulli, runBernoulli);
  add("aten.native_dropout", {"input"},
      "p:float[0,1] train:bool? rng", prepareNativeDropout, runNativeDropout);
  return k;
}

} // namespace coop::rt
