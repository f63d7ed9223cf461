//===- Graph.cpp - Training-step graph, validation and liveness -----------===//

#include "coop/Planner/Graph.h"
#include "coop/Support/CheckedArithmetic.h"

#include <algorithm>
#include <unordered_set>

namespace coop::planner {

const char *roleName(TensorRole role) {
  switch (role) {
  case TensorRole::Activation:
    return "activation";
  case TensorRole::Parameter:
    return "parameter";
  case TensorRole::Gradient:
    return "gradient";
  case TensorRole::OptimizerState:
    return "optimizer_state";
  case TensorRole::Buffer:
    return "buffer";
  case TensorRole::Input:
    return "input";
  }
  return "unknown";
}

bool isPersistentRole(TensorRole role) {
  return role != TensorRole::Activation;
}

TensorId Graph::addArgument(std::string name, int64_t bytes,
                            TensorRole role) {
  Tensor t;
  t.name = std::move(name);
  t.bytes = bytes;
  t.role = role;
  tensors.push_back(std::move(t));
  return static_cast<TensorId>(tensors.size() - 1);
}

OpId Graph::addOp(std::string name, std::vector<TensorId> inputs,
                  const std::vector<int64_t> &outputBytes,
                  const std::vector<int32_t> &inplaceInput, double costUs,
                  int64_t workspaceBytes) {
  OpId id = static_cast<OpId>(ops.size());
  Op op;
  op.name = std::move(name);
  op.costUs = costUs;
  op.workspaceBytes = workspaceBytes;
  for (size_t i = 0; i < outputBytes.size(); ++i) {
    Tensor t;
    t.name = op.name + "#" + std::to_string(id) + ":" + std::to_string(i);
    t.bytes = outputBytes[i];
    t.producer = id;
    if (i < inplaceInput.size() && inplaceInput[i] != kNone) {
      int32_t operand = inplaceInput[i];
      // An out-of-range operand is left for finalize() to report.
      t.previousVersion = operand >= 0 && size_t(operand) < inputs.size()
                              ? inputs[operand]
                              : kInvalidId;
    }
    tensors.push_back(std::move(t));
    op.outputs.push_back(static_cast<TensorId>(tensors.size() - 1));
  }
  op.inputs = std::move(inputs);
  ops.push_back(std::move(op));
  return id;
}

OpId Graph::addView(std::string name, TensorId source,
                    const std::vector<int64_t> &outputBytes) {
  OpId id = addOp(std::move(name), {source}, outputBytes);
  ops[id].isView = true;
  for (TensorId out : ops[id].outputs)
    tensors[out].viewOf = source;
  return id;
}

void Graph::markStepOutput(TensorId tensor) {
  tensors[tensor].isStepOutput = true;
}

std::string Graph::describe(TensorId tensor) const {
  return "tensor '" + tensors[tensor].name + "'";
}

std::string Graph::describeOp(OpId op) const {
  return "op #" + std::to_string(op) + " '" + ops[op].name + "'";
}

Status Graph::finalize() {
  auto valid = [&](TensorId t) {
    return t >= 0 && size_t(t) < tensors.size();
  };
  for (Tensor &t : tensors)
    t.consumers.clear();

  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor &t = tensors[i];
    TensorId id = static_cast<TensorId>(i);
    if (t.bytes < 0)
      return Status::error(describe(id) + " has negative size");
    if (t.producer == kNone) {
      if (!isPersistentRole(t.role))
        return Status::error("step argument " + describe(id) +
                             " has no role (parameter, gradient, "
                             "optimizer_state, buffer or input)");
      if (t.viewOf != kNone || t.previousVersion != kNone)
        return Status::error("step argument " + describe(id) +
                             " cannot be a view or an in-place version");
      continue;
    }
    if (t.producer < 0 || size_t(t.producer) >= ops.size())
      return Status::error(describe(id) + " names unknown producer op #" +
                           std::to_string(t.producer));
    const std::vector<TensorId> &outs = ops[t.producer].outputs;
    if (std::find(outs.begin(), outs.end(), id) == outs.end())
      return Status::error(describe(id) + " is not an output of its producer " +
                           describeOp(t.producer));
    if (isPersistentRole(t.role))
      return Status::error(describe(id) + " is produced by " +
                           describeOp(t.producer) +
                           " but has persistent role '" + roleName(t.role) +
                           "'; only step arguments are persistent");
  }

