//===- StepAnalysis.cpp - What the planner knows before simulating -------===//

#include "StepAnalysis.h"

#include <algorithm>

namespace coop::planner {

StepAnalysis analyse(const Graph &g, const PlanOptions &options) {
  const size_t n = g.tensors.size();
  const int32_t opCount = static_cast<int32_t>(g.ops.size());
  StepAnalysis a;
  a.content.resize(n);
  a.lastUse.assign(n, -1);
  a.persistent.assign(n, 0);
  a.recomputable.assign(n, 0);
  a.evictable.assign(n, 0);
  a.expensive.assign(n, 0);
  a.dieAt.resize(g.ops.size());
  a.readers.resize(n);
  a.neighbourOps.resize(n);
  a.discardsInPlace.assign(g.ops.size(), 0);
  a.recomputeReads.resize(g.ops.size());

  for (size_t i = 0; i < n; ++i) {
    TensorId t = static_cast<TensorId>(i);
    while (g.tensors[t].viewOf != kNone)
      t = g.tensors[t].viewOf;
    a.content[i] = t;
    a.persistent[i] = g.isPersistent(static_cast<TensorId>(i));
  }
  for (OpId k = 0; k < opCount; ++k) {
    auto listOnce = [k](std::vector<OpId> &ops) {
      if (ops.empty() || ops.back() != k)
        ops.push_back(k);
    };
    for (TensorId in : g.ops[k].inputs) {
      listOnce(a.readers[a.content[in]]);
      listOnce(a.neighbourOps[a.content[in]]);
    }
    for (TensorId out : g.ops[k].outputs)
      listOnce(a.neighbourOps[a.content[out]]);
  }

  a.producerNeighbourStart.reserve(n + 1);
  for (size_t i = 0; i < n; ++i) {
    a.producerNeighbourStart.push_back(int64_t(a.producerNeighbours.size()));
    if (g.tensors[i].producer == kNone)
      continue;
    const Op &producer = g.ops[g.tensors[i].producer];
    for (TensorId in : producer.inputs)
      a.producerNeighbours.push_back(a.content[in]);
    for (TensorId out : producer.outputs)
      a.producerNeighbours.push_back(a.content[out]);
  }
  a.producerNeighbourStart.push_back(int64_t(a.producerNeighbours.size()));

  // The final version of a persistent storage is the one produced last.
  std::vector<TensorId> finalVersion(n, kNone);
  for (size_t i = 0; i < n; ++i) {
    if (a.content[i] != TensorId(i) || !a.persistent[i])
      continue;
    TensorId root = g.storageOf(static_cast<TensorId>(i));
    TensorId &fin = finalVersion[root];
    if (fin == kNone || g.tensors[i].producer > g.tensors[fin].producer)
      fin = static_cast<TensorId>(i);
  }

  for (size_t i = 0; i < n; ++i) {
    const Tensor &t = g.tensors[i];
    int32_t &last = a.lastUse[a.content[i]];
    last = std::max<int32_t>(last, t.producer);
    if (!t.consumers.empty())
      last = std::max<int32_t>(last, t.consumers.back());
    if (t.isStepOutput)
      last = kForever;
    if (finalVersion[i] != kNone)
      a.lastUse[finalVersion[i]] = kForever;
  }

  // A value can be recomputed at op k if every input of its producer is
  // still available then (k <= its horizon, the least `avail` of those
  // inputs); `avail` is the last op at which a value can be had, resident
  // or recomputed. Evictable values are those whose uses all fall within
  // their horizon.
  std::vector<int32_t> avail(n, -1);
  for (size_t i = 0; i < n; ++i)
    if (g.tensors[i].producer == kNone)
      avail[i] = a.lastUse[i];
  for (OpId k = 0; k < opCount; ++k) {
    const Op &op = g.ops[k];
    if (op.isView)
      continue;
    bool rerunnable = true;
    bool hasInPlaceOutput = false;
    bool hasFreshOutput = false, freshAllTransient = true;
    bool inPlaceAllPersistent = true;
    for (TensorId out : op.outputs) {
      const bool inPlace = g.tensors[out].previousVersion != kNone;
      rerunnable &= !a.persistent[out];
      hasInPlaceOutput |= inPlace;
      hasFreshOutput |= !inPlace;
      (inPlace ? inPlaceAllPersistent : freshAllTransient) &=
          inPlace == bool(a.persistent[out]);
    }
    // Re-running a multi-output op that writes in place would have to
    // rewrite some results where they already live: not supported...
    rerunnable &= !(hasInPlaceOutput && op.outputs.size() > 1);
    // ... unless the in-place results are side effects a recomputation may
    // throw away. Only persistent ones are: a transient version could be
    // gone or overwritten in ways the planner does not track here.
    if (op.discardableInPlace && hasInPlaceOutput && hasFreshOutput &&
        freshAllTransient && inPlaceAllPersistent) {
      rerunnable = true;
      a.discardsInPlace[k] = 1;
    }
    for (TensorId in : op.inputs) {
      bool overwrittenByDiscarded = false;
      if (a.discardsInPlace[k])
        for (TensorId out : op.outputs)
          overwrittenByDiscarded |= g.tensors[out].previousVersion == in;
      if (!overwrittenByDiscarded)
        a.recomputeReads[k].push_back(a.content[in]);
    }
    int32_t inputsAvailable = kForever;
    for (TensorId in : a.recomputeReads[k])
      inputsAvailable = std::min(inputsAvailable, avail[in]);
    for (TensorId out : op.outputs) {
      const bool discarded =
          a.discardsInPlace[k] && g.tensors[out].previousVersion != kNone;
      if (discarded) {
        // The real version: persistent, written only by the Run.
        avail[out] = a.lastUse[out];
        a.expensive[out] = isExpensiveKernel(op, g.tensors[out].bytes, options);
        if (a.lastUse[out] >= 0 && a.lastUse[out] < opCount)
          a.dieAt[a.lastUse[out]].push_back(out);
        continue;
      }
      a.recomputable[out] = rerunnable;
      a.evictable[out] = rerunnable && !a.persistent[out] &&
                         a.lastUse[out] != kForever &&
                         a.lastUse[out] <= inputsAvailable;
      avail[out] = rerunnable ? std::max(a.lastUse[out], inputsAvailable)
                              : a.lastUse[out];
      a.expensive[out] = isExpensiveKernel(op, g.tensors[out].bytes, options);
      if (a.lastUse[out] >= 0 && a.lastUse[out] < opCount)
        a.dieAt[a.lastUse[out]].push_back(out);
    }
  }
  a.chainReadStart.reserve(g.ops.size() + 1);
  for (const std::vector<TensorId> &reads : a.recomputeReads) {
    a.chainReadStart.push_back(int64_t(a.chainReads.size()));
    for (TensorId in : reads) {
      const OpId producer = g.tensors[in].producer;
      if (producer != kNone && a.recomputable[in])
        a.chainReads.push_back({in, producer, g.ops[producer].costUs});
    }
  }
  a.chainReadStart.push_back(int64_t(a.chainReads.size()));
  // Derived values that may be evicted bring their inputs back when they
  // are recomputed, so an input may be needed until the derived value's own
  // last recompute use.
  a.lastRecomputeUse = a.lastUse;
  std::vector<int32_t> readers(n, 0);
  for (OpId k = opCount - 1; k >= 0; --k) {
    int32_t derivedUse = -1;
    for (TensorId out : g.ops[k].outputs)
      if (a.recomputable[out] && a.lastUse[out] != kForever)
        derivedUse = std::max(derivedUse, a.lastRecomputeUse[out]);
    std::vector<TensorId> reads = a.recomputeReads[k];
    std::sort(reads.begin(), reads.end());
    reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
    for (TensorId in : reads) {
      a.lastRecomputeUse[in] = std::max(a.lastRecomputeUse[in], derivedUse);
      ++readers[in];
    }
  }
  a.sharedInput.assign(n, 0);
  for (size_t i = 0; i < n; ++i)
    a.sharedInput[i] = readers[i] > 1;

  for (size_t i = 0; i < n; ++i)
    if (g.tensors[i].producer == kNone) {
      a.persistentBytes += allocationSize(g.tensors[i].bytes, options.alignment);
      if (a.lastUse[i] >= 0 && a.lastUse[i] < opCount)
        a.dieAt[a.lastUse[i]].push_back(static_cast<TensorId>(i));
    }

  // Values no policy may evict (they cannot be recomputed where they are
  // read again) stay resident from their producer to their last use: the
  // bytes of those alive across each op, its own operands left out below.
  std::vector<int64_t> heldAcross(opCount + 1, 0);
  auto isHeld = [&](TensorId v) {
    return a.content[v] == v && !a.persistent[v] && !a.evictable[v] &&
           g.tensors[v].producer != kNone;
  };
  for (size_t i = 0; i < n; ++i) {
    const TensorId v = static_cast<TensorId>(i);
    if (!isHeld(v))
      continue;
    const int32_t from = g.tensors[v].producer + 1;
    const int32_t to = std::min<int32_t>(a.lastUse[v], opCount); // exclusive
    if (from < to) {
      heldAcross[from] += allocationSize(g.tensors[v].bytes, options.alignment);
      heldAcross[to] -= allocationSize(g.tensors[v].bytes, options.alignment);
    }
  }
  for (OpId k = 1; k <= opCount; ++k)
    heldAcross[k] += heldAcross[k - 1];

  // Floor: persistent state, the held values alive across an op, and the
  // largest set of buffers that op needs at once: its transient inputs, the
  // outputs that cannot reuse an operand's buffer, and its workspace.
  a.floorBytes = a.persistentBytes;
  for (OpId k = 0; k < opCount; ++k) {
    const Op &op = g.ops[k];
    std::vector<TensorId> buffers;
    for (TensorId in : op.inputs)
      if (!a.persistent[a.content[in]])
        buffers.push_back(a.content[in]);
    std::sort(buffers.begin(), buffers.end());
    buffers.erase(std::unique(buffers.begin(), buffers.end()), buffers.end());
    int64_t held = heldAcross[k];
    int64_t bytes = workspaceAllocation(op, options.alignment);
    for (TensorId b : buffers) {
      bytes += allocationSize(g.tensors[b].bytes, options.alignment);
      if (isHeld(b) && g.tensors[b].producer < k && a.lastUse[b] > k)
        held -= allocationSize(g.tensors[b].bytes, options.alignment);
    }
    bytes += held;
    if (!op.isView)
      for (TensorId out : op.outputs) {
        TensorId prev = g.tensors[out].previousVersion;
        bool reusesOperand = false;
        if (prev != kNone && options.recomputableInPlace) {
          TensorId operand = a.content[prev];
          reusesOperand = a.lastUse[operand] == k ||
                          (options.policy != Policy::None &&
                           a.evictable[operand]);
        }
        if (!reusesOperand)
          bytes += allocationSize(g.tensors[out].bytes, options.alignment);
      }
    if (a.persistentBytes + bytes > a.floorBytes) {
      a.floorBytes = a.persistentBytes + bytes;
      a.floorOp = k;
      a.floorHeldBytes = held;
    }
  }
  return a;
}

Status checkAlignment(const PlanOptions &options) {
  if (options.alignment <= 0)
    return Status::error("alignment must be positive");
  return Status::ok();
}

std::vector<TensorId> retainableSharedInputs(const Graph &g,
                                             const StepAnalysis &a) {
  std::vector<TensorId> retainable;
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    const TensorId t = TensorId(i);
    if (a.content[t] == t && g.tensors[t].producer != kNone &&
        !a.persistent[t] && a.recomputable[t] && a.sharedInput[t] &&
        a.lastRecomputeUse[t] > a.lastUse[t])
      retainable.push_back(t);
  }
  return retainable;
}

} // namespace coop::planner
