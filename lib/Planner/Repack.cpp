//===- Repack.cpp - Offline addresses for a plan's fixed schedule ---------===//
//
// Once a policy has fixed the instruction sequence, every buffer's lifetime
// is known: an argument from the start, an output from the instruction that
// allocates it, through the in-place writes that take it over, to the Evict
// or Free that drops it; a workspace or a discarded output for the one
// instruction that uses it. The packer assigns new offsets to those
// lifetimes; nothing else in the plan changes.
//
//===----------------------------------------------------------------------===//

#include "coop/Planner/Plan.h"

namespace coop::planner {

Status repackPlan(const Graph &graph, const PackOptions &options, Plan *plan,
                  PackResult *packing, const Deadline &deadline) {
  std::vector<PackBuffer> buffers;
  // Every field of the plan that holds each buffer's offset.
  std::vector<std::vector<int64_t *>> fields;
  std::vector<int32_t> bufferOf(graph.tensors.size(), -1);
  // Time 0 holds the arguments; instruction i runs at time i + 1.
  const int64_t end = int64_t(plan->instructions.size()) + 1;
  auto open = [&](int64_t first, int64_t size, int64_t *field) {
    buffers.push_back({first, end, size});
    fields.push_back({field});
    return int32_t(buffers.size() - 1);
  };
  auto fail = [&](size_t index, const std::string &what) {
    return Status::error("cannot repack the plan: instruction #" +
                         std::to_string(index) + " " + what);
  };
  for (Allocation &a : plan->arguments)
    bufferOf[a.tensor] = open(0, a.size, &a.offset);
  for (size_t i = 0; i < plan->instructions.size(); ++i) {
    Instruction &ins = plan->instructions[i];
    const int64_t time = int64_t(i) + 1;
    if (ins.kind == InstructionKind::Evict ||
        ins.kind == InstructionKind::Free) {
      const int32_t b = bufferOf[ins.tensor];
      if (b < 0)
        return fail(i, "drops '" + graph.tensors[ins.tensor].name +
                           "', which holds no buffer");
      buffers[b].last = time - 1;
      bufferOf[ins.tensor] = -1;
      continue;
    }
    for (Allocation &a : ins.outputs) {
      if (!a.inPlace) {
        bufferOf[a.tensor] = open(time, a.size, &a.offset);
        continue;
      }
      const TensorId overwritten =
          graph.contentOf(graph.tensors[a.tensor].previousVersion);
      const int32_t b = bufferOf[overwritten];
      if (b < 0)
        return fail(i, "writes '" + graph.tensors[a.tensor].name +
                           "' in place over a value that holds no buffer");
      bufferOf[overwritten] = -1;
      bufferOf[a.tensor] = b;
      fields[b].push_back(&a.offset);
    }
    if (ins.workspaceBytes > 0)
      buffers[open(time, ins.workspaceBytes, &ins.workspaceOffset)].last = time;
    for (Allocation &d : ins.discarded)
      buffers[open(time, d.size, &d.offset)].last = time;
  }

  // The simulator's addresses are the packing to improve on.
  std::vector<int64_t> simulated(buffers.size());
  for (size_t b = 0; b < buffers.size(); ++b)
    simulated[b] = *fields[b].front();
  if (Status st = packBuffers(buffers, options, packing, &simulated); !st)
    return Status::error("cannot repack the plan: " + st.message());
  deadline.count(kWorkPerPackedBuffer * int64_t(buffers.size()) +
                 packing->packingSteps / kPackingStepsPerWork +
                 kWorkPerPackingNode * packing->searchNodes);
  for (size_t b = 0; b < buffers.size(); ++b)
    for (int64_t *field : fields[b])
      *field = packing->offsets[b];
  return Status::ok();
}

} // namespace coop::planner
