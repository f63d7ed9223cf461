//===- PlanImprovement.cpp - Local search on the plan search's winner -----===//
//
// The winning plan's evictions, read from its instructions, give the
// neighbours: a scheduled eviction whose recomputations cost the most is
// dropped (the policy may find a cheaper victim where memory runs out), or
// swapped for a value cheaper to recompute that is idle where the dropped
// one's bytes do not fit; and an eviction the policy made under pressure,
// long after the value's last read, is scheduled right after that read
// instead (its bytes are free for the ops in between, which then evict
// less; its recomputation is the same).
//
//===----------------------------------------------------------------------===//

#include "PlanImprovement.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace coop::planner {
namespace {

/// One change to the schedule: drop `dropped` (outputs of one op: one
/// re-run brings them all back) from the evictions after op `dropAt`,
/// and/or evict `added` after op `addAt`.
struct Neighbour {
  std::vector<TensorId> dropped;
  OpId dropAt = kNone;
  TensorId added = kNone;
  OpId addAt = kNone;
  /// Recomputation microseconds saved (drop, swap), or bytes times ops
  /// freed earlier (an eviction moved up): the order of the tries.
  double expectedGain = 0;
  using Key = std::tuple<std::vector<TensorId>, OpId, TensorId, OpId>;
  Key key() const { return {dropped, dropAt, added, addAt}; }
};

/// A scheduled eviction the plan made: its neighbour dropping it, and
/// the instructions over which its values were away.
struct ScheduledAbsence {
  Neighbour drop;
  size_t from = 0, to = 0;
  int64_t bytes = 0;
};

/// A value resident and unread between two instructions: a value to
/// evict instead, after op `after`.
struct IdleStretch {
  TensorId value;
  size_t from, to;
  OpId after;
};

/// The neighbours of `plan`, which followed `schedule` in `budgetBytes`:
///  - drops of its scheduled evictions, by the recomputation time each
///    caused (where the plan's live bytes leave room for its values);
///  - swaps: a drop, and in its stead an eviction of a value cheaper to
///    recompute, resident and unread over every instruction where the
///    drop's values leave more live than the budget, and as large as the
///    excess there; by the time saved;
///  - evictions the policy made under pressure, moved up to right after
///    the value's last access, by bytes times the ops in between.
/// Drops and swaps are tried first, best first.
class NeighbourFinder {
public:
  NeighbourFinder(const Graph &graph, const StepAnalysis &analysis,
                  const EvictionSchedule &schedule, const Plan &plan)
      : graph_(graph), analysis_(analysis), schedule_(schedule),
        code_(plan.instructions), bufferBytes_(graph.tensors.size(), 0),
        lastAccess_(graph.tensors.size(), kNone),
        lastAccessAt_(graph.tensors.size(), kNotAccessed),
        resident_(graph.tensors.size(), 0),
        openAbsence_(graph.tensors.size(), -1) {
    for (const Allocation &a : plan.arguments)
      hold(a);
  }

  std::vector<Neighbour> find(int64_t budgetBytes);

private:
  static constexpr size_t kNotAccessed = ~size_t(0);
  /// Drops whose swaps are looked for, and swaps per drop.
  static constexpr size_t kSwappedDrops = 32, kSwapsPerDrop = 6;

  void hold(const Allocation &a) {
    bufferBytes_[a.tensor] = a.size;
    resident_[a.tensor] = 1;
    live_ += a.size;
  }
  void release(TensorId t) {
    live_ -= bufferBytes_[t];
    resident_[t] = 0;
  }
  /// `t` read or made by instruction `i`, for op `at`'s closure.
  void access(TensorId t, size_t i, OpId at);
  void evicted(size_t i, OpId lastRun, TensorId t);
  void addSwaps(const ScheduledAbsence &absence, int64_t budgetBytes,
                std::vector<Neighbour> *out) const;

