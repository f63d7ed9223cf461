//===- EvictionSchedule.cpp - Evictions chosen from the whole future ------===//
//
// The profile is the bytes live at each op when nothing is evicted:
// persistent state, every value from its producer to its last read, and
// the op's workspace. A candidate is a value and a gap between two of its
// reads; evicting it there lowers the profile over the gap by its size.
// Its price is every recomputation the choice makes necessary, each adding
// the bytes it rebuilds to the profile where it runs.
//
//===----------------------------------------------------------------------===//

#include "EvictionSchedule.h"

#include <algorithm>
#include <limits>

namespace coop::planner {
namespace {

/// Range add, maximum (with its leftmost position) and minimum over op
/// indices.
class Profile {
public:
  explicit Profile(const std::vector<int64_t> &bytes) : ops_(bytes.size()) {
    while (size_ < bytes.size())
      size_ *= 2;
    max_.assign(2 * size_, kLowest);
    min_.assign(2 * size_, kLowest);
    pending_.assign(2 * size_, 0);
    for (size_t i = 0; i < bytes.size(); ++i)
      max_[size_ + i] = min_[size_ + i] = bytes[i];
    for (size_t i = size_ - 1; i >= 1; --i) {
      max_[i] = std::max(max_[2 * i], max_[2 * i + 1]);
      min_[i] = std::min(min_[2 * i], min_[2 * i + 1]);
    }
  }
  /// Adds `delta` to the ops in [from, to].
  void add(int64_t from, int64_t to, int64_t delta) {
    if (from <= to)
      add(1, 0, int64_t(size_) - 1, from, to, delta);
  }
  int64_t max() const { return max_[1]; }
  /// The maximum over the ops in [from, to] (the lowest value when empty).
  int64_t max(int64_t from, int64_t to) const {
    return from <= to ? max(1, 0, int64_t(size_) - 1, from, to) : kLowest;
  }
  /// The first op where the maximum is reached.
  int64_t argMax() const {
    size_t node = 1;
    while (node < size_) {
      const int64_t below = max_[node] - pending_[node];
      node = max_[2 * node] == below ? 2 * node : 2 * node + 1;
    }
    return int64_t(node - size_);
  }
  /// The ops around `op` (which must be above `limit`) that are all above
  /// `limit`: the excursion over it that `op` is part of.
  std::pair<int64_t, int64_t> runAbove(int64_t op, int64_t limit) const {
    const int64_t before = lastAtMost(1, 0, int64_t(size_) - 1, op, limit, 0);
    const int64_t after = firstAtMost(1, 0, int64_t(size_) - 1, op, limit, 0);
    return {before + 1, std::min<int64_t>(after, int64_t(ops_)) - 1};
  }

private:
  static constexpr int64_t kLowest = std::numeric_limits<int64_t>::min() / 2;

  int64_t max(size_t node, int64_t lo, int64_t hi, int64_t from,
              int64_t to) const {
    if (to < lo || hi < from)
      return kLowest;
    if (from <= lo && hi <= to)
      return max_[node];
    const int64_t mid = lo + (hi - lo) / 2;
    return std::max(max(2 * node, lo, mid, from, to),
                    max(2 * node + 1, mid + 1, hi, from, to)) +
           pending_[node];
  }
  /// The last op before `op` at most `limit` (-1: none); `above` is what
  /// the ancestors of `node` add.
  int64_t lastAtMost(size_t node, int64_t lo, int64_t hi, int64_t op,
                     int64_t limit, int64_t above) const {
    if (lo >= op || min_[node] + above > limit)
      return -1;
    if (lo == hi)
      return lo;
    const int64_t mid = lo + (hi - lo) / 2;
    above += pending_[node];
    const int64_t right = lastAtMost(2 * node + 1, mid + 1, hi, op, limit, above);
    return right >= 0 ? right
                      : lastAtMost(2 * node, lo, mid, op, limit, above);
  }
  /// The first op after `op` at most `limit` (size_: none).
  int64_t firstAtMost(size_t node, int64_t lo, int64_t hi, int64_t op,
                      int64_t limit, int64_t above) const {
    if (hi <= op || min_[node] + above > limit)
      return int64_t(size_);
    if (lo == hi)
      return lo;
    const int64_t mid = lo + (hi - lo) / 2;
    above += pending_[node];
    const int64_t left = firstAtMost(2 * node, lo, mid, op, limit, above);
    return left < int64_t(size_)
               ? left
               : firstAtMost(2 * node + 1, mid + 1, hi, op, limit, above);
  }
  void add(size_t node, int64_t lo, int64_t hi, int64_t from, int64_t to,
           int64_t delta) {
    if (to < lo || hi < from)
      return;
    if (from <= lo && hi <= to) {
      max_[node] += delta;
      min_[node] += delta;
      pending_[node] += delta;
      return;
    }
    const int64_t mid = lo + (hi - lo) / 2;
    add(2 * node, lo, mid, from, to, delta);
    add(2 * node + 1, mid + 1, hi, from, to, delta);
    max_[node] = std::max(max_[2 * node], max_[2 * node + 1]) + pending_[node];
    min_[node] = std::min(min_[2 * node], min_[2 * node + 1]) + pending_[node];
  }

