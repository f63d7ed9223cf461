//===- Verifier.cpp - Independent replay of a plan ------------------------===//
//
// Deliberately shares no code with the simulator: it keeps its own map of
// occupied address ranges and its own record of which value each buffer
// holds, and checks every instruction against the graph alone.
//
//===----------------------------------------------------------------------===//

#include "coop/Planner/Plan.h"
#include "coop/Support/CheckedArithmetic.h"

#include <algorithm>
#include <map>

namespace coop::planner {
namespace {

enum class ValueState { NotYetWritten, Resident, Evicted, Freed, Overwritten };

struct Occupant {
  int64_t end = 0;
  TensorId value = kNone;     // kNone: scratch held while an op runs
  TensorId discards = kNone;  // scratch: the in-place output thrown away
};

class PlanReplay {
public:
  PlanReplay(const Graph &graph, const Plan &plan, int64_t budget)
      : g_(graph), plan_(plan), budget_(budget),
        state_(graph.tensors.size(), ValueState::NotYetWritten),
        offset_(graph.tensors.size(), -1),
        overwrittenBy_(graph.tensors.size(), kNone) {}

  Status run();
  PlanPosition position() const { return {placingArguments_, index_}; }

private:
  TensorId contentOf(TensorId t) const {
    while (g_.tensors[t].viewOf != kNone)
      t = g_.tensors[t].viewOf;
    return t;
  }
  std::string name(TensorId t) const { return "'" + g_.tensors[t].name + "'"; }
  std::string where(size_t index) const;
  Status fail(const std::string &message) const {
    return Status::error(where(index_) + ": " + message);
  }
  /// Claims [offset, offset + size) for `value`, or for scratch (value
  /// kNone): the op's workspace, or where a recomputation writes the
  /// in-place output `discards` only to throw it away.
  Status claim(int64_t offset, int64_t size, TensorId value,
               TensorId discards = kNone);
  std::string describe(const Occupant &o) const {
    if (o.value != kNone)
      return name(o.value);
    if (o.discards != kNone)
      return "discarded " + name(o.discards);
    return "workspace";
  }
  /// Checks `ins.discarded` and lists the outputs it throws away.
  Status checkDiscarded(const Instruction &ins, bool isRecompute,
                        std::vector<TensorId> *discarded) const;
  void release(int64_t offset) { occupied_.erase(offset); }
  Status checkReadable(TensorId t, OpId op) const;
  Status runOp(const Instruction &ins, bool isRecompute);
  Status placeOutput(const Allocation &a);
  Status dropValue(const Instruction &ins);
  Status checkFinalState() const;

