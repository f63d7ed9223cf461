//===- GraphGenerator.cpp - Seeded training-like step graphs --------------===//

#include "coop/Planner/GraphGenerator.h"

#include <random>
#include <string>

namespace coop::planner {
namespace {

class Builder {
public:
  Builder(uint64_t seed, const TrainingGraphShape &shape)
      : rng_(seed), shape_(shape) {}

  Graph build();

private:
  // Hand-rolled draws: std distributions differ between standard libraries
  // and the same seed must give the same graph everywhere.
  bool chance(double p) { return double(rng_() >> 11) * 0x1.0p-53 < p; }
  int64_t pick(int64_t lo, int64_t hi) {
    return lo + int64_t(rng_() % uint64_t(hi - lo + 1));
  }
  int64_t bytes(int64_t lo, int64_t hi) { return pick(lo / 512, hi / 512) * 512; }
  TensorId out(OpId op, size_t i = 0) { return g_.ops[op].outputs[i]; }
  /// Expensive kernels cost about 1 us per 64 bytes, cheap ones 1 us/4 KiB.
  static double cost(int64_t bytes, bool expensive) {
    return expensive ? double(bytes) / 64.0 : double(bytes) / 4096.0;
  }

  struct Layer {
    TensorId weight, gradient, momentum;
    TensorId input;         // what the expensive op read
    TensorId preActivation; // old value, if backward reads it
    TensorId activation;    // what the activation backward reads
    TensorId mask = kNone;  // dropout mask
    TensorId bnInput = kNone, bnWeight = kNone, saveMean = kNone,
             saveInvstd = kNone; // batch norm, if any
    int64_t inputBytes, outputBytes;
    bool convolution;
  };