  const size_t ops_;
  size_t size_ = 1;
  /// max_, min_: of the subtree, pending_ included; pending_: added to the
  /// whole subtree and not yet pushed to its children.
  std::vector<int64_t> max_, min_, pending_;
};

/// A value dropped after read `from` and recomputed before read `to`.
struct Gap {
  TensorId value;
  OpId from, to;
};

/// Which gaps contain an op: a segment tree of gap lists.
class GapIndex {
public:
  explicit GapIndex(size_t ops) {
    while (size_ < ops)
      size_ *= 2;
    lists_.resize(2 * size_);
  }
  /// Registers gap `id` as covering the ops in [from, to].
  void insert(int32_t id, size_t from, size_t to) {
    for (size_t lo = from + size_, hi = to + size_ + 1; lo < hi;
         lo /= 2, hi /= 2) {
      if (lo & 1)
        lists_[lo++].push_back(id);
      if (hi & 1)
        lists_[--hi].push_back(id);
    }
  }
  template <typename Visit> void forEachCovering(size_t op, Visit visit) {
    for (size_t node = op + size_; node >= 1; node /= 2)
      for (int32_t id : lists_[node])
        visit(id);
  }

private:
  size_t size_ = 1;
  std::vector<std::vector<int32_t>> lists_;
};

/// A recomputation a choice makes necessary, besides the value it rebuilds.
struct Rebuild {
  /// It runs before this op.
  OpId at;
  /// Every value it rebuilds, and the most it holds at once: one op's
  /// output with the inputs rebuilt for it.
  int64_t everyValueBytes, heldAtOnceBytes;
};

/// A value a recomputation reads before op `at`, and the bytes of a value
/// the profile has there that the recomputation runs before (its root, or
/// the root of the recomputation it rebuilds a value for): they are not
/// allocated yet while it runs.
struct ChainRead {
  TensorId value;
  OpId at;
  int64_t laterBytes;
};

/// What choosing a gap costs and changes.
struct Price {
  /// The value comes back before this op: the gap's end, or an earlier
  /// read by a chosen recomputation (it stays resident from there on).
  OpId to = kNone;
  double costUs = 0;
  std::vector<Rebuild> rebuilt;
  /// Values the recomputations read where they run: they must stay there.
  std::vector<ChainRead> reads;
  /// Chosen absences the recomputations end early, by rebuilding the value
  /// before this op (it then stays resident, as in the simulator).
  std::vector<std::pair<int32_t, OpId>> resumed;
  /// The ops the recomputations re-run (SiblingOutputs::RebuiltTogether).
  std::vector<OpId> reruns;
  /// Values past their last use that the recomputations read, each with
  /// the op before which one runs (DeadInputs::Retained): kept until then.
  std::vector<std::pair<TensorId, OpId>> retained;
  /// The choice whose recomputation brings the value back at `to`, at no
  /// cost (-1: none).
  int32_t carriedBy = -1;
};

/// A value the greedy dropped after op `from` until op `to`, its byte-ops
/// per microsecond, and what it added to the profile where its
/// recomputations run (counted RebuiltBytes::EveryValue).
struct Choice {
  TensorId value;
  OpId from, to;
  double score;
  std::vector<std::pair<OpId, int64_t>> rebuilt;
  /// Choices whose value its recomputation brings back: undoing it would
  /// leave them to a recomputation nobody priced.
  int carried = 0;
  /// The ops its recomputations re-run (Price::reruns).
  std::vector<OpId> reruns;
  /// Its recomputations keep values past their last use: undoing it would
  /// leave them held for nothing.
  bool retains = false;
};

class Scheduler {
public:
  Scheduler(const Graph &graph, const StepAnalysis &analysis, int64_t alignment,
            RebuiltBytes rebuilt, RecomputeChains chains,
            SiblingOutputs siblings, DeadInputs dead)
      : g_(graph), a_(analysis), alignment_(alignment), rebuilt_(rebuilt),
        chainOpLimit_(chains == RecomputeChains::Short ? 6 : 64),
        rebuiltOnce_(chains == RecomputeChains::Long &&
                     rebuilt == RebuiltBytes::EveryValue),
        siblingsTogether_(rebuiltOnce_ &&
                          siblings == SiblingOutputs::RebuiltTogether),
        retainDeadInputs_(dead == DeadInputs::Retained),
        heldInTurn_(rebuilt == RebuiltBytes::HeldInTurn),
        opCount_(OpId(graph.ops.size())), absent_(graph.tensors.size()),
        readAt_(graph.tensors.size()), rerunBy_(graph.ops.size()),
        rebuiltBefore_(graph.ops.size(), 0),
        chainStamp_(graph.ops.size(), 0), inChain_(graph.tensors.size(), 0),
        readsLeft_(graph.tensors.size(), 0) {
    values_.reserve(graph.tensors.size());
    for (size_t i = 0; i < graph.tensors.size(); ++i)
      values_.push_back({allocationSize(graph.tensors[i].bytes, alignment),
                         graph.tensors[i].producer, analysis.lastUse[i],
                         analysis.lastUse[i], bool(analysis.recomputable[i])});
    opCostUs_.reserve(graph.ops.size());
    for (const Op &op : graph.ops)
      opCostUs_.push_back(op.costUs);
  }