  for (size_t i = 0; i < ops.size(); ++i) {
    Op &op = ops[i];
    OpId id = static_cast<OpId>(i);
    std::unordered_set<TensorId> overwritten;
    for (TensorId in : op.inputs) {
      if (!valid(in))
        return Status::error(describeOp(id) + " reads unknown tensor #" +
                             std::to_string(in));
      if (tensors[in].producer != kNone && tensors[in].producer >= id)
        return Status::error(describeOp(id) + " reads " + describe(in) +
                             " before it is produced by " +
                             describeOp(tensors[in].producer));
    }
    if (op.isView && op.inputs.size() != 1)
      return Status::error(describeOp(id) +
                           " is a view and must have exactly one source");
    for (TensorId out : op.outputs) {
      if (!valid(out) || tensors[out].producer != id)
        return Status::error(describeOp(id) + " lists output #" +
                             std::to_string(out) + " it does not produce");
      const Tensor &t = tensors[out];
      if (op.isView != (t.viewOf != kNone) ||
          (op.isView && t.viewOf != op.inputs[0]))
        return Status::error(describe(out) + " must alias exactly the source "
                             "of its view " + describeOp(id));
      if (t.previousVersion == kNone)
        continue;
      if (op.isView)
        return Status::error(describeOp(id) +
                             " is a view and cannot write in place");
      if (!valid(t.previousVersion) ||
          std::find(op.inputs.begin(), op.inputs.end(), t.previousVersion) ==
              op.inputs.end())
        return Status::error(describe(out) + " overwrites a tensor that is "
                             "not an operand of " + describeOp(id));
      if (!overwritten.insert(t.previousVersion).second)
        return Status::error(describeOp(id) + " overwrites " +
                             describe(t.previousVersion) + " twice");
      if (tensors[t.previousVersion].bytes != t.bytes)
        return Status::error(
            describe(out) + " has " + std::to_string(t.bytes) +
            " bytes but overwrites " + describe(t.previousVersion) +
            " of " + std::to_string(tensors[t.previousVersion].bytes) +
            " bytes in place");
    }
    if (op.workspaceBytes < 0)
      return Status::error(describeOp(id) + " has negative workspace");
  }

  // Every sum the planner forms (live bytes, budgets, offsets) is a part of
  // this total, so bounding it keeps them all from overflowing.
  std::optional<int64_t> total = 0;
  for (const Tensor &t : tensors)
    if (t.viewOf == kNone && total)
      total = checkedAdd(*total, t.bytes);
  for (const Op &op : ops)
    if (total)
      total = checkedAdd(*total, op.workspaceBytes);
  if (!total || *total > kMaxPlannedBytes)
    return Status::error("the step's tensors and workspaces total more than "
                         "2^62 bytes (" + std::to_string(kMaxPlannedBytes) +
                         "), the most the planner handles");

  for (size_t i = 0; i < ops.size(); ++i)
    for (TensorId in : ops[i].inputs) {
      std::vector<OpId> &consumers = tensors[in].consumers;
      if (consumers.empty() || consumers.back() != OpId(i))
        consumers.push_back(static_cast<OpId>(i));
    }
  return Status::ok();
}

TensorId Graph::storageOf(TensorId tensor) const {
  while (true) {
    const Tensor &t = tensors[tensor];
    if (t.viewOf != kNone)
      tensor = t.viewOf;
    else if (t.previousVersion != kNone)
      tensor = t.previousVersion;
    else
      return tensor;
  }
}

TensorId Graph::contentOf(TensorId tensor) const {
  while (tensors[tensor].viewOf != kNone)
    tensor = tensors[tensor].viewOf;
  return tensor;
}

bool Graph::isPersistent(TensorId tensor) const {
  return isPersistentRole(tensors[storageOf(tensor)].role);
}

MemoryStats computeMemoryStats(const Graph &graph) {
  MemoryStats stats;
  stats.opCount = static_cast<int64_t>(graph.ops.size());
  stats.tensorCount = static_cast<int64_t>(graph.tensors.size());
  const OpId lastOp = static_cast<OpId>(graph.ops.size()) - 1;

  // Live range [first, last] of each transient storage, in op indices.
  std::vector<OpId> first(graph.tensors.size(), kNone);
  std::vector<OpId> last(graph.tensors.size(), kNone);
  for (size_t i = 0; i < graph.tensors.size(); ++i) {
    const Tensor &t = graph.tensors[i];
    TensorId root = graph.storageOf(static_cast<TensorId>(i));
    if (root == TensorId(i)) {
      ++stats.storageCount;
      if (isPersistentRole(t.role))
        stats.persistentBytes += t.bytes;
      else
        first[root] = t.producer;
    }
    if (graph.isPersistent(root))
      continue;
    OpId end = t.producer;
    if (!t.consumers.empty())
      end = std::max(end, t.consumers.back());
    if (t.isStepOutput)
      end = lastOp;
    last[root] = std::max(last[root], end);
  }

  // Sweep: add each storage at its first op, remove it after its last.
  std::vector<int64_t> delta(graph.ops.size() + 1, 0);
  for (size_t s = 0; s < graph.tensors.size(); ++s)
    if (first[s] != kNone) {
      delta[first[s]] += graph.tensors[s].bytes;
      delta[last[s] + 1] -= graph.tensors[s].bytes;
    }
  int64_t live = stats.persistentBytes;
  stats.peakLiveBytes = stats.persistentBytes;
  stats.floorBytes = stats.persistentBytes;
  for (size_t i = 0; i < graph.ops.size(); ++i) {
    const Op &op = graph.ops[i];
    live += delta[i];
    int64_t atOp = live + op.workspaceBytes;
    if (atOp > stats.peakLiveBytes) {
      stats.peakLiveBytes = atOp;
      stats.peakOp = static_cast<OpId>(i);
    }

    std::vector<TensorId> touched;
    for (TensorId t : op.inputs)
      touched.push_back(graph.storageOf(t));
    for (TensorId t : op.outputs)
      touched.push_back(graph.storageOf(t));
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    int64_t workingSet = op.workspaceBytes;
    for (TensorId s : touched)
      if (!graph.isPersistent(s))
        workingSet += graph.tensors[s].bytes;
    if (stats.persistentBytes + workingSet > stats.floorBytes) {
      stats.floorBytes = stats.persistentBytes + workingSet;
      stats.floorOp = static_cast<OpId>(i);
    }
  }
  return stats;
}

} // namespace coop::planner