  const Graph &graph_;
  const StepAnalysis &analysis_;
  const EvictionSchedule &schedule_;
  const std::vector<Instruction> &code_;
  std::vector<int64_t> bufferBytes_;
  /// Per value: the op whose closure or run last read or made it, and the
  /// instruction that did.
  std::vector<OpId> lastAccess_;
  std::vector<size_t> lastAccessAt_;
  std::vector<char> resident_;
  /// Per value: its scheduled absence not yet ended (-1: none).
  std::vector<int32_t> openAbsence_;
  /// The op the next Run instruction runs, per instruction.
  std::vector<OpId> nextRun_;
  /// Bytes held while each instruction runs (its transient buffers too).
  std::vector<int64_t> liveDuring_;
  int64_t live_ = 0;
  std::vector<ScheduledAbsence> absences_;
  std::vector<IdleStretch> idle_;
  std::vector<Neighbour> moves_;
  /// The first absence after the last Run instruction.
  size_t windowStart_ = 0;
};

void NeighbourFinder::access(TensorId t, size_t i, OpId at) {
  if (resident_[t] && lastAccessAt_[t] != kNotAccessed &&
      i > lastAccessAt_[t] + 1 && analysis_.evictable[t] &&
      analysis_.recomputable[t] && !analysis_.persistent[t])
    idle_.push_back({t, lastAccessAt_[t], i, lastAccess_[t]});
  lastAccess_[t] = at;
  lastAccessAt_[t] = i;
}

void NeighbourFinder::evicted(size_t i, OpId lastRun, TensorId t) {
  const OpId first = lastRun == kNone ? 0 : lastRun;
  OpId scheduledAt = kNone;
  for (OpId k = first; k < nextRun_[i] && k < OpId(schedule_.size()); ++k)
    if (std::count(schedule_[k].begin(), schedule_[k].end(), t))
      scheduledAt = k;
  if (scheduledAt != kNone) {
    // A sibling dropped after the same op joins its neighbour.
    const OpId producer = graph_.tensors[t].producer;
    auto sibling = std::find_if(
        absences_.begin() + int64_t(windowStart_), absences_.end(),
        [&](const ScheduledAbsence &a) {
          return a.drop.dropAt == scheduledAt &&
                 graph_.tensors[a.drop.dropped.front()].producer == producer;
        });
    if (sibling == absences_.end()) {
      absences_.push_back({});
      sibling = absences_.end() - 1;
      sibling->drop.dropAt = scheduledAt;
      sibling->from = i;
      sibling->to = code_.size();
    }
    sibling->drop.dropped.push_back(t);
    sibling->bytes += bufferBytes_[t];
    openAbsence_[t] = int32_t(sibling - absences_.begin());
  } else if (lastAccess_[t] != kNone && lastRun != kNone &&
             lastAccess_[t] < lastRun) {
    Neighbour move;
    move.added = t;
    move.addAt = lastAccess_[t];
    move.expectedGain =
        double(bufferBytes_[t]) * double(lastRun - lastAccess_[t]);
    moves_.push_back(move);
  }
}

std::vector<Neighbour> NeighbourFinder::find(int64_t budgetBytes) {
  nextRun_.assign(code_.size() + 1, OpId(graph_.ops.size()));
  for (size_t i = code_.size(); i-- > 0;)
    nextRun_[i] = code_[i].kind == InstructionKind::Run ? code_[i].op
                                                        : nextRun_[i + 1];
  liveDuring_.assign(code_.size(), 0);
  OpId lastRun = kNone;
  for (size_t i = 0; i < code_.size(); ++i) {
    const Instruction &ins = code_[i];
    if (ins.kind == InstructionKind::Evict ||
        ins.kind == InstructionKind::Free) {
      liveDuring_[i] = live_;
      release(ins.tensor);
      if (ins.kind == InstructionKind::Evict)
        evicted(i, lastRun, ins.tensor);
      else
        openAbsence_[ins.tensor] = -1;
      continue;
    }
    const Op &op = graph_.ops[ins.op];
    const OpId at = ins.kind == InstructionKind::Run ? ins.op : nextRun_[i];
    for (TensorId in : op.inputs)
      access(analysis_.content[in], i, at);
    for (const Allocation &a : ins.outputs) {
      if (a.inPlace) {
        // The overwritten version's buffer, passed on.
        const TensorId overwritten =
            graph_.contentOf(graph_.tensors[a.tensor].previousVersion);
        release(overwritten);
      }
      hold(a);
    }
    int64_t transient = ins.workspaceBytes;
    for (const Allocation &a : ins.discarded)
      transient += a.size;
    liveDuring_[i] = live_ + transient;
    for (TensorId out : op.outputs) {
      const TensorId t = analysis_.content[out];
      access(t, i, at);
      if (ins.kind == InstructionKind::Recompute && openAbsence_[t] >= 0) {
        ScheduledAbsence &absence = absences_[openAbsence_[t]];
        absence.drop.expectedGain += op.costUs;
        absence.to = std::min(absence.to, i);
        openAbsence_[t] = -1;
      }
    }
    if (ins.kind == InstructionKind::Run) {
      lastRun = ins.op;
      windowStart_ = absences_.size();
    }
  }
  auto byGain = [](const Neighbour &a, const Neighbour &b) {
    if (a.expectedGain != b.expectedGain)
      return a.expectedGain > b.expectedGain;
    return a.key() < b.key();
  };
  // A drop that caused no recomputation changes nothing.
  absences_.erase(std::remove_if(absences_.begin(), absences_.end(),
                                 [](const ScheduledAbsence &a) {
                                   return a.drop.expectedGain <= 0;
                                 }),
                  absences_.end());
  std::stable_sort(absences_.begin(), absences_.end(),
                   [&](const ScheduledAbsence &a, const ScheduledAbsence &b) {
                     return byGain(a.drop, b.drop);
                   });
  std::vector<Neighbour> found;
  for (size_t k = 0; k < absences_.size(); ++k) {
    found.push_back(absences_[k].drop);
    if (k < kSwappedDrops)
      addSwaps(absences_[k], budgetBytes, &found);
  }
  std::stable_sort(found.begin(), found.end(), byGain);
  std::sort(moves_.begin(), moves_.end(), byGain);
  found.insert(found.end(), moves_.begin(), moves_.end());
  return found;
}

void NeighbourFinder::addSwaps(const ScheduledAbsence &absence,
                               int64_t budgetBytes,
                               std::vector<Neighbour> *out) const {
  // Where the values kept would hold more than the budget, and by how much.
  size_t first = absence.to, last = 0;
  int64_t excess = 0;
  for (size_t i = absence.from; i < absence.to; ++i)
    if (liveDuring_[i] + absence.bytes > budgetBytes) {
      first = std::min(first, i);
      last = i;
      excess = std::max(excess, liveDuring_[i] + absence.bytes - budgetBytes);
    }
  if (excess == 0)
    return; // the drop alone fits
  std::vector<std::pair<double, const IdleStretch *>> instead;
  for (const IdleStretch &stretch : idle_) {
    const double cost = graph_.ops[graph_.tensors[stretch.value].producer].costUs;
    if (stretch.from < first && stretch.to > last &&
        bufferBytes_[stretch.value] >= excess &&
        cost < absence.drop.expectedGain &&
        !std::count(absence.drop.dropped.begin(), absence.drop.dropped.end(),
                    stretch.value))
      instead.push_back({cost, &stretch});
  }
  std::sort(instead.begin(), instead.end(), [](const auto &a, const auto &b) {
    if (a.first != b.first)
      return a.first < b.first;
    return a.second->value < b.second->value;
  });
  for (size_t k = 0; k < std::min(kSwapsPerDrop, instead.size()); ++k) {
    Neighbour swap = absence.drop;
    swap.added = instead[k].second->value;
    swap.addAt = instead[k].second->after;
    swap.expectedGain -= instead[k].first;
    out->push_back(swap);
  }
}

EvictionSchedule changed(EvictionSchedule schedule, const Neighbour &n) {
  if (n.dropAt != kNone) {
    std::vector<TensorId> &after = schedule[n.dropAt];
    for (TensorId t : n.dropped)
      after.erase(std::find(after.begin(), after.end(), t));
  }
  if (n.added != kNone)
    schedule[n.addAt].push_back(n.added);
  return schedule;
}

/// Simulates `options` into `candidate` and repacks it for
/// packing.targetPeak: whether it fits that budget and runs cheaper than
/// `incumbent` (runsCheaper(): a lower high-water mark alone is not worth
/// a step of the search). Judged before packing where it cannot win.
/// Where a larger arena than the budget keeps more live at once than the
/// budget holds, the budget's own arena, where the policy evicts what the
/// change left over.
bool fitsCheaper(const Graph &graph, const StepAnalysis &analysis,
                 PlanOptions options, const PackOptions &packing,
                 const Plan &incumbent, Plan *candidate, PackResult *packed) {
  if (!simulate(graph, options, analysis, candidate))
    return false;
  if (candidate->stats.peakAllocatedBytes > packing.targetPeak &&
      options.budgetBytes > packing.targetPeak) {
    options.budgetBytes = packing.targetPeak;
    if (!simulate(graph, options, analysis, candidate))
      return false;
  }
  candidate->stats.simulatedBudgetBytes = options.budgetBytes;
  if (candidate->stats.peakAllocatedBytes > packing.targetPeak ||
      !runsCheaper(candidate->stats, incumbent.stats) ||
      !repackPlan(graph, packing, candidate, packed) ||
      packed->peak > packing.targetPeak)
    return false;
  candidate->stats.addressHighWater = packed->peak;
  return true;
}

} // namespace