  std::mt19937_64 rng_;
  const TrainingGraphShape &shape_;
  Graph g_;
};

Graph Builder::build() {
  const int64_t inputBytes =
      bytes(shape_.minActivationBytes, shape_.maxActivationBytes);
  TensorId h = g_.addArgument("images", inputBytes, TensorRole::Input);
  TensorId labels = g_.addArgument("labels", 512, TensorRole::Input);
  int64_t hBytes = inputBytes;
  std::vector<Layer> layers;
  std::vector<TensorId> earlier; // activations available for skips

  for (int32_t i = 0; i < shape_.layers; ++i) {
    const std::string n = std::to_string(i);
    Layer L;
    const int64_t wBytes =
        bytes(shape_.minParameterBytes, shape_.maxParameterBytes);
    L.weight = g_.addArgument("w" + n, wBytes, TensorRole::Parameter);
    L.gradient = g_.addArgument("gw" + n, wBytes, TensorRole::Gradient);
    L.momentum = g_.addArgument("m" + n, wBytes, TensorRole::OptimizerState);
    L.input = h;
    L.inputBytes = hBytes;
    L.outputBytes = bytes(shape_.minActivationBytes, shape_.maxActivationBytes);
    L.convolution = chance(0.5);
    const int64_t ws =
        chance(shape_.workspaceProbability) ? L.outputBytes / 2 : 0;
    TensorId a = out(g_.addOp(L.convolution ? "aten.convolution" : "aten.mm",
                              {h, L.weight}, {L.outputBytes}, {},
                              cost(L.outputBytes, true), ws));
    if (!earlier.empty() && chance(shape_.skipProbability)) {
      TensorId skip = earlier[size_t(pick(0, int64_t(earlier.size()) - 1))];
      a = out(g_.addOp("aten.add", {a, skip}, {L.outputBytes}, {},
                       cost(L.outputBytes, false)));
    }
    if (shape_.batchNormProbability > 0 &&
        chance(shape_.batchNormProbability)) {
      // Training batch norm: normalized output and batch statistics fresh,
      // running statistics (persistent buffers) updated in place.
      const int64_t stat = 512;
      L.bnInput = a;
      L.bnWeight = g_.addArgument("bn_w" + n, stat, TensorRole::Parameter);
      TensorId mean = g_.addArgument("bn_rm" + n, stat, TensorRole::Buffer);
      TensorId var = g_.addArgument("bn_rv" + n, stat, TensorRole::Buffer);
      OpId bn = g_.addOp("aten.native_batch_norm",
                         {a, L.bnWeight, mean, var},
                         {L.outputBytes, stat, stat, stat, stat},
                         {kNone, kNone, kNone, 2, 3},
                         cost(L.outputBytes, false));
      g_.ops[bn].discardableInPlace = true;
      a = out(bn, 0);
      L.saveMean = out(bn, 1);
      L.saveInvstd = out(bn, 2);
    }
    L.preActivation = kNone;
    if (chance(shape_.inPlaceProbability)) {
      if (chance(shape_.oldValueProbability))
        L.preActivation = a; // e.g. gelu_: backward needs the input
      a = out(g_.addOp("aten.relu_", {a}, {L.outputBytes}, {0},
                       cost(L.outputBytes, false)));
    } else {
      a = out(g_.addOp("aten.relu", {a}, {L.outputBytes}, {},
                       cost(L.outputBytes, false)));
    }
    L.activation = a;
    if (chance(shape_.dropoutProbability)) {
      OpId drop = g_.addOp("aten.dropout", {a},
                           {L.outputBytes, L.outputBytes / 4 + 1}, {},
                           cost(L.outputBytes, false));
      g_.ops[drop].isRandom = true;
      g_.ops[drop].seed = uint64_t(i);
      a = out(drop, 0);
      L.mask = out(drop, 1);
    }
    if (chance(shape_.viewProbability))
      a = out(g_.addView("aten.view", a, {L.outputBytes}));
    earlier.push_back(a);
    h = a;
    hBytes = L.outputBytes;
    layers.push_back(L);
  }

  OpId lossOp = g_.addOp("aten.cross_entropy", {h, labels}, {4}, {},
                         cost(hBytes, false));
  g_.markStepOutput(out(lossOp));
  TensorId grad = out(g_.addOp("aten.cross_entropy_backward",
                               {out(lossOp), h, labels}, {hBytes}, {},
                               cost(hBytes, false)));

  for (int32_t i = shape_.layers - 1; i >= 0; --i) {
    const Layer &L = layers[size_t(i)];
    if (L.mask != kNone)
      grad = out(g_.addOp("aten.dropout_backward", {grad, L.mask},
                          {L.outputBytes}, {}, cost(L.outputBytes, false)));
    TensorId saved = L.preActivation != kNone ? L.preActivation : L.activation;
    grad = out(g_.addOp("aten.threshold_backward", {grad, saved},
                        {L.outputBytes}, {}, cost(L.outputBytes, false)));
    if (L.bnInput != kNone)
      grad = out(g_.addOp("aten.native_batch_norm_backward",
                          {grad, L.bnInput, L.bnWeight, L.saveMean,
                           L.saveInvstd},
                          {L.outputBytes}, {}, cost(L.outputBytes, false)));
    const char *kernel =
        L.convolution ? "aten.convolution_backward" : "aten.mm";
    const int64_t wBytes = g_.tensors[L.weight].bytes;
    TensorId gw = out(g_.addOp(kernel, {grad, L.input}, {wBytes}, {},
                               cost(L.outputBytes, true)));
    if (i > 0)
      grad = out(g_.addOp(kernel, {grad, L.weight}, {L.inputBytes}, {},
                          cost(L.outputBytes, true)));
    TensorId acc = out(g_.addOp("aten.add_", {L.gradient, gw}, {wBytes}, {0},
                                cost(wBytes, false)));
    TensorId m = out(g_.addOp("aten.mul_add_", {L.momentum, acc}, {wBytes},
                              {0}, cost(wBytes, false)));
    g_.addOp("aten.sub_", {L.weight, m}, {wBytes}, {0}, cost(wBytes, false));
  }
  return std::move(g_);
}

} // namespace

Status generateTrainingGraph(uint64_t seed, const TrainingGraphShape &shape,
                             Graph *out) {
  *out = Builder(seed, shape).build();
  return out->finalize();
}

} // namespace coop::planner