  ScheduledEvictions run(int64_t targetBytes, ScheduleGaps gapKind,
                         ChoicePick pick, StuckPeaks stuck,
                         const Deadline &deadline);

private:
  int64_t bytes(TensorId t) const { return values_[t].bytes; }
  std::vector<int64_t> liveProfile() const;
  /// What op `k` allocates itself: its outputs and its workspace.
  int64_t allocatedBy(OpId k) const;
  /// Raises the profile for `rebuild`; returns what it added (EveryValue).
  int64_t addRebuilt(Profile *profile, const Rebuild &rebuild);
  /// Is `t` resident at op `at` under the evictions chosen so far?
  bool presentAt(TensorId t, OpId at) const;
  /// The chosen absence of `t` that op `at` falls in, or -1.
  int32_t absenceAt(TensorId t, OpId at) const;
  /// Adds to `price` rebuilding `root` just before op `at`: its producer
  /// and those of its inputs gone by then. False when that is not possible
  /// or too long a chain.
  /// `laterBytes`: as ChainRead's, for the root of the recomputation a
  /// counted root is rebuilt for.
  bool addRecomputation(TensorId root, OpId at, bool rootCounts,
                        int64_t laterBytes, Price *price);
  bool priceOf(const Gap &gap, Price *price);
  /// The bytes `price` keeps past their last use times the ops of
  /// [runFrom, runTo] they are held over, counted once per value.
  double retainedByteOps(const Price &price, int64_t runFrom,
                         int64_t runTo) const;
  /// Undoes, dearest first, every choice whose gap stays at most
  /// `limitBytes` with the value resident again: later choices, made at
  /// other peaks, often lower the earlier ones' peaks as well.
  void dropRedundant(Profile *profile, int64_t limitBytes);