PlanImprovement improvePlan(const Graph &graph, const StepAnalysis &analysis,
                            const PlanOptions &winner, int64_t budgetBytes,
                            std::chrono::steady_clock::time_point deadline,
                            Plan *incumbent, int maxNeighbours) {
  PlanImprovement done;
  EvictionSchedule schedule =
      winner.scheduledEvictions ? *winner.scheduledEvictions
                                : EvictionSchedule(graph.ops.size());
  PlanOptions options = winner;
  options.budgetBytes = incumbent->stats.simulatedBudgetBytes;
  options.learnFromFailures = false;
  options.deadline = deadline;
  PackOptions packing;
  packing.alignment = winner.alignment;
  packing.searchNodeLimit = winner.packingNodeLimit;
  packing.initialOrderOnly = winner.packInitialOrderOnly;
  packing.targetPeak = budgetBytes;
  // Neighbours are simulated without replays: where the winner needed them
  // (a rescue), its plan is not what they change, and near the floor each
  // costs seconds (the e2e LSTM at r = 0.3125, unlimited: 85 -> 112 s
  // beside the base binary, nothing kept; 0.05 s with this check).
  Plan reproduced;
  if (!simulate(graph, options, analysis, &reproduced) ||
      reproduced.stats.executedCostUs != incumbent->stats.executedCostUs) {
    done.timeLimitReached = reproduced.stats.timeLimitReached;
    return done;
  }
  // Neighbours that did not improve: not simulated again after a change
  // elsewhere (each is tried at most once, so the cap bounds the work).
  std::set<Neighbour::Key> rejected;
  bool improved = true;
  while (improved && done.neighboursTried < maxNeighbours) {
    improved = false;
    for (const Neighbour &n :
         NeighbourFinder(graph, analysis, schedule, *incumbent)
             .find(budgetBytes)) {
      if (done.neighboursTried >= maxNeighbours)
        break;
      if (deadlinePassed(deadline)) {
        done.timeLimitReached = true;
        break;
      }
      if (rejected.count(n.key()))
        continue;
      ++done.neighboursTried;
      EvictionSchedule next = changed(schedule, n);
      options.scheduledEvictions =
          std::make_shared<const EvictionSchedule>(next);
      Plan candidate;
      PackResult packed;
      if (!fitsCheaper(graph, analysis, options, packing, *incumbent,
                       &candidate, &packed)) {
        rejected.insert(n.key());
        continue;
      }
      PlanStats &stats = candidate.stats;
      stats.packingLowerBoundBytes = packed.lowerBound;
      stats.packingMethod = packed.method;
      stats.packingProvedOptimal = packed.provedOptimal;
      stats.simulatedBudgetsTried = incumbent->stats.simulatedBudgetsTried;
      stats.packingSeconds = incumbent->stats.packingSeconds;
      stats.timeLimitReached = incumbent->stats.timeLimitReached;
      stats.winningCandidate = incumbent->stats.winningCandidate;
      candidate.budgetBytes = budgetBytes;
      *incumbent = std::move(candidate);
      schedule = std::move(next);
      ++done.improvements;
      improved = true;
      break;
    }
  }
  return done;
}

} // namespace coop::planner