  const Graph &g_;
  const Plan &plan_;
  const int64_t budget_;
  std::vector<ValueState> state_;
  std::vector<int64_t> offset_;
  std::vector<TensorId> overwrittenBy_;
  std::map<int64_t, Occupant> occupied_;
  OpId nextOp_ = 0;
  size_t index_ = 0;
  bool placingArguments_ = true;
};

std::string PlanReplay::where(size_t index) const {
  if (placingArguments_)
    return "argument placement #" + std::to_string(index);
  if (index >= plan_.instructions.size())
    return "end of plan";
  const Instruction &ins = plan_.instructions[index];
  std::string at = "instruction #" + std::to_string(index);
  switch (ins.kind) {
  case InstructionKind::Run:
  case InstructionKind::Recompute:
    return at + (ins.kind == InstructionKind::Run ? " (run" : " (recompute") +
           " op #" + std::to_string(ins.op) + " '" +
           (ins.op >= 0 && size_t(ins.op) < g_.ops.size() ? g_.ops[ins.op].name
                                                           : "?") +
           "')";
  case InstructionKind::Evict:
  case InstructionKind::Free:
    return at + (ins.kind == InstructionKind::Evict ? " (evict " : " (free ") +
           (ins.tensor >= 0 && size_t(ins.tensor) < g_.tensors.size()
                ? name(ins.tensor)
                : "?") +
           ")";
  }
  return at;
}

Status PlanReplay::claim(int64_t offset, int64_t size, TensorId value,
                         TensorId discards) {
  const std::string what = describe(Occupant{0, value, discards});
  std::optional<int64_t> end = checkedAdd(offset, size);
  if (size <= 0 || offset < 0 || !end || *end > budget_)
    return fail(what + " at " + byteRangeText(offset, size) +
                " lies outside the arena [0, " + std::to_string(budget_) + ")");
  auto next = occupied_.lower_bound(offset);
  auto clash = [&](const std::map<int64_t, Occupant>::iterator &it) {
    return fail(what + " at " + byteRangeText(offset, size) + " overlaps " +
                describe(it->second) + " at [" + std::to_string(it->first) +
                ", " + std::to_string(it->second.end) + ")");
  };
  if (next != occupied_.end() && next->first < *end)
    return clash(next);
  if (next != occupied_.begin()) {
    auto prev = std::prev(next);
    if (prev->second.end > offset)
      return clash(prev);
  }
  occupied_[offset] = Occupant{*end, value, discards};
  return Status::ok();
}

Status PlanReplay::checkReadable(TensorId t, OpId op) const {
  const TensorId c = contentOf(t);
  const std::string reads = "op #" + std::to_string(op) + " reads " + name(t);
  switch (state_[c]) {
  case ValueState::Resident:
    return Status::ok();
  case ValueState::NotYetWritten:
    return fail(reads + " before it is written");
  case ValueState::Evicted:
    return fail(reads + " after it was evicted");
  case ValueState::Freed:
    return fail(reads + " after it was freed");
  case ValueState::Overwritten:
    return fail(reads + ": stale version, its buffer now holds " +
                name(overwrittenBy_[c]));
  }
  return Status::ok();
}

Status PlanReplay::placeOutput(const Allocation &a) {
  if (a.tensor < 0 || size_t(a.tensor) >= g_.tensors.size() ||
      g_.tensors[a.tensor].producer != plan_.instructions[index_].op)
    return fail("places tensor #" + std::to_string(a.tensor) +
                " that the op does not produce");
  const TensorId out = a.tensor;
  if (state_[out] == ValueState::Resident)
    return fail("places " + name(out) + " which is already resident");
  if (a.size < g_.tensors[out].bytes)
    return fail("gives " + name(out) + " " + std::to_string(a.size) +
                " bytes but it needs " +
                std::to_string(g_.tensors[out].bytes));
  if (a.inPlace) {
    const TensorId prev = g_.tensors[out].previousVersion;
    if (prev == kNone)
      return fail(name(out) + " is placed in place but overwrites nothing");
    const TensorId operand = contentOf(prev);
    if (state_[operand] != ValueState::Resident ||
        offset_[operand] != a.offset ||
        occupied_.at(a.offset).end != checkedAdd(a.offset, a.size))
      return fail(name(out) + " is written in place at offset " +
                  std::to_string(a.offset) + " where " + name(operand) +
                  " does not live");
    state_[operand] = ValueState::Overwritten;
    overwrittenBy_[operand] = out;
    occupied_[a.offset].value = out;
  } else {
    Status st = claim(a.offset, a.size, out);
    if (!st)
      return st;
  }
  state_[out] = ValueState::Resident;
  offset_[out] = a.offset;
  return Status::ok();
}

Status PlanReplay::checkDiscarded(const Instruction &ins, bool isRecompute,
                                  std::vector<TensorId> *discarded) const {
  if (ins.discarded.empty())
    return Status::ok();
  const Op &op = g_.ops[ins.op];
  if (!isRecompute)
    return fail("discards outputs on a run; only a recomputation may "
                "throw in-place outputs away");
  if (!op.discardableInPlace)
    return fail("discards outputs of an op whose in-place outputs are not "
                "marked discardable");
  for (const Allocation &d : ins.discarded) {
    if (d.tensor < 0 || size_t(d.tensor) >= g_.tensors.size() ||
        g_.tensors[d.tensor].producer != ins.op ||
        g_.tensors[d.tensor].previousVersion == kNone)
      return fail("discards tensor #" + std::to_string(d.tensor) +
                  ", which is not an in-place output of the op");
    if (std::find(discarded->begin(), discarded->end(), d.tensor) !=
        discarded->end())
      return fail("discards " + name(d.tensor) + " twice");
    if (d.inPlace)
      return fail("discards " + name(d.tensor) +
                  " in place; a discarded output goes to scratch");
    if (d.size < g_.tensors[d.tensor].bytes)
      return fail("gives discarded " + name(d.tensor) + " " +
                  std::to_string(d.size) + " bytes but it needs " +
                  std::to_string(g_.tensors[d.tensor].bytes));
    discarded->push_back(d.tensor);
  }
  return Status::ok();
}

Status PlanReplay::runOp(const Instruction &ins, bool isRecompute) {
  if (ins.op < 0 || size_t(ins.op) >= g_.ops.size())
    return fail("names unknown op");
  const Op &op = g_.ops[ins.op];
  // Outputs this recomputation writes to scratch and throws away; the
  // operands they overwrite are not really read.
  std::vector<TensorId> discarded;
  Status checked = checkDiscarded(ins, isRecompute, &discarded);
  if (!checked)
    return checked;
  auto isDiscarded = [&](TensorId out) {
    return std::find(discarded.begin(), discarded.end(), out) !=
           discarded.end();
  };
  auto onlyOverwrittenByDiscarded = [&](TensorId in) {
    for (TensorId out : discarded)
      if (g_.tensors[out].previousVersion == in)
        return true;
    return false;
  };
  if (!isRecompute && ins.op != nextOp_)
    return fail("runs out of program order; expected op #" +
                std::to_string(nextOp_));
  if (isRecompute) {
    if (ins.op >= nextOp_)
      return fail("recomputes an op that has not run yet");
    if (op.isView)
      return fail("recomputes a view");
    for (TensorId out : op.outputs)
      if (g_.isPersistent(out) && !isDiscarded(out))
        return fail("recomputes an op that writes persistent state " +
                    name(out));
  }
  for (TensorId in : op.inputs) {
    if (onlyOverwrittenByDiscarded(in))
      continue;
    Status st = checkReadable(in, ins.op);
    if (!st)
      return st;
  }
  if (op.isView) {
    if (!ins.outputs.empty() || ins.workspaceBytes != 0)
      return fail("allocates memory for a view");
    ++nextOp_;
    return Status::ok();
  }
  for (const Allocation &a : ins.outputs) {
    if (a.tensor >= 0 && isDiscarded(a.tensor))
      return fail("places " + name(a.tensor) + ", which it also discards");
    Status st = placeOutput(a);
    if (!st)
      return st;
  }
  for (TensorId out : op.outputs)
    if (state_[out] != ValueState::Resident && !isDiscarded(out))
      return fail("leaves output " + name(out) + " without a buffer");
  // Scratch for discarded outputs and the workspace coexist while the op
  // runs and go when it ends; they change no value's state.
  for (const Allocation &d : ins.discarded) {
    Status st = claim(d.offset, d.size, kNone, d.tensor);
    if (!st)
      return st;
  }
  if (ins.workspaceBytes > 0) {
    Status st = claim(ins.workspaceOffset, ins.workspaceBytes, kNone);
    if (!st)
      return st;
    release(ins.workspaceOffset);
  }
  for (const Allocation &d : ins.discarded)
    release(d.offset);
  if (ins.workspaceBytes <= 0 && op.workspaceBytes > 0) {
    return fail("runs without its " + std::to_string(op.workspaceBytes) +
                "-byte workspace");
  }
  if (!isRecompute)
    ++nextOp_;
  return Status::ok();
}

Status PlanReplay::dropValue(const Instruction &ins) {
  if (ins.tensor < 0 || size_t(ins.tensor) >= g_.tensors.size())
    return fail("names unknown tensor");
  const TensorId t = ins.tensor;
  const bool evict = ins.kind == InstructionKind::Evict;
  if (state_[t] != ValueState::Resident)
    return fail(std::string(evict ? "evicts " : "frees ") + name(t) +
                (state_[t] == ValueState::Freed ? ", already freed"
                                                : ", which is not resident"));
  if (evict && g_.isPersistent(t))
    return fail("evicts persistent " + name(t));
  release(offset_[t]);
  state_[t] = evict ? ValueState::Evicted : ValueState::Freed;
  return Status::ok();
}

Status PlanReplay::checkFinalState() const {
  if (nextOp_ != OpId(g_.ops.size()))
    return fail("the plan ends before op #" + std::to_string(nextOp_) +
                " runs");
  // Each persistent storage must end holding the version produced last.
  std::map<TensorId, TensorId> finalVersion;
  for (size_t i = 0; i < g_.tensors.size(); ++i) {
    const TensorId t = static_cast<TensorId>(i);
    if (g_.tensors[t].viewOf != kNone || !g_.isPersistent(t))
      continue;
    auto [it, inserted] = finalVersion.emplace(g_.storageOf(t), t);
    if (!inserted && g_.tensors[t].producer > g_.tensors[it->second].producer)
      it->second = t;
  }
  for (const auto &[storage, version] : finalVersion)
    if (state_[version] != ValueState::Resident)
      return fail("persistent storage " + name(storage) +
                  " does not end holding its final version " + name(version));
  for (size_t i = 0; i < g_.tensors.size(); ++i)
    if (g_.tensors[i].isStepOutput &&
        state_[contentOf(static_cast<TensorId>(i))] != ValueState::Resident)
      return fail("step output " + name(static_cast<TensorId>(i)) +
                  " is not resident at the end");
  return Status::ok();
}

Status PlanReplay::run() {
  std::vector<char> placed(g_.tensors.size(), 0);
  for (index_ = 0; index_ < plan_.arguments.size(); ++index_) {
    const Allocation &a = plan_.arguments[index_];
    if (a.tensor < 0 || size_t(a.tensor) >= g_.tensors.size() ||
        g_.tensors[a.tensor].producer != kNone || placed[a.tensor])
      return fail("places tensor #" + std::to_string(a.tensor) +
                  ", which is not an unplaced step argument");
    if (a.size < g_.tensors[a.tensor].bytes)
      return fail("gives " + name(a.tensor) + " too few bytes");
    Status st = claim(a.offset, a.size, a.tensor);
    if (!st)
      return st;
    placed[a.tensor] = 1;
    state_[a.tensor] = ValueState::Resident;
    offset_[a.tensor] = a.offset;
  }
  for (size_t i = 0; i < g_.tensors.size(); ++i)
    if (g_.tensors[i].producer == kNone && !placed[i])
      return fail("step argument " + name(static_cast<TensorId>(i)) +
                  " is never placed");

  placingArguments_ = false;
  for (index_ = 0; index_ < plan_.instructions.size(); ++index_) {
    const Instruction &ins = plan_.instructions[index_];
    Status st = Status::ok();
    switch (ins.kind) {
    case InstructionKind::Run:
    case InstructionKind::Recompute:
      st = runOp(ins, ins.kind == InstructionKind::Recompute);
      break;
    case InstructionKind::Evict:
    case InstructionKind::Free:
      st = dropValue(ins);
      break;
    }
    if (!st)
      return st;
  }
  return checkFinalState();
}

} // namespace

Status verifyPlan(const Graph &graph, const Plan &plan, int64_t budgetBytes,
                  PlanPosition *failedAt) {
  PlanReplay replay(graph, plan, budgetBytes);
  Status status = replay.run();
  if (!status && failedAt)
    *failedAt = replay.position();
  return status;
}

} // namespace coop::planner