  const Graph &g_;
  const StepAnalysis &a_;
  const int64_t alignment_;
  const RebuiltBytes rebuilt_;
  const int chainOpLimit_;
  /// A value that chosen recomputations read inside its gap comes back at
  /// the first of them and stays, rather than being rebuilt for each of
  /// them and at the gap's end: long chains counting every rebuilt value.
  /// (HeldAtOnce, for targets near the floor, leaves it out: counting the
  /// stretch where the value stays resident, GPT-2 planned at r = 0.24
  /// with 48.54 % overhead instead of 30.21 %.)
  const bool rebuiltOnce_;
  /// SiblingOutputs::RebuiltTogether (with rebuiltOnce_, whose choices
  /// each recompute once, at their `to`).
  const bool siblingsTogether_;
  /// DeadInputs::Retained.
  const bool retainDeadInputs_;
  /// RebuiltBytes::HeldInTurn.
  const bool heldInTurn_;
  const OpId opCount_;
  std::vector<Choice> chosen_;
  /// Per value: its choices (indices into chosen_).
  std::vector<std::vector<int32_t>> absent_;
  /// Per value: ops before which a chosen recomputation reads it, and the
  /// bytes there that the recomputation runs before (ChainRead).
  std::vector<std::vector<std::pair<OpId, int64_t>>> readAt_;
  /// Per op (siblingsTogether_): the choices whose recomputation re-runs it.
  std::vector<std::vector<int32_t>> rerunBy_;
  /// Per op (counting held bytes): what the recomputations before it add
  /// there.
  std::vector<int64_t> rebuiltBefore_;
  std::vector<uint32_t> chainStamp_;
  uint32_t chainEpoch_ = 0;
  /// What the chain walk reads of each value and op, in one place: it runs
  /// for every candidate over every peak, and the graph's records are wide.
  struct ValueFacts {
    int64_t bytes;
    OpId producer;
    int32_t lastUse;
    /// The last op it is resident through, unless evicted: its last use,
    /// or where a chosen recomputation retains it (DeadInputs::Retained).
    int32_t residentUntil;
    bool recomputable;
  };
  std::vector<ValueFacts> values_;
  std::vector<double> opCostUs_;
  /// addRecomputation's stack of values to rebuild, kept for its capacity.
  std::vector<std::pair<TensorId, bool>> pending_;
  /// The values the recomputation being priced rebuilds (one per op).
  std::vector<TensorId> chain_;
  /// Per value: the chain_ it is in (chainEpoch_), and the reads of it
  /// left there.
  std::vector<uint32_t> inChain_;
  std::vector<int32_t> readsLeft_;
  /// closureHeld()'s order, kept for its capacity.
  std::vector<TensorId> order_;
  /// The most bytes chain_ holds at once, run in the simulator's order
  /// (the step's) before op `at`, each rebuilt value freed after its last
  /// read there.
  int64_t closureHeld(TensorId root, OpId at);
  /// The values whose residency the price being made has looked at.
  std::vector<TensorId> looked_;
};

std::vector<int64_t> Scheduler::liveProfile() const {
  std::vector<int64_t> change(opCount_ + 1, 0);
  for (size_t i = 0; i < g_.tensors.size(); ++i) {
    const TensorId t = TensorId(i);
    if (a_.content[t] != t)
      continue;
    const OpId producer = g_.tensors[t].producer;
    const OpId from = producer == kNone ? 0 : producer;
    const OpId to =
        std::min<OpId>(std::max(a_.lastUse[t], from), opCount_ - 1);
    change[from] += bytes(t);
    change[to + 1] -= bytes(t);
  }
  std::vector<int64_t> profile(opCount_);
  int64_t live = 0;
  for (OpId k = 0; k < opCount_; ++k) {
    live += change[k];
    profile[k] = live + workspaceAllocation(g_.ops[k], alignment_);
  }
  return profile;
}

int64_t Scheduler::allocatedBy(OpId k) const {
  int64_t allocated = workspaceAllocation(g_.ops[k], alignment_);
  for (TensorId out : g_.ops[k].outputs)
    if (a_.content[out] == out)
      allocated += bytes(out);
  return allocated;
}

int64_t Scheduler::addRebuilt(Profile *profile, const Rebuild &rebuild) {
  const OpId at = rebuild.at;
  if (rebuilt_ == RebuiltBytes::EveryValue) {
    profile->add(at, at, rebuild.everyValueBytes);
    return rebuild.everyValueBytes;
  }
  const int64_t extra =
      std::max<int64_t>(rebuild.heldAtOnceBytes - allocatedBy(at), 0);
  if (extra > rebuiltBefore_[at]) {
    profile->add(at, at, extra - rebuiltBefore_[at]);
    rebuiltBefore_[at] = extra;
  }
  return 0;
}

bool Scheduler::presentAt(TensorId t, OpId at) const {
  return values_[t].producer < at && values_[t].residentUntil >= at &&
         absenceAt(t, at) < 0;
}

int32_t Scheduler::absenceAt(TensorId t, OpId at) const {
  for (int32_t id : absent_[t])
    if (chosen_[id].from < at && at < chosen_[id].to)
      return id;
  return -1;
}

bool Scheduler::addRecomputation(TensorId root, OpId at, bool rootCounts,
                                 int64_t laterBytes, Price *price) {
  if (!rootCounts)
    laterBytes = bytes(root);
  ++chainEpoch_;
  // A value whose chosen absence a recomputation ends early is rebuilt
  // anyway, at the absence's end: moved up, its chain holds bytes earlier
  // but runs no more microseconds ("moved").
  std::vector<std::pair<TensorId, bool>> &pending = pending_;
  pending.assign(1, {root, false});
  chain_.clear();
  int ops = 0;
  Rebuild rebuild = {at, 0, 0};
  while (!pending.empty()) {
    const auto [t, moved] = pending.back();
    pending.pop_back();
    const OpId producer = values_[t].producer;
    if (chainStamp_[producer] == chainEpoch_)
      continue;
    chainStamp_[producer] = chainEpoch_;
    if (++ops > chainOpLimit_)
      return false;
    chain_.push_back(t);
    const int64_t output = t != root || rootCounts ? bytes(t) : 0;
    rebuild.everyValueBytes += output;
    int64_t held = output;
    // Re-running the producer rebuilds its other outputs that are away: a
    // sibling's absence ends here, and its recomputation, moved up, runs
    // the producer once.
    bool siblingAway = false;
    if (siblingsTogether_) {
      price->reruns.push_back(producer);
      for (TensorId sibling : g_.ops[producer].outputs) {
        if (sibling == t || a_.content[sibling] != sibling)
          continue;
        looked_.push_back(sibling);
        const int32_t absence = absenceAt(sibling, at);
        if (absence < 0)
          continue;
        price->resumed.push_back({absence, at});
        rebuild.everyValueBytes += bytes(sibling);
        held += bytes(sibling);
        siblingAway = true;
      }
    }
    if (!moved && !siblingAway)
      price->costUs += opCostUs_[producer];
    for (TensorId in : a_.recomputeReads[producer]) {
      looked_.push_back(in);
      if (presentAt(in, at)) {
        price->reads.push_back({in, at, laterBytes});
        continue;
      }
      // Past its last use (chosen absences all end by then), read by
      // several ops, so maybe by several recomputations: kept.
      if (retainDeadInputs_ && values_[in].producer != kNone &&
          a_.sharedInput[in] && values_[in].lastUse < at) {
        price->retained.push_back({in, at});
        price->reads.push_back({in, at, laterBytes});
        continue;
      }
      if (values_[in].producer == kNone || !values_[in].recomputable)
        return false;
      const int32_t absence = rebuiltOnce_ ? absenceAt(in, at) : -1;
      if (absence >= 0)
        price->resumed.push_back({absence, at});
      held += bytes(in);
      pending.push_back({in, moved || siblingAway || absence >= 0});
    }
    rebuild.heldAtOnceBytes = std::max(rebuild.heldAtOnceBytes, held);
  }
  // The profile has the root there (or, for a root that counts, the root
  // of the recomputation it is rebuilt for), which the closure makes last.
  if (heldInTurn_)
    rebuild.heldAtOnceBytes =
        std::max<int64_t>(closureHeld(root, at) - laterBytes, 0);
  price->rebuilt.push_back(rebuild);
  return true;
}

int64_t Scheduler::closureHeld(TensorId root, OpId at) {
  for (TensorId t : chain_) {
    inChain_[t] = chainEpoch_;
    readsLeft_[t] = t == root;
  }
  auto rebuilt = [&](TensorId t) { return inChain_[t] == chainEpoch_; };
  for (TensorId t : chain_)
    for (TensorId in : a_.recomputeReads[values_[t].producer])
      readsLeft_[in] += rebuilt(in);
  // The simulator's order (PlanOptions::evictClosureValues): the step's.
  order_ = chain_;
  std::sort(order_.begin(), order_.end(), [&](TensorId a, TensorId b) {
    return values_[a].producer < values_[b].producer;
  });
  int64_t live = 0, most = 0;
  for (TensorId t : order_) {
    const OpId producer = values_[t].producer;
    const std::vector<TensorId> &reads = a_.recomputeReads[producer];
    const TensorId previous = g_.tensors[t].previousVersion;
    const TensorId overwritten =
        previous == kNone ? kNone : a_.content[previous];
    // Written in place over a rebuilt input this op reads last.
    const bool inPlace =
        overwritten != kNone && rebuilt(overwritten) &&
        readsLeft_[overwritten] ==
            std::count(reads.begin(), reads.end(), overwritten);
    if (!inPlace)
      live += bytes(t);
    // Its other outputs away here are written too, and freed at once.
    int64_t siblings = 0;
    for (TensorId out : g_.ops[producer].outputs)
      if (out != t && a_.content[out] == out && !rebuilt(out) &&
          !presentAt(out, at))
        siblings += bytes(out);
    most = std::max(most, live + siblings);
    for (TensorId in : reads)
      if (rebuilt(in) && --readsLeft_[in] == 0 &&
          !(inPlace && in == overwritten))
        live -= bytes(in);
  }
  return most;
}

bool Scheduler::priceOf(const Gap &gap, Price *price) {
  // Emptied, not replaced: its lists keep their capacity from gap to gap.
  price->costUs = 0;
  price->rebuilt.clear();
  price->reads.clear();
  price->resumed.clear();
  price->reruns.clear();
  price->retained.clear();
  price->carriedBy = -1;
  price->to = gap.to;
  looked_.clear();
  if (rebuiltOnce_) {
    // Chosen recomputations inside the gap that read the value need it
    // back before the first of them; rebuilt there, it stays for the rest.
    for (auto [at, laterBytes] : readAt_[gap.value])
      if (gap.from < at && at < price->to)
        price->to = at;
    // One that re-runs its producer first (for a sibling) brings it back.
    if (siblingsTogether_)
      for (int32_t id : rerunBy_[g_.tensors[gap.value].producer])
        if (gap.from < chosen_[id].to && chosen_[id].to < price->to) {
          price->to = chosen_[id].to;
          price->carriedBy = id;
        }
    if (price->to - gap.from < 2)
      return false;
    return price->carriedBy >= 0 ||
           addRecomputation(gap.value, price->to, /*rootCounts=*/false, 0,
                            price);
  }
  if (!addRecomputation(gap.value, gap.to, /*rootCounts=*/false, 0, price))
    return false;
  // Chosen recomputations inside the gap read the value: it must be
  // rebuilt for each of them too.
  for (auto [at, laterBytes] : readAt_[gap.value])
    if (gap.from < at && at < gap.to &&
        !addRecomputation(gap.value, at, /*rootCounts=*/true, laterBytes,
                          price))
      return false;
  return true;
}

double Scheduler::retainedByteOps(const Price &price, int64_t runFrom,
                                  int64_t runTo) const {
  double byteOps = 0;
  for (size_t i = 0; i < price.retained.size(); ++i) {
    const auto [value, at] = price.retained[i];
    // A value a later recomputation holds longer counts there.
    bool heldLonger = false;
    for (size_t j = 0; j < price.retained.size(); ++j)
      heldLonger |= price.retained[j].first == value &&
                    (price.retained[j].second > at ||
                     (price.retained[j].second == at && j > i));
    if (heldLonger)
      continue;
    const int64_t from =
        std::max<int64_t>(values_[value].residentUntil + 1, runFrom);
    const int64_t to = std::min<int64_t>(at, runTo);
    // Each op that reads it may need it rebuilt: kept once, it serves
    // them all, so this one is charged its share.
    if (from <= to)
      byteOps += double(bytes(value)) * double(to - from + 1) /
                 double(a_.readers[value].size());
  }
  return byteOps;
}

ScheduledEvictions Scheduler::run(int64_t targetBytes, ScheduleGaps gapKind,
                                  ChoicePick pick, StuckPeaks stuck,
                                  const Deadline &deadline) {
  ScheduledEvictions result;
  result.evictAfter.resize(opCount_);
  if (opCount_ == 0)
    return result;
  Profile profile(liveProfile());

  std::vector<Gap> gaps;
  GapIndex index(opCount_);
  for (size_t i = 0; i < g_.tensors.size(); ++i) {
    const TensorId t = TensorId(i);
    if (a_.content[t] != t || !a_.evictable[t])
      continue;
    const std::vector<OpId> &reads = a_.readers[t];
    if (reads.empty())
      continue;
    const OpId producer = g_.tensors[t].producer;
    if (gapKind == ScheduleGaps::FromProducer && producer != kNone &&
        reads[0] - producer >= 2) {
      index.insert(int32_t(gaps.size()), producer + 1, reads[0] - 1);
      gaps.push_back({t, producer, reads[0]});
    }
    for (size_t r = 1; r < reads.size(); ++r)
      if (reads[r] - reads[r - 1] >= 2) {
        index.insert(int32_t(gaps.size()), reads[r - 1] + 1, reads[r] - 1);
        gaps.push_back({t, reads[r - 1], reads[r]});
      }
  }

  std::vector<char> taken(gaps.size(), 0);
  // A gap's price depends only on the chosen absences of the values its
  // chains looked at, on where chosen recomputations read its own value
  // and on those that re-run its producer, so it is kept until a choice
  // changes one of those: most gaps over one peak are priced again over
  // the next, unchanged.
  enum class Priced : char { No, Yes, Impossible };
  std::vector<Priced> priced(gaps.size(), Priced::No);
  std::vector<Price> prices(gaps.size());
  // Per value: the priced gaps that looked at it; those of the value.
  std::vector<std::vector<int32_t>> lookedAt(g_.tensors.size()),
      gapsOf(g_.tensors.size());
  // Per op: the priced gaps of its outputs, which looked at the chosen
  // recomputations that re-run it (SiblingOutputs::RebuiltTogether).
  std::vector<std::vector<int32_t>> gapsOfOutputsOf(
      siblingsTogether_ ? g_.ops.size() : 0);
  auto forget = [&](std::vector<int32_t> &ids) {
    for (int32_t id : ids)
      priced[id] = Priced::No;
    ids.clear();
  };
  // Runs over the target where nothing could go, and what they were
  // lowered by; restored once the greedy is done.
  struct SetAsideRun {
    int64_t from, to, bytes;
  };
  std::vector<SetAsideRun> setAside;
  while (profile.max() > targetBytes && !deadline.passed()) {
    int32_t best = -1, cover = -1;
    double bestScore = 0, coverScore = 0;
    const int64_t peak = profile.argMax();
    const int64_t excess = profile.max() - targetBytes;
    const auto [runFrom, runTo] = profile.runAbove(peak, targetBytes);
    // The step's work (Deadline.h): the gaps and the values a new price
    // looked at.
    int64_t work = 1;
    index.forEachCovering(peak, [&](int32_t id) {
      ++work;
      if (taken[id])
        return;
      const Gap &gap = gaps[id];
      if (priced[id] == Priced::No) {
        priced[id] = priceOf(gap, &prices[id]) ? Priced::Yes
                                                : Priced::Impossible;
        work += int64_t(looked_.size());
        gapsOf[gap.value].push_back(id);
        for (TensorId value : looked_)
          lookedAt[value].push_back(id);
        if (siblingsTogether_ && values_[gap.value].producer != kNone)
          gapsOfOutputsOf[values_[gap.value].producer].push_back(id);
      }
      if (priced[id] == Priced::Impossible)
        return;
      const Price &price = prices[id];
      // Bytes freed, times the ops of the run over the target they are
      // freed for, per microsecond recomputed; the longer gap on ties.
      const int64_t overlap = std::min<int64_t>(price.to - 1, runTo) -
                              std::max<int64_t>(gap.from + 1, runFrom) + 1;
      if (overlap <= 0)
        return; // back before the peak
      const double freed = double(bytes(gap.value)) * double(overlap) -
                           retainedByteOps(price, runFrom, runTo);
      if (freed <= 0)
        return; // holds more than it frees
      const double score = freed / (price.costUs + 1e-6);
      // Away over the whole run by at least the excess: the cheapest goes.
      if (pick == ChoicePick::CheapestCover &&
          overlap == runTo - runFrom + 1 && bytes(gap.value) >= excess &&
          (cover < 0 || price.costUs < prices[cover].costUs ||
           (price.costUs == prices[cover].costUs && score > coverScore))) {
        cover = id;
        coverScore = score;
      }
      if (best < 0 || score > bestScore ||
          (score == bestScore &&
           price.to - gap.from > prices[best].to - gaps[best].from)) {
        best = id;
        bestScore = score;
      }
    });
    deadline.count(kWorkPerScheduleStep * work);
    if (best < 0) {
      if (stuck == StuckPeaks::Stop)
        break; // nothing over the peak can go
      // Its run lowered to the target: the other runs over it are next.
      const int64_t excessHere = profile.max(runFrom, runTo) - targetBytes;
      profile.add(runFrom, runTo, -excessHere);
      setAside.push_back({runFrom, runTo, excessHere});
      continue;
    }
    if (cover >= 0) {
      best = cover;
      bestScore = coverScore;
    }
    const Gap &gap = gaps[best];
    taken[best] = 1;
    const Price &bestPrice = prices[best]; // taken: never priced again
    // What this choice changes: its value's absences, those it ends early
    // (and where the recomputations that re-run ops for them end), where
    // the values its recomputations read are read, and which re-run ops.
    auto absencesChange = [&](TensorId value) {
      forget(lookedAt[value]);
      forget(gapsOf[value]);
    };
    absencesChange(gap.value);
    for (auto [id, at] : bestPrice.resumed) {
      absencesChange(chosen_[id].value);
      for (OpId op : chosen_[id].reruns)
        forget(gapsOfOutputsOf[op]);
    }
    for (const ChainRead &read : bestPrice.reads)
      forget(gapsOf[read.value]);
    for (OpId op : bestPrice.reruns)
      forget(gapsOfOutputsOf[op]);
    // Values kept past their last use: present for other chains now.
    for (auto [value, at] : bestPrice.retained) {
      ValueFacts &facts = values_[value];
      if (at <= facts.residentUntil)
        continue;
      profile.add(facts.residentUntil + 1, at, bytes(value));
      facts.residentUntil = at;
      forget(lookedAt[value]);
    }
    // Values rebuilt early for this choice stay resident from there on.
    for (auto [id, at] : bestPrice.resumed) {
      Choice &resumed = chosen_[id];
      if (at >= resumed.to)
        continue; // already back there
      profile.add(at + 1, resumed.to - 1, bytes(resumed.value));
      resumed.to = at;
    }
    absent_[gap.value].push_back(int32_t(chosen_.size()));
    profile.add(gap.from + 1, bestPrice.to - 1, -bytes(gap.value));
    Choice choice = {gap.value, gap.from, bestPrice.to, bestScore,
                     {},        0,        {},           false};
    for (const Rebuild &rebuild : bestPrice.rebuilt)
      if (const int64_t added = addRebuilt(&profile, rebuild))
        choice.rebuilt.push_back({rebuild.at, added});
    for (const ChainRead &read : bestPrice.reads)
      if (g_.tensors[read.value].producer != kNone)
        readAt_[read.value].push_back({read.at, read.laterBytes});
    for (OpId op : bestPrice.reruns)
      rerunBy_[op].push_back(int32_t(chosen_.size()));
    choice.reruns = bestPrice.reruns;
    choice.retains = !bestPrice.retained.empty();
    if (bestPrice.carriedBy >= 0)
      ++chosen_[bestPrice.carriedBy].carried;
    chosen_.push_back(std::move(choice));
  }
  dropRedundant(&profile, profile.max());
  result.peakElsewhereBytes = profile.max();
  for (const SetAsideRun &run : setAside)
    profile.add(run.from, run.to, run.bytes);
  for (const Choice &choice : chosen_)
    result.evictAfter[choice.from].push_back(choice.value);
  if (retainDeadInputs_) {
    result.retainUntil.assign(g_.tensors.size(), kNone);
    for (size_t t = 0; t < values_.size(); ++t)
      if (values_[t].residentUntil > values_[t].lastUse)
        result.retainUntil[t] = values_[t].residentUntil;
  }
  result.peakLiveBytes = profile.max();
  return result;
}

void Scheduler::dropRedundant(Profile *profile, int64_t limitBytes) {
  // Most bytes per microsecond last: the dearest choices go first.
  std::vector<size_t> order(chosen_.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return chosen_[a].score < chosen_[b].score;
  });
  std::vector<char> dropped(chosen_.size(), 0);
  for (size_t i : order) {
    const Choice &choice = chosen_[i];
    if (choice.carried > 0 || choice.retains ||
        profile->max(choice.from + 1, choice.to - 1) + bytes(choice.value) >
            limitBytes)
      continue;
    dropped[i] = 1;
    profile->add(choice.from + 1, choice.to - 1, bytes(choice.value));
    // HeldAtOnce keeps what its recomputations held: another one at the
    // same op may hold as much.
    for (auto [at, added] : choice.rebuilt)
      profile->add(at, at, -added);
    std::vector<int32_t> &absent = absent_[choice.value];
    absent.erase(std::find(absent.begin(), absent.end(), int32_t(i)));
  }
  size_t kept = 0;
  for (size_t i = 0; i < chosen_.size(); ++i)
    if (!dropped[i])
      chosen_[kept++] = std::move(chosen_[i]);
  chosen_.resize(kept);
}

} // namespace

ScheduledEvictions
scheduleEvictions(const Graph &graph, const StepAnalysis &analysis,
                  int64_t alignment, int64_t targetBytes, RebuiltBytes rebuilt,
                  RecomputeChains chains, ScheduleGaps gaps,
                  SiblingOutputs siblings, ChoicePick pick, DeadInputs dead,
                  StuckPeaks stuck, const Deadline &deadline) {
  return Scheduler(graph, analysis, alignment, rebuilt, chains, siblings, dead)
      .run(targetBytes, gaps, pick, stuck, deadline);
}

bool hasEvictableSiblings(const Graph &graph, const StepAnalysis &analysis) {
  return std::any_of(graph.ops.begin(), graph.ops.end(), [&](const Op &op) {
    return std::count_if(op.outputs.begin(), op.outputs.end(),
                         [&](TensorId t) {
                           return analysis.content[t] == t &&
                                  analysis.evictable[t];
                         }) >= 2;
  });
}

} // namespace coop::planner
