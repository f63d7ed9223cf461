//===- Planner.cpp - Replays a step through a simulated arena -------------===//
//
// The simulator runs the ops in program order. Before an op runs it lists
// the op's recompute closure (the producers of missing inputs, depth first),
// counts how often the closure and the op still read each value (a value
// with pending reads cannot be evicted), and runs the closure; a value
// brought back only for the closure is freed as soon as its last reader in
// it has run. Then it allocates the op's outputs (evicting when best fit
// fails) and workspace, emits the instruction and frees every value past its
// last use. The policy only decides which resident values to evict.
// docs/planner.md explains the algorithm and where it departs from the
// published one.
//
//===----------------------------------------------------------------------===//

#include "coop/Planner/Plan.h"

#include "coop/Planner/Arena.h"
#include "StepAnalysis.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <chrono>
#include <cmath>
#include <limits>

namespace coop::planner {

const char *policyName(Policy policy) {
  switch (policy) {
  case Policy::None:
    return "none";
  case Policy::Coop:
    return "coop";
  case Policy::DTR:
    return "dtr";
  case Policy::DTE:
    return "dte";
  case Policy::Lookahead:
    return "lookahead";
  }
  return "unknown";
}

bool policyFromName(const std::string &name, Policy *policy) {
  for (Policy p : {Policy::None, Policy::Coop, Policy::DTR, Policy::DTE,
                   Policy::Lookahead})
    if (name == policyName(p)) {
      *policy = p;
      return true;
    }
  return false;
}

int64_t allocationSize(int64_t bytes, int64_t alignment) {
  // Zero-byte values still get a distinct address.
  bytes = std::max<int64_t>(bytes, 1);
  return (bytes + alignment - 1) / alignment * alignment;
}

int64_t workspaceAllocation(const Op &op, int64_t alignment) {
  return op.workspaceBytes > 0 ? allocationSize(op.workspaceBytes, alignment)
                               : 0;
}

bool isExpensiveKernel(const Op &op, int64_t bytes,
                       const PlanOptions &options) {
  for (const std::string &pattern : options.expensiveKernelSubstrings)
    if (op.name.find(pattern) != std::string::npos)
      return true;
  return options.expensiveCostDensity > 0 && bytes > 0 &&
         op.costUs / double(bytes) >= options.expensiveCostDensity;
}

namespace {

/// Arena owner of an op's scratch space.
constexpr int32_t kWorkspaceOwner = -2;
/// Staleness floor, so a just-touched tensor scores high instead of
/// dividing by zero.
constexpr double kStalenessEpsilon = 1e-9;
/// Relative tolerance for "strictly cheaper" windows: sliding sums drift.
constexpr double kCostTolerance = 1e-9;
/// A window is strictly cheaper than one of `cost` below this.
double cheaperThan(double cost) {
  return cost - kCostTolerance * std::max(1.0, cost);
}
/// Calls onWindow(sum, lo, hi) for each window two pointers record over
/// slots [0, count): for each first slot the fewest slots that hold `size`
/// bytes, with the sliding sum of the slots' valueOf().
template <typename SizeOf, typename ValueOf, typename OnWindow>
void forEachWindowOf(size_t count, int64_t size, SizeOf sizeOf,
                     ValueOf valueOf, OnWindow onWindow) {
  // Grow `hi` until the window holds `size` bytes, then shrink from `lo`.
  size_t lo = 0;
  int64_t bytes = 0;
  double sum = 0;
  for (size_t hi = 0; hi < count; ++hi) {
    bytes += sizeOf(hi);
    sum += valueOf(hi);
    while (bytes >= size) {
      onWindow(sum, lo, hi);
      bytes -= sizeOf(lo);
      sum -= valueOf(lo);
      ++lo;
    }
  }
}
/// Whether sliding sums over at most `slots` slots, whose least is
/// `lowest` as computed and whose terms add up to at most `upperSum`, are
/// all at least `threshold` however they round: each addition or
/// subtraction rounds by at most epsilon times the running sum, which
/// stays below upperSum (and so does the computed lowest's own rounding).
bool slidingSumsAtLeast(double lowest, size_t slots, double upperSum,
                        double threshold) {
  const double rounding = 8.0 * double(slots + 1) *
                          std::numeric_limits<double>::epsilon() *
                          (upperSum + lowest);
  return lowest - rounding >= threshold;
}
/// Relative slack of a neighbourhood-cost floor (see
/// neighbourhoodCostBound()).
constexpr double kFloorSlack = 1e-9;
/// Relative slack of a block's least window bound taken at an earlier
/// search (see laterWindowBound()): hundreds of times what the rounding
/// of a block's sliding sums (at most 2 * 128 terms) can take.
constexpr double kReuseSlack = 1e-11;
/// Requests are grouped in size classes, each the sizes that share their
/// four highest bits (an eighth to a sixteenth of their sizes wide); the
/// index of `size`'s class, consecutive for consecutive classes.
size_t sizeClassIndex(int64_t size) {
  size_t shift = 0;
  while ((size >> shift) >= 16)
    ++shift;
  return shift * 8 + size_t((size >> shift) & 7);
}
/// Replays per simulate() call that learn which values to keep (see simulate()).
constexpr int kMaxReplays = 64;
/// Distinct e* groups a neighbourhood cost adds up without repeats; a
/// producer with more inputs and outputs may count a group twice.
constexpr int kMaxNeighbourGroups = 16;


/// Groups of evicted values for DTR's e* neighbourhood cost.
class CostUnionFind {
public:
  int32_t make(double cost) {
    parent_.push_back(static_cast<int32_t>(parent_.size()));
    cost_.push_back(cost);
    madeCost_ += cost;
    return parent_.back();
  }
  int32_t find(int32_t node) {
    while (parent_[node] != node) {
      parent_[node] = parent_[parent_[node]];
      node = parent_[node];
    }
    return node;
  }
  void unite(int32_t a, int32_t b) {
    a = find(a);
    b = find(b);
    if (a == b)
      return;
    parent_[b] = a;
    cost_[a] += cost_[b];
  }
  double cost(int32_t root) const { return cost_[root]; }
  /// Every node's cost at make(): no group costs more (up to rounding).
  double madeCost() const { return madeCost_; }
  void subtract(int32_t root, double cost) {
    const double before = cost_[root];
    cost_[root] = std::max(0.0, before - cost);
    subtracted_ += before - cost_[root];
  }
  /// What subtract() has taken off all groups so far: make() and unite()
  /// only add, so no group has lost more since any earlier moment than
  /// the growth of this sum.
  double subtracted() const { return subtracted_; }

private:
  std::vector<int32_t> parent_;
  std::vector<double> cost_;
  double madeCost_ = 0;
  double subtracted_ = 0;
};

class Simulator {
public:
  Simulator(const Graph &graph, const PlanOptions &options,
            const StepAnalysis &analysis, Plan &plan,
            const std::vector<OpId> &keepUntil,
            const std::vector<char> &packLow,
            const std::vector<OpId> &retainUntil, bool recursiveClosures,
            std::vector<std::vector<TensorId>> &chainReaders)
      : g_(graph), options_(options), plan_(plan), a_(analysis),
        values_(graph.tensors.size()), placements_(graph.tensors.size()),
        opStamp_(graph.ops.size(), 0), awayAndRead_(graph.tensors.size(), 0),
        outputsAwayAndRead_(graph.ops.size(), 0),
        neededByPendingRerun_(graph.ops.size(), 0),
        chainStamp_(graph.ops.size(), 0), keepUntil_(keepUntil),
        packLow_(packLow), retainUntil_(retainUntil),
        retireAt_(graph.ops.size()), recursiveClosures_(recursiveClosures),
        chainReaders_(chainReaders) {
    for (size_t t = 0; t < retainUntil.size(); ++t)
      if (retainUntil[t] > a_.lastUse[t] && retainUntil[t] < OpId(graph.ops.size()))
        retireAt_[retainUntil[t]].push_back(static_cast<TensorId>(t));
    if (options.retainSharedInputs) {
      retainedOnceRebuilt_.assign(graph.tensors.size(), 0);
      for (TensorId t : retainableSharedInputs(graph, analysis)) {
        retainedOnceRebuilt_[t] = 1;
        if (a_.lastRecomputeUse[t] < OpId(graph.ops.size()))
          retireAt_[a_.lastRecomputeUse[t]].push_back(t);
      }
    }
  }

  Status run();
  /// run()'s failure once more bytes were allocated at once than
  /// options.allocatedBytesBound.
  Status boundReached() const {
    return Status::error("more bytes allocated at once (" +
                         std::to_string(plan_.stats.peakAllocatedBytes) +
                         ") than the bound of " +
                         std::to_string(options_.allocatedBytesBound));
  }
  /// After run() failed at an op: the contents that op read which had been
  /// evicted before it (the roots of its recompute closure).
  const std::vector<TensorId> &evictedInputsOfFailedOp() const {
    return evictedInputs_;
  }
  OpId failedOp() const { return currentOp_; }
  /// After run() failed: the values its closure was rebuilding although no
  /// op reads them any more, each with the last op that may still need it.
  std::vector<std::pair<TensorId, OpId>> deadValuesRebuiltAtFailure() const;
  /// After run() failed: the transient values that sat in the arena as
  /// barriers (resident but not evictable then: read by the failing op or
  /// its closure, being written, kept, or never evictable).
  std::vector<TensorId> barriersAtFailure() const;

private:
  /// The last cost score() computed for a resident value, kept as a bound
  /// on later ones (see scoreLowerBound()). For the e* policies a floor on
  /// its neighbourhood cost, with the groups' subtracted() then (cost 0:
  /// none); a neighbour that comes back leaves its group out of the sum, so
  /// it clears the floors of the values it neighbours
  /// (StepAnalysis::neighbourOps). For lookahead its chain cost for the
  /// read `at` (kNone: none): a chain walk reads only the residency of the
  /// inputs it looks at and the static analysis, so the cost stays exact
  /// until one of those comes back or goes (chainReaders_), or the value's
  /// next read moves.
  struct RememberedCost {
    double cost = 0;
    double subtractedBefore = 0;
    OpId at = kNone;
  };
  /// What a search's walk reads of a value, in one cache line: its
  /// evictability, its score terms and its score bounds.
  struct alignas(64) Value {
    double lastAccess = 0;
    /// The producer's cost (score bounds).
    double producerCost = 0;
    RememberedCost remembered;
    /// Lookahead: the first op that reads it after the op it was looked
    /// up at (the next read until the current op reaches it).
    OpId nextRead = kNone;
    /// Reads still to come from the current op and its recompute closure.
    int32_t pendingReads = 0;
    /// The ops at which it may be evicted while resident, unpinned and not
    /// read by the current op: from the end of keepUntil, and while still
    /// read or retained past its last use.
    OpId evictableFrom = 0;
    OpId evictableUntil = 0;
    /// The producer's inputs and outputs (score bounds).
    int32_t producerNeighbours = 0;
    bool resident = false;
    /// Outputs of the op being executed, until it has run.
    bool pinned = false;
  };
  static_assert(sizeof(Value) == 64, "one cache line per value walked");
  /// Where a resident value lies, and its e* group while it is gone.
  struct Placement {
    Arena *region = nullptr;
    int64_t offset = -1;
    int64_t size = 0;
    int32_t group = -1; // union-find node while gone
  };

  Status runOp(OpId k);
  /// Recursive closures: brings `content` back by recomputing its producer
  /// after bringing back each of the producer's inputs in turn, each held
  /// only until the producer has run (DTR's rematerialization).
  Status rematerialize(TensorId content);
  /// Holds `content` for one read to come, or lets it go after that read
  /// (freeing it when nothing else wants it).
  void hold(TensorId content) { ++values_[content].pendingReads; }
  void letGo(TensorId content);
  /// Appends to closure_ the producers that must run again, in order, for
  /// `content` to be resident.
  Status listClosure(TensorId content);
  Status execute(OpId op, bool isRecompute);
  /// After `op` ran: its inputs have one read fewer to come; free what the
  /// current op and its closure no longer need and nothing later reads.
  void consumeReads(OpId op); // `op` was recomputed
  /// Frees a resident value past its last use that nothing holds or retains.
  void freeIfUnwanted(TensorId content);
  /// After `op` was recomputed: frees its outputs but `except` that nobody
  /// wanted (an in-place output it discarded stays where it is).
  void freeUnwantedSiblings(OpId op, TensorId except);
  Status checkRecomputable(TensorId content) const;
  bool shouldConsumeOperand(TensorId operand, TensorId output, OpId op);
  /// What an allocation is for: an output or a discarded output (`id` the
  /// value), or the workspace of op `id`.
  struct Request {
    enum Kind { Output, Discarded, Workspace } kind;
    int32_t id;
  };
  /// Only a failure's message spells a request out: building the string
  /// for every allocation took 3 % of the LSTM's plan search.
  std::string describe(Request request) const;
  Status allocate(int64_t size, int32_t owner, bool expensive,
                  Request request, Arena **region, int64_t *offset);
  bool fitsWithoutEviction(int64_t size) const;
  bool makeRoom(Arena &region, int64_t size);
  /// What score() divides by, and (lookahead) the read it looks ahead to.
  struct ScoreTerms {
    double denominator;
    OpId nextRead;
  };
  /// A free or evictable piece of a window search, and where it is in
  /// the arena (Arena::Iterator::block() and index()).
  struct WindowSlot {
    int64_t size;
    int32_t owner;
    uint32_t block;
    uint32_t index;
    ScoreTerms terms;
    double lowerBound; // scoreLowerBound() when bounded; free: nothing
    double cost;       // score()
  };
  /// Coop: the cheapest contiguous run of pieces holding `size` bytes.
  bool chooseWindow(const Arena &region, int64_t size,
                    std::vector<TensorId> *victims);
  /// Whether no window of the run in run_ can cost less, as its sliding
  /// sums compute it, than `threshold`: decided from the slots' lower
  /// bounds, unscored. `upperCosts` sums their scoreUpperCost(), and
  /// `leastDenominator` is the least of their terms' denominators.
  bool runCostsAtLeast(int64_t size, double threshold, double upperCosts,
                       double leastDenominator);
  /// Calls onWindow(sum, lo, hi) for each window the two pointers record
  /// in run_ (see forEachWindowOf()), summing each slot's `value`.
  template <typename OnWindow>
  void forEachWindow(int64_t size, double WindowSlot::*value,
                     OnWindow onWindow);
  /// How far the simulation has gone, as far as the score bounds read it.
  struct Progress {
    double clock;
    double subtracted; // groups_.subtracted()
    double madeCost;   // groups_.madeCost()
    OpId op;
  };
  Progress now() const {
    return {clock_, groups_.subtracted(), groups_.madeCost(), currentOp_};
  }
  /// A score's upper cost: fixed + groups_.madeCost() * perMadeCost.
  struct UpperCost {
    double fixed;
    double perMadeCost;
  };
  /// A block's least window bound for requests of `size` bytes (0: none)
  /// taken at `at`, while the copy's generation and floor drops were
  /// `generation` and `floorDrops`.
  struct TakenBound {
    int64_t size = 0;
    Progress at{};
    double lowest = 0;
    size_t widest = 0; // the most pieces a window holds
    uint64_t generation = 0;
    double floorDrops = 0;
  };
  /// A copy of what the bounds of a search read of the pieces of one
  /// arena block, in address order, so that a search can bound every
  /// window inside the block without reading the values' records: taken
  /// when a search first needs it, kept while it holds (see "Eviction
  /// search"): while the block's stamp is the same (its pieces unchanged,
  /// and no value in it accessed, or its remembered cost forgotten, since:
  /// touchBlockOf()), and, for lookahead, until the op reaches the
  /// earliest next read copied.
  struct BlockCopy {
    uint64_t stamp = 0; // Arena::blockStamp() when taken; 0: never
    /// The block's stamp when a search first asked for a copy it had not,
    /// and that search (Simulator::searches_).
    uint64_t askedStamp = 0;
    uint64_t askedSearch = 0;
    /// The search that last took lowerBounds, and their least window.
    uint64_t boundsSearch = 0;
    double lowest = 0;
    /// The last least window taken (see laterWindowBound()) for a request
    /// of each size class, at its index modulo their count (four octaves
    /// of classes); those of an earlier generation are forgotten.
    std::array<TakenBound, 32> taken{};
    uint64_t generation = 0;
    /// Coop: how far the floors written into the copy since it was taken
    /// lowered their pieces' bounds, in all (copyRememberedCost()).
    double floorDrops = 0;
    /// Coop: the latest last access of a piece that may be a victim, and
    /// the highest floor copied.
    double latestAccess = 0;
    double highestFloor = 0;
    /// The last op through which it holds: before lookahead's earliest
    /// next read copied, or a copied value becoming evictable.
    OpId validThrough = kNone;
    /// Per piece: its size; the pieces that cannot be victims while the
    /// copy holds (a workspace, a value not evictable before the copy
    /// lapses or never again) in `cuts`.
    std::vector<int64_t> sizes;
    std::vector<size_t> cuts;
    /// Per piece, what its score's lower bound reads (a free piece: zero
    /// cost): the producer's cost (lookahead: the chain cost remembered
    /// for the next read, where there is one), the neighbourhood-cost
    /// floor and the groups' losses then, and the last access (lookahead:
    /// the next read).
    std::vector<double> lowerCosts;
    std::vector<double> floorCosts;
    std::vector<double> floorSubtractedBefore;
    std::vector<double> times;
    /// Per piece, its score's upper cost (UpperCost; zero for a piece that
    /// is not a value), and their sum over the least denominators while
    /// the copy holds, as upperFixed + groups_.madeCost() *
    /// upperPerMadeCost.
    std::vector<UpperCost> upperCosts;
    double upperFixed = 0;
    double upperPerMadeCost = 0;
    /// Scratch for the query: the pieces' score lower bounds.
    std::vector<double> lowerBounds;
    /// Per piece, taken with lowerBounds: the sum of their bounds over the
    /// window the two pointers take from it; +infinity where it has none
    /// in the block, -infinity where the run through it may go on into
    /// the next (see firstRecordableRun()).
    std::vector<double> windowBounds;
  };
  /// The copy of `block` of `region`, taken again where it no longer
  /// holds.
  BlockCopy *blockCopy(const Arena &region, size_t block);
  void copyBlock(const Arena &region, size_t block, BlockCopy &copy);
  std::vector<BlockCopy> &blockCopies(const Arena &region) {
    return &region == &main_ ? mainBlockCopies_ : smallBlockCopies_;
  }
  /// `t`, in piece `index` of `block` of its region, has a new remembered
  /// cost (a floor, or a chain cost): the copy of its block, where
  /// current, takes it too.
  void copyRememberedCost(TensorId t, size_t block, size_t index);
  /// Something a block's copy holds of `t` changed: its block, if it is
  /// resident and its region has copies (none under dtr and dte), gets a
  /// new stamp.
  void touchBlockOf(TensorId t) {
    if (const Placement &p = placements_[t];
        p.region && !blockCopies(*p.region).empty())
      p.region->touch(p.offset);
  }
  /// Whether no window that lies inside `block` can cost less, as a run's
  /// sliding sums compute it, than `threshold` (runCostsAtLeast() for
  /// every run the block may hold at once).
  bool blockCostsAtLeast(const Arena &region, size_t block, int64_t size,
                         double threshold);
  /// The least sum of the score lower bounds at `at` (kept in
  /// copy.lowerBounds) over a window inside the copied block; the most
  /// pieces a window holds in `widest`.
  double lowestWindowBound(BlockCopy &copy, int64_t size, const Progress &at,
                           size_t *widest);
  /// The lower bound on the score of the copied piece `i` at `at`, as
  /// scoreLowerBound() takes it.
  double pieceLowerBound(const BlockCopy &copy, size_t i,
                         const Progress &at) const {
    if (options_.policy == Policy::Lookahead)
      return copy.lowerCosts[i] / readDistance(OpId(copy.times[i]), at);
    return neighbourhoodCostBound(copy.lowerCosts[i], copy.floorCosts[i],
                                  copy.floorSubtractedBefore[i], at) /
           stalenessSince(copy.times[i], at);
  }
  /// A lower bound on lowestWindowBound() for requests of `size` bytes at
  /// `at`, as computed, from those taken at earlier searches
  /// (copy.taken), with no piece read; -infinity where there is none.
  /// `upperSum` bounds the sum of the copied pieces' scores at `at`.
  double laterWindowBound(const BlockCopy &copy, int64_t size,
                          const Progress &at, double upperSum) const;
  double laterWindowBound(const BlockCopy &copy, const TakenBound &taken,
                          const Progress &at, double upperSum) const;
  /// Forgets the least windows taken (copy.taken).
  static void forgetTakenBounds(BlockCopy &copy) { ++copy.generation; }
  /// The sum of the copied pieces' score upper bounds at `at`.
  double upperScoreSum(const BlockCopy &copy, const Progress &at) const;
  /// After blockCostsAtLeast() of `block` and of the next: whether the
  /// next has a piece that ends every run through it (one that cannot be
  /// a victim, or that holds `size` bytes alone), and no window across the
  /// two, between the last such piece of `block` and the first of the
  /// next, can cost less than `threshold`: the run that may cross into
  /// the next block then ends in it, unrecorded.
  bool crossingCostsAtLeast(const Arena &region, size_t block, int64_t size,
                            double threshold);
  /// Where the run through piece `until` of `from`'s block starts (the
  /// block's size: the last run that starts in the block), at or after
  /// `from`: after the last barrier or piece that holds `size` bytes alone
  /// before it, read from `until` back; `from` where there is none.
  Arena::Iterator runStartBefore(const Arena &region, Arena::Iterator from,
                                 size_t until, int64_t size);
  Arena::Iterator lastRunStart(const Arena &region, Arena::Iterator from,
                               int64_t size) {
    return runStartBefore(region, from,
                          region.blockPieces(from.block()).size(), size);
  }
  /// At a run's start `from`, in a block whose windows' bounds this search
  /// took (BlockCopy::windowBounds): the start of the first run from there
  /// that holds a window whose bound may cost less than `threshold`, or
  /// that may go on into the next block. The runs before it cannot be
  /// recorded; `from` where it is not known.
  Arena::Iterator firstRecordableRun(const Arena &region, Arena::Iterator from,
                                     int64_t size, double threshold);
  /// DTR, DTE, Coop without window: the single lowest-scoring tensor.
  TensorId chooseLowestScore(const Arena &region);
  /// A walk's values are scattered: the record of the one a few pieces
  /// ahead of `piece` (any valid record where there is none), which the
  /// walk prefetches while it reads this one, instead of waiting for each.
  const Value *valueAhead(const Arena::Iterator &piece) const {
    constexpr size_t kPiecesAhead = 8;
    const Arena::Piece *ahead = piece.ahead(kPiecesAhead);
    return ahead && ahead->owner >= 0 ? &values_[ahead->owner]
                                      : values_.data();
  }
  bool evictableNow(TensorId t) const {
    const Value &v = values_[t];
    return v.resident && !v.pinned && v.pendingReads == 0 &&
           v.evictableFrom <= currentOp_ && currentOp_ <= v.evictableUntil;
  }
  /// Kept resident until an op that would otherwise have to recompute it.
  bool kept(TensorId t) const { return currentOp_ < keepUntil_[t]; }
  /// Sets values_[t].evictableFrom/Until: not kept, and either evictable
  /// while still read or past its last use but not freed, because
  /// recomputations may read it again (retainedUntil()).
  void setEvictableOps(TensorId t);
  /// The last op through which `t`, past its last use, is kept: retained
  /// by a replay's lesson (retainUntil_), or (PlanOptions::
  /// retainSharedInputs) rebuilt for a recomputation, until the last one
  /// that reads it.
  OpId retainedUntil(TensorId t) const {
    if (!retainedOnceRebuilt_.empty() && retainedOnceRebuilt_[t])
      return std::max(retainUntil_[t], a_.lastRecomputeUse[t]);
    return retainUntil_[t];
  }
  /// Past its last use at op `at` but kept (retainedUntil()).
  bool retainedAt(TensorId t, OpId at) const {
    return a_.lastUse[t] < at && at <= retainedUntil(t);
  }
  /// Lookahead: the first op after the current one that reads `t`, or the
  /// step's end.
  OpId nextRead(TensorId t);
  /// Sets its last access to now.
  void access(TensorId t);
  /// Of the resident `t` in the piece at `offset` of `size` bytes.
  ScoreTerms scoreTerms(TensorId t, const Arena &region, int64_t offset,
                        int64_t size);
  /// Of the resident `t` in piece `index` of `block` of its region.
  double score(TensorId t, const ScoreTerms &terms, size_t block,
               size_t index);
  /// Bounds on score(t, terms) as computed, rounding included, that need
  /// no neighbourhood or chain walk: the cost is at least the producer's,
  /// at least its last neighbourhood cost (Value::remembered) less what
  /// the groups lost since, and a remembered chain cost exactly.
  double scoreLowerBound(const Value &v, const ScoreTerms &terms) const;
  /// The e* policies: the producer's cost, or a floor on the
  /// neighbourhood cost less what the groups lost since, where higher.
  static double neighbourhoodCostBound(double producerCost, double floorCost,
                                       double floorSubtractedBefore,
                                       const Progress &at) {
    // Since the floor was taken, groups gained by merges and new members
    // and lost at most what subtract() took; the slack covers the
    // rounding of the sums, each within a few epsilon of madeCost(). A
    // floor below the producer's cost (or none) leaves the producer's.
    const double lost = at.subtracted - floorSubtractedBefore;
    return std::max(producerCost, floorCost - lost -
                                      kFloorSlack * (floorCost + at.madeCost));
  }
  /// What the policies that score by staleness divide by.
  static double stalenessSince(double lastAccess, const Progress &at) {
    return std::max(at.clock - lastAccess, kStalenessEpsilon);
  }
  /// What lookahead divides by: ops to the read `read`, at least one.
  static double readDistance(OpId read, const Progress &at) {
    return double(std::max<OpId>(read - at.op, 1));
  }
  double scoreUpperBound(const Value &v, const ScoreTerms &terms) const {
    return scoreUpperCost(v) / terms.denominator;
  }
  /// What scoreUpperBound() divides.
  UpperCost scoreUpperCostTerms(const Value &v) const; // see UpperCost
  double scoreUpperCost(const Value &v) const {
    const UpperCost upper = scoreUpperCostTerms(v);
    return upper.fixed + upper.perMadeCost * groups_.madeCost();
  }
  /// Where a search of `region` starts: main_ holds only persistent state,
  /// never a victim, below persistentEnd_.
  int64_t searchStart(const Arena &region) const {
    return &region == &main_ ? persistentEnd_ : region.begin();
  }
  /// The piece at `offset` is freed or handed to another value.
  void noteChanged(const Arena *region, int64_t offset) {
    if (region == &main_ && offset < persistentEnd_)
      persistentEnd_ = offset;
  }
  double neighbourhoodCost(TensorId t);
  /// A neighbourhood cost computed for a resident value, remembered as a
  /// lower bound on later ones (see scoreLowerBound()); whether it was (a
  /// wide producer's is not).
  bool rememberNeighbourhoodCost(TensorId t, double cost);
  /// Lookahead: the ops a read of `t` at op `at` will have to re-run: its
  /// producer, and the producers of every input that is gone by then
  /// (evicted now, or freed after its last use before `at`), transitively.
  /// With `remember`, the cost is kept in Value::remembered and `t` is listed
  /// as a reader of the residency of every value the walk looked at.
  double recomputeChainCost(TensorId t, OpId at, bool remember);
  /// The remembered chain cost of `t` for a read at `at`, or -1.
  double rememberedChainCost(const Value &v, OpId at) const {
    const RememberedCost &memo = v.remembered;
    return memo.at == at ? memo.cost : -1;
  }
  /// `t` came back or went: the chain costs that read its residency are
  /// forgotten.
  void forgetChainsThrough(TensorId t);
  void place(TensorId t, Arena *region, int64_t offset, int64_t size);
  void drop(TensorId t, InstructionKind how);
  void markGone(TensorId t);
  void noteAllocated(int64_t offset, int64_t size);
  std::string describeOp(OpId op) const {
    return "op #" + std::to_string(op) + " '" + g_.ops[op].name + "'";
  }

  const Graph &g_;
  const PlanOptions &options_;
  Plan &plan_;
  const StepAnalysis &a_;
  std::vector<Value> values_;
  std::vector<Placement> placements_;
  Arena main_, small_;
  CostUnionFind groups_;
  double clock_ = 0;
  OpId currentOp_ = kNone;
  uint32_t epoch_ = 0;
  std::vector<uint32_t> opStamp_; // closure visits of the current op
  /// Re-runs every completion of the plan pays: the producer of each
  /// evicted value a later op reads (it comes back only that way), and,
  /// transitively, the producer of each input such a re-run reads that is
  /// gone when the value goes. Per content whether it counts, per op how
  /// many of its outputs count and whether a pending re-run needs it, and
  /// the sum of the costs of the ops with either.
  std::vector<char> awayAndRead_;
  std::vector<int32_t> outputsAwayAndRead_;
  std::vector<char> neededByPendingRerun_;
  double pendingRecomputeUs_ = 0;
  bool rerunPending(OpId op) const {
    return outputsAwayAndRead_[op] > 0 || neededByPendingRerun_[op];
  }
  /// Applies `change` to op's pending state, keeping the sum in step.
  template <typename Change> void changePending(OpId op, Change change) {
    const bool was = rerunPending(op);
    change();
    if (was != rerunPending(op))
      pendingRecomputeUs_ += was ? -g_.ops[op].costUs : g_.ops[op].costUs;
  }
  /// Marks the producers of the gone inputs of a pending re-run of `op`.
  void needInputsOfRerun(OpId op, int depth);
  uint32_t chainEpoch_ = 0;
  std::vector<uint32_t> chainStamp_; // recomputeChainCost visits
  std::vector<StepAnalysis::ChainRead> chainStack_; // the walk's ops to run
  std::vector<OpId> closure_;     // ops to recompute for the current op
  /// Per content: not evicted before this op (simulate() fills it on retries).
  const std::vector<OpId> &keepUntil_;
  std::vector<TensorId> evictedInputs_; // of the current op, before it ran
  /// Per content: placed first fit from the low end (simulate() fills it on
  /// retries with the barriers of a failure).
  const std::vector<char> &packLow_;
  /// Per content: not freed before this op has run, even past its last use
  /// (simulate() fills it on retries with values closures rebuilt).
  const std::vector<OpId> &retainUntil_;
  std::vector<std::vector<TensorId>> retireAt_; // retained values by op
  /// PlanOptions::retainSharedInputs: per value, whether it stays once a
  /// recomputation has rebuilt it past its last use (empty: off).
  std::vector<char> retainedOnceRebuilt_;
  /// Closures run recursively (rematerialize) instead of listed in advance
  /// with every value they read held until its last reader has run.
  const bool recursiveClosures_;
  int64_t recomputesForCurrentOp_ = 0;
  int64_t persistentEnd_ = 0;
  /// Searches skip by bounds and reuse the costs they remembered:
  /// PlanOptions::boundedEvictionSearch is on, and every op costs a
  /// finite, non-negative amount, so the score bounds hold.
  bool boundedSearch_ = false;
  double totalOpCost_ = 0;
  /// Per content: the values whose remembered chain cost read its
  /// residency (may repeat, and name values remembered again since). The
  /// lists are the replays' (ReplayScratch), emptied by run().
  std::vector<std::vector<TensorId>> &chainReaders_;
  /// Per content: its list's last entry (kNone: empty), which the walk
  /// compares for every value it passes; in a flat array, not behind each
  /// list's pointer, where the comparison was a cache miss (a third of
  /// score()'s time on the LSTM's plan search).
  std::vector<TensorId> lastChainReader_;
  /// The slots of a run, in a vector kept at the most a run has held, so
  /// that appending one (the walk does for every piece it keeps) is a
  /// store rather than a call.
  class WindowRun {
  public:
    void clear() { size_ = 0; }
    void push_back(const WindowSlot &slot) {
      if (size_ == slots_.size())
        slots_.resize(2 * size_ + 16);
      slots_[size_++] = slot;
    }
    size_t size() const { return size_; }
    WindowSlot &operator[](size_t i) { return slots_[i]; }
    WindowSlot *begin() { return slots_.data(); }
    WindowSlot *end() { return slots_.data() + size_; }

  private:
    std::vector<WindowSlot> slots_;
    size_t size_ = 0;
  };
  /// chooseWindow()'s current run: consecutive free and evictable pieces
  /// that no piece but the last holds the request alone, so that the
  /// sliding sums start afresh in each run.
  WindowRun run_;
  /// chooseWindow()'s victims, kept for their capacity.
  std::vector<TensorId> victims_;
  /// Per block of main_ and of small_ (see chooseWindow()).
  std::vector<BlockCopy> mainBlockCopies_, smallBlockCopies_;
  uint64_t searches_ = 0; // chooseWindow() calls so far
  int64_t allocatedBytes_ = 0;
  double fragmentationSum_ = 0;
};

void Simulator::noteAllocated(int64_t offset, int64_t size) {
  allocatedBytes_ += size;
  PlanStats &s = plan_.stats;
  s.peakAllocatedBytes = std::max(s.peakAllocatedBytes, allocatedBytes_);
  s.addressHighWater = std::max(s.addressHighWater, offset + size);
}

void Simulator::place(TensorId t, Arena *region, int64_t offset,
                      int64_t size) {
  values_[t].resident = true;
  values_[t].remembered = RememberedCost();
  placements_[t].region = region;
  placements_[t].offset = offset;
  placements_[t].size = size;
  forgetChainsThrough(t);
  int32_t &group = placements_[t].group;
  if (group >= 0) {
    // Recomputed: approximately split it back out of its evicted group.
    const OpId producer = g_.tensors[t].producer;
    groups_.subtract(groups_.find(group), g_.ops[producer].costUs);
    group = -1;
    // The neighbourhoods that counted its group may now leave it out (a
    // chain cost stays exact: forgetChainsThrough() keeps it so).
    if (options_.policy != Policy::Lookahead)
      for (OpId op : a_.neighbourOps[t])
        for (TensorId out : g_.ops[op].outputs) {
          values_[out].remembered = RememberedCost();
          touchBlockOf(out);
        }
  }
}

void Simulator::setEvictableOps(TensorId t) {
  Value &v = values_[t];
  if (a_.evictable[t]) {
    v.evictableFrom = keepUntil_[t];
    v.evictableUntil = kForever;
    return;
  }
  // Past its last use (never, for kForever) and until retainedUntil().
  v.evictableFrom =
      OpId(std::min<int64_t>(std::max<int64_t>(keepUntil_[t],
                                               int64_t(a_.lastUse[t]) + 1),
                             kForever));
  v.evictableUntil = retainedUntil(t);
}

void Simulator::markGone(TensorId t) {
  values_[t].resident = false;
  placements_[t].region = nullptr;
  forgetChainsThrough(t);
  if (!a_.recomputable[t])
    return;
  // Merge with the evicted neighbours of its producer (DTR's e*).
  const Op &producer = g_.ops[g_.tensors[t].producer];
  const int32_t group = placements_[t].group = groups_.make(producer.costUs);
  auto merge = [&](TensorId other) {
    TensorId c = a_.content[other];
    if (c != t && placements_[c].group >= 0)
      groups_.unite(group, placements_[c].group);
  };
  for (TensorId in : producer.inputs)
    merge(in);
  for (TensorId out : producer.outputs)
    merge(out);
}

void Simulator::drop(TensorId t, InstructionKind how) {
  Instruction ins;
  ins.kind = how;
  ins.tensor = t;
  plan_.instructions.push_back(std::move(ins));
  const Placement &p = placements_[t];
  p.region->release(p.offset);
  noteChanged(p.region, p.offset);
  allocatedBytes_ -= p.size;
  markGone(t);
  if (how != InstructionKind::Evict)
    return;
  ++plan_.stats.evictionCount;
  if (nextRead(t) < OpId(g_.ops.size())) {
    awayAndRead_[t] = 1;
    const OpId producer = g_.tensors[t].producer;
    changePending(producer, [&] { ++outputsAwayAndRead_[producer]; });
    needInputsOfRerun(producer, 0);
  }
}

void Simulator::needInputsOfRerun(OpId op, int depth) {
  // As deep as a lookahead chain walk goes (32 ops); past it the bound is
  // only less tight.
  constexpr int kMaxDepth = 32;
  if (depth == kMaxDepth)
    return;
  for (TensorId in : a_.recomputeReads[op]) {
    const OpId producer = g_.tensors[in].producer;
    if (values_[in].resident || awayAndRead_[in] || producer == kNone ||
        !a_.recomputable[in] || neededByPendingRerun_[producer])
      continue;
    changePending(producer, [&] { neededByPendingRerun_[producer] = 1; });
    needInputsOfRerun(producer, depth + 1);
  }
}

double Simulator::neighbourhoodCost(TensorId t) {
  double cost = values_[t].producerCost;
  int32_t roots[kMaxNeighbourGroups];
  int rootCount = 0;
  const int64_t end = a_.producerNeighbourStart[t + 1];
  for (int64_t i = a_.producerNeighbourStart[t]; i < end; ++i) {
    const TensorId c = a_.producerNeighbours[i];
    if (c == t || placements_[c].group < 0)
      continue;
    const int32_t root = groups_.find(placements_[c].group);
    if (std::find(roots, roots + rootCount, root) != roots + rootCount)
      continue;
    if (rootCount < kMaxNeighbourGroups)
      roots[rootCount++] = root;
    cost += groups_.cost(root);
  }
  return cost;
}

void Simulator::forgetChainsThrough(TensorId t) {
  for (TensorId reader : chainReaders_[t]) {
    values_[reader].remembered.at = kNone;
    touchBlockOf(reader);
  }
  chainReaders_[t].clear();
  lastChainReader_[t] = kNone;
}

double Simulator::recomputeChainCost(TensorId t, OpId at, bool remember) {
  // Bounded, so that scoring stays cheap on deep recurrent chains; beyond
  // the bound the cost is underestimated, as e* does everywhere.
  constexpr int kChainOpLimit = 32;
  ++chainEpoch_;
  const OpId root = g_.tensors[t].producer;
  chainStack_.assign(1, {t, root, values_[t].producerCost});
  chainStamp_[root] = chainEpoch_;
  double cost = 0;
  for (int visited = 0; !chainStack_.empty() && visited < kChainOpLimit;
       ++visited) {
    const StepAnalysis::ChainRead step = chainStack_.back();
    chainStack_.pop_back();
    cost += step.producerCostUs;
    const int64_t end = a_.chainReadStart[step.producer + 1];
    for (int64_t i = a_.chainReadStart[step.producer]; i < end; ++i) {
      const StepAnalysis::ChainRead &read = a_.chainReads[i];
      if (chainStamp_[read.producer] == chainEpoch_)
        continue;
      const TensorId in = read.value;
      if (remember) {
        // A value walked again since its last walk through `in` is listed
        // once: forgetting it twice is forgetting it once.
        if (lastChainReader_[in] != t) {
          chainReaders_[in].push_back(t);
          lastChainReader_[in] = t;
        }
      }
      const bool goneBy = !values_[in].resident ||
                          (a_.lastUse[in] < at && !retainedAt(in, at));
      if (goneBy) {
        chainStamp_[read.producer] = chainEpoch_;
        chainStack_.push_back(read);
      }
    }
  }
  if (remember)
    values_[t].remembered = {cost, 0, at};
  return cost;
}

OpId Simulator::nextRead(TensorId t) {
  // A value nothing reads again directly is wanted only by recomputations,
  // if at all: as far away as the step goes. The ops only advance, so a
  // read found after an earlier op is still the next until the current op
  // reaches it.
  Value &v = values_[t];
  if (!boundedSearch_ || v.nextRead <= currentOp_) {
    const std::vector<OpId> &readers = a_.readers[t];
    auto next = std::upper_bound(readers.begin(), readers.end(), currentOp_);
    v.nextRead = next != readers.end() ? *next : OpId(g_.ops.size());
  }
  return v.nextRead;
}

void Simulator::access(TensorId t) {
  values_[t].lastAccess = clock_;
  // A block's copy holds the last access: an earlier one still bounds the
  // score from below, but no longer from above, as the rounding allowance
  // needs. Lookahead's bounds do not read it.
  if (options_.policy != Policy::Lookahead)
    touchBlockOf(t);
}

Simulator::ScoreTerms Simulator::scoreTerms(TensorId t, const Arena &region,
                                             int64_t offset, int64_t size) {
  const Value &v = values_[t];
  if (options_.policy == Policy::Lookahead) {
    const OpId at = nextRead(t);
    const double distance = readDistance(at, now());
    // A window's bytes are fixed by the request; single victims are
    // compared per byte they free.
    const double bytes = options_.slidingWindow ? 1.0 : double(size);
    return {distance * bytes, at};
  }
  const double staleness = stalenessSince(v.lastAccess, now());
  switch (options_.policy) {
  case Policy::DTR:
    return {staleness * double(size), kNone};
  case Policy::DTE:
    return {staleness * double(size + region.freeBytesAround(offset)), kNone};
  case Policy::None:
  case Policy::Coop:
  case Policy::Lookahead:
    break;
  }
  return {staleness, kNone};
}

bool Simulator::rememberNeighbourhoodCost(TensorId t, double cost) {
  // Past kMaxNeighbourGroups a group may count twice, and a merge can then
  // lower the sum: no floor.
  if (values_[t].producerNeighbours > kMaxNeighbourGroups)
    return false;
  values_[t].remembered = {cost, groups_.subtracted(), kNone};
  return true;
}

double Simulator::score(TensorId t, const ScoreTerms &terms, size_t block,
                        size_t index) {
  ++plan_.stats.piecesScored;
  double cost = -1;
  bool remembered = false;
  if (options_.policy == Policy::Lookahead) {
    // The bounded search walks a chain once until what it read changes.
    if (boundedSearch_)
      cost = rememberedChainCost(values_[t], terms.nextRead);
    if (cost < 0) {
      cost = recomputeChainCost(t, terms.nextRead, boundedSearch_);
      remembered = boundedSearch_;
    }
  } else {
    cost = neighbourhoodCost(t);
    remembered = rememberNeighbourhoodCost(t, cost);
  }
  if (remembered && !blockCopies(*placements_[t].region).empty())
    copyRememberedCost(t, block, index);
  return cost / terms.denominator;
}

double Simulator::scoreLowerBound(const Value &v,
                                  const ScoreTerms &terms) const {
  if (options_.policy == Policy::Lookahead) {
    // A remembered chain cost is the score's own numerator.
    const double remembered = rememberedChainCost(v, terms.nextRead);
    return (remembered >= 0 ? remembered : v.producerCost) /
           terms.denominator;
  }
  return neighbourhoodCostBound(v.producerCost, v.remembered.cost,
                                v.remembered.subtractedBefore, now()) /
         terms.denominator;
}

Simulator::UpperCost Simulator::scoreUpperCostTerms(const Value &v) const {
  // A chain runs each op at most once; a neighbourhood adds at most one
  // group per input and output of the producer. Doubled for rounding.
  if (options_.policy == Policy::Lookahead)
    return {2 * totalOpCost_, 0};
  return {2 * v.producerCost, 2 * double(v.producerNeighbours)};
}

bool Simulator::chooseWindow(const Arena &region, int64_t size,
                             std::vector<TensorId> *victims) {
  // Two pointers over the pieces in address order record a window when it
  // is strictly cheaper, by kCostTolerance, than the last one recorded; the
  // last recorded wins. Barriers and pieces that hold `size` bytes alone
  // cut the pieces into runs whose sums start afresh, so a run none of
  // whose windows can be recorded is skipped unscored.
  ++searches_;
  bool found = false;
  double bestCost = 0;
  const Arena::Pieces pieces = region.piecesFrom(searchStart(region));
  const Arena::Iterator end = pieces.end();
  Arena::Iterator piece = pieces.begin();
  size_t boundedBlock = std::numeric_limits<size_t>::max();
  while (piece != end) {
    // Once a window is recorded, the run is bounded as it is walked, while
    // each value's record is at hand; and the first run that starts in a
    // block finds whether any window inside the block could be recorded.
    // Where none could, the runs that lie inside it are passed unwalked:
    // the walk goes on from the start of its last run, which may go on
    // into the next block.
    const bool bounded = boundedSearch_ && found;
    if (bounded && piece.block() != boundedBlock) {
      boundedBlock = piece.block();
      const double threshold = cheaperThan(bestCost);
      if (blockCostsAtLeast(region, boundedBlock, size, threshold)) {
        // The next block too, and the run that may cross into it: the
        // walk goes on from the last run of the last block passed.
        while (boundedBlock + 1 < region.blockCount() &&
               blockCostsAtLeast(region, boundedBlock + 1, size, threshold) &&
               crossingCostsAtLeast(region, boundedBlock, size, threshold)) {
          ++boundedBlock;
          piece = region.iteratorAt(boundedBlock, 0);
        }
        piece = lastRunStart(region, piece, size);
      }
      if (piece == end)
        break;
    }
    if (bounded) {
      // Inside a block not passed, the runs whose windows its bounds rule
      // out are passed too; the next block, if reached so, is asked anew.
      piece = firstRecordableRun(region, piece, size, cheaperThan(bestCost));
      if (piece == end)
        break;
      if (piece.block() != boundedBlock)
        continue;
    }
    double upperCosts = 0;
    double leastDenominator = std::numeric_limits<double>::infinity();
    run_.clear();
    int64_t bytes = 0;
    for (; piece != end; ++piece) {
      ++plan_.stats.piecesScanned;
      __builtin_prefetch(valueAhead(piece));
      const Arena::Piece &p = *piece;
      if (p.owner == Arena::kFree) {
        run_.push_back({p.size, p.owner, uint32_t(piece.block()),
                        uint32_t(piece.index()), {1.0, kNone}, 0.0, 0.0});
      } else if (p.owner >= 0 && evictableNow(p.owner)) {
        const ScoreTerms terms = scoreTerms(p.owner, region, p.offset, p.size);
        double lowerBound = 0;
        if (bounded) {
          lowerBound = scoreLowerBound(values_[p.owner], terms);
          upperCosts += scoreUpperCost(values_[p.owner]);
          leastDenominator = std::min(leastDenominator, terms.denominator);
        }
        run_.push_back({p.size, p.owner, uint32_t(piece.block()),
                        uint32_t(piece.index()), terms, lowerBound, 0.0});
      } else {
        ++piece; // a barrier
        break;
      }
      bytes += p.size;
      if (p.size >= size) {
        ++piece;
        break;
      }
    }
    if (bytes < size)
      continue; // no window
    if (bounded && runCostsAtLeast(size, cheaperThan(bestCost), upperCosts,
                                   leastDenominator))
      continue;
    for (WindowSlot &slot : run_)
      if (slot.owner != Arena::kFree)
        slot.cost = score(slot.owner, slot.terms, slot.block, slot.index);
    forEachWindow(size, &WindowSlot::cost,
                  [&](double cost, size_t lo, size_t hi) {
                    if (found && !(cost < cheaperThan(bestCost)))
                      return;
                    found = true;
                    bestCost = cost;
                    victims->clear();
                    for (size_t i = lo; i <= hi; ++i)
                      if (run_[i].owner != Arena::kFree)
                        victims->push_back(run_[i].owner);
                  });
  }
  return found;
}

bool Simulator::runCostsAtLeast(int64_t size, double threshold,
                                double upperCosts, double leastDenominator) {
  double lowest = std::numeric_limits<double>::infinity();
  forEachWindow(size, &WindowSlot::lowerBound,
                [&](double sum, size_t, size_t) {
                  lowest = std::min(lowest, sum);
                });
  if (!(lowest >= threshold))
    return false; // the rounding only takes from it
  auto costsAtLeast = [&](double upperSum) {
    return slidingSumsAtLeast(lowest, run_.size(), upperSum, threshold);
  };
  // Twice the upper costs over the least denominator is more than that sum
  // however it rounds: one division per run. Where that decides nothing,
  // the sum itself decides.
  if (costsAtLeast(2 * upperCosts / leastDenominator))
    return true;
  double upperSum = 0;
  for (const WindowSlot &slot : run_)
    if (slot.owner != Arena::kFree)
      upperSum += scoreUpperBound(values_[slot.owner], slot.terms);
  return costsAtLeast(upperSum);
}

template <typename OnWindow>
void Simulator::forEachWindow(int64_t size, double WindowSlot::*value,
                              OnWindow onWindow) {
  forEachWindowOf(
      run_.size(), size, [&](size_t i) { return run_[i].size; },
      [&](size_t i) { return run_[i].*value; }, onWindow);
}

Simulator::BlockCopy *Simulator::blockCopy(const Arena &region,
                                           size_t block) {
  std::vector<BlockCopy> &all = blockCopies(region);
  if (all.size() < region.blockCount())
    all.resize(region.blockCount());
  BlockCopy &copy = all[block];
  const uint64_t stamp = region.blockStamp(block);
  if (copy.stamp == stamp && currentOp_ <= copy.validThrough)
    return &copy;
  // A block that changed since an earlier search asked is walked rather
  // than copied: it may well change again before the next.
  if (copy.askedStamp != stamp) {
    copy.askedStamp = stamp;
    copy.askedSearch = searches_;
    return nullptr;
  }
  if (copy.askedSearch == searches_)
    return nullptr;
  copyBlock(region, block, copy);
  return &copy;
}

void Simulator::copyBlock(const Arena &region, size_t block,
                          BlockCopy &copy) {
  const bool lookahead = options_.policy == Policy::Lookahead;
  copy.stamp = region.blockStamp(block);
  copy.validThrough = kForever;
  copy.boundsSearch = 0;
  forgetTakenBounds(copy);
  copy.floorDrops = 0;
  copy.latestAccess = -std::numeric_limits<double>::infinity();
  copy.highestFloor = 0;
  copy.sizes.clear();
  copy.cuts.clear();
  copy.lowerCosts.clear();
  copy.floorCosts.clear();
  copy.floorSubtractedBefore.clear();
  copy.times.clear();
  copy.upperCosts.clear();
  copy.upperFixed = 0;
  copy.upperPerMadeCost = 0;
  // A free piece costs nothing, whenever.
  const double neverRead = double(g_.ops.size());
  auto add = [&](const Arena::Piece &p, double lowerCost,
                 const RememberedCost &floor, double time, UpperCost upper) {
    copy.upperCosts.push_back(upper);
    copy.sizes.push_back(p.size);
    copy.lowerCosts.push_back(lowerCost);
    copy.floorCosts.push_back(floor.cost);
    copy.floorSubtractedBefore.push_back(floor.subtractedBefore);
    copy.times.push_back(time);
  };
  for (const Arena::Piece &p : region.blockPieces(block)) {
    ++plan_.stats.piecesScanned;
    const Value *v = p.owner >= 0 ? &values_[p.owner] : nullptr;
    // A value that may be evicted only from a later op is a barrier until
    // then; a workspace, or a value whose ops have passed or that has
    // none, stays one.
    const OpId from = v ? std::max(v->evictableFrom, currentOp_) : 0;
    if (!v || from > v->evictableUntil) {
      if (p.owner != Arena::kFree)
        copy.cuts.push_back(copy.sizes.size());
      add(p, 0, RememberedCost(), lookahead ? neverRead : clock_, {0, 0});
      continue;
    }
    if (from > currentOp_) {
      copy.validThrough = std::min<OpId>(copy.validThrough, from - 1);
      copy.cuts.push_back(copy.sizes.size());
    }
    const UpperCost upper = scoreUpperCostTerms(*v);
    if (lookahead) {
      // Until the op reaches the read, the distance only shrinks.
      const OpId read = nextRead(p.owner);
      copy.validThrough = std::min<OpId>(copy.validThrough, read - 1);
      const double remembered = rememberedChainCost(*v, read);
      add(p, remembered >= 0 ? remembered : v->producerCost,
          RememberedCost(), double(read), upper);
    } else {
      // The last access stays (access() touches the block).
      add(p, v->producerCost, v->remembered, v->lastAccess, upper);
      if (from == currentOp_)
        copy.latestAccess = std::max(copy.latestAccess, v->lastAccess);
      copy.highestFloor = std::max(copy.highestFloor, v->remembered.cost);
      const double staleness = stalenessSince(v->lastAccess, now());
      copy.upperFixed += upper.fixed / staleness;
      copy.upperPerMadeCost += upper.perMadeCost / staleness;
    }
  }
  if (lookahead) {
    // Each over the least distance to its read while the copy holds.
    Progress latest = now();
    latest.op = copy.validThrough;
    copy.upperFixed = upperScoreSum(copy, latest);
  }
}

void Simulator::copyRememberedCost(TensorId t, size_t block, size_t i) {
  const Placement &p = placements_[t];
  std::vector<BlockCopy> &copies = blockCopies(*p.region);
  if (block >= copies.size())
    return;
  BlockCopy &copy = copies[block];
  if (copy.stamp != p.region->blockStamp(block))
    return;
  const RememberedCost &memo = values_[t].remembered;
  if (options_.policy != Policy::Lookahead) {
    // Both floors lose the same from now on (neighbourhoodCostBound()):
    // where the new floor's bound is below the old one's now, the least
    // windows taken bound the block's windows less the difference.
    auto bound = [&](double floor, double subtractedBefore) {
      return floor - (memo.subtractedBefore - subtractedBefore) -
             kFloorSlack * floor;
    };
    copy.floorDrops += std::max(
        0.0, bound(copy.floorCosts[i], copy.floorSubtractedBefore[i]) -
                 bound(memo.cost, memo.subtractedBefore));
    copy.floorCosts[i] = memo.cost;
    copy.floorSubtractedBefore[i] = memo.subtractedBefore;
    copy.highestFloor = std::max(copy.highestFloor, memo.cost);
  } else if (copy.times[i] == double(memo.at)) {
    copy.lowerCosts[i] = memo.cost;
    forgetTakenBounds(copy);
  }
}

double Simulator::lowestWindowBound(BlockCopy &copy, int64_t size,
                                    const Progress &at, size_t *widest) {
  const size_t count = copy.sizes.size();
  copy.lowerBounds.resize(count);
  double *lowerBounds = copy.lowerBounds.data();
  for (size_t i = 0; i < count; ++i)
    lowerBounds[i] = pieceLowerBound(copy, i, at);
  copy.windowBounds.assign(count, std::numeric_limits<double>::infinity());
  double *windowBounds = copy.windowBounds.data();
  double lowest = std::numeric_limits<double>::infinity();
  size_t first = 0;
  *widest = 0;
  auto windowsBefore = [&](size_t cut) {
    size_t windowless = first; // the first piece with no window from it
    forEachWindowOf(
        cut - first, size, [&](size_t i) { return copy.sizes[first + i]; },
        [&](size_t i) { return lowerBounds[first + i]; },
        [&](double sum, size_t lo, size_t hi) {
          lowest = std::min(lowest, sum);
          *widest = std::max(*widest, hi - lo + 1);
          windowBounds[first + lo] = sum;
          windowless = first + lo + 1;
        });
    // Past the block's last cut, a window may end in the next block.
    if (cut == count)
      std::fill(windowBounds + windowless, windowBounds + count,
                -std::numeric_limits<double>::infinity());
    first = cut + 1;
  };
  for (size_t cut : copy.cuts)
    windowsBefore(cut);
  windowsBefore(copy.sizes.size());
  return lowest;
}

double Simulator::laterWindowBound(const BlockCopy &copy, int64_t size,
                                   const Progress &at,
                                   double upperSum) const {
  // A window for `size` bytes holds one for fewer with the same first
  // piece, and bounds are not negative: the least window for fewer bytes
  // bounds it from below. The class below holds only fewer.
  double highest = -std::numeric_limits<double>::infinity();
  const size_t index = sizeClassIndex(size);
  for (size_t i : {index, index - 1}) {
    const TakenBound &taken = copy.taken[i % copy.taken.size()];
    if (taken.generation == copy.generation && taken.size > 0 &&
        taken.size <= size)
      highest =
          std::max(highest, laterWindowBound(copy, taken, at, upperSum));
  }
  return highest;
}

double Simulator::laterWindowBound(const BlockCopy &copy,
                                   const TakenBound &taken,
                                   const Progress &at,
                                   double upperSum) const {
  if (taken.lowest == std::numeric_limits<double>::infinity())
    return taken.lowest; // no window then, none now
  // Lookahead: until the copy lapses, each distance only shrinks and each
  // bound only grows. Coop: a piece's bound N/d, its floor N less what
  // the groups lost since and its staleness d then at least D, the least
  // of the pieces that may be victims, is now at least (N - lost) / (d +
  // elapsed) >= its bound then * D / (D + elapsed) - lost / D; a
  // window's, at least as much times its pieces less (a free piece's
  // stays zero).
  double lowest = taken.lowest;
  const double least = taken.at.clock - copy.latestAccess;
  if (options_.policy != Policy::Lookahead &&
      least != std::numeric_limits<double>::infinity()) {
    const Progress &then = taken.at;
    const double elapsed = at.clock - then.clock;
    const double lost = (at.subtracted - then.subtracted) +
                        kFloorSlack * (at.madeCost - then.madeCost) +
                        (copy.floorDrops - taken.floorDrops);
    if (!(elapsed >= 0) || !(lost >= 0) || !(least >= kStalenessEpsilon))
      return -std::numeric_limits<double>::infinity();
    // Far more than the rounding of any floor's bound.
    const double rounding =
        kReuseSlack * (copy.highestFloor + at.subtracted + at.madeCost);
    lowest = lowest * (least / (least + elapsed)) -
             double(taken.widest) * (lost + rounding) / least;
  }
  // The slack, far above what rounding of the sums and of the above can
  // take, keeps the bound below the least window as computed.
  return lowest - kReuseSlack * (std::abs(lowest) + upperSum);
}

double Simulator::upperScoreSum(const BlockCopy &copy,
                                const Progress &at) const {
  double sum = 0;
  for (size_t i = 0; i < copy.sizes.size(); ++i) {
    const UpperCost &upper = copy.upperCosts[i];
    const double denominator =
        options_.policy == Policy::Lookahead
            ? readDistance(OpId(copy.times[i]), at)
            : stalenessSince(copy.times[i], at);
    sum += (upper.fixed + upper.perMadeCost * at.madeCost) / denominator;
  }
  return sum;
}

bool Simulator::blockCostsAtLeast(const Arena &region, size_t block,
                                  int64_t size, double threshold) {
  // Every piece that may be a victim while the copy holds gets a lower
  // bound on its score from the copy, as scoreLowerBound() would take it
  // now; the windows lie between the pieces that cannot be victims.
  BlockCopy *copyOrNull = blockCopy(region, block);
  if (!copyOrNull)
    return false;
  BlockCopy &copy = *copyOrNull;
  const Progress current = now();
  const size_t count = copy.sizes.size();
  // The sum of the pieces' upper bounds bounds every run's sums in the
  // block: first as the copy took it, then as it is now.
  const double copiedUpperSum =
      copy.upperFixed + current.madeCost * copy.upperPerMadeCost;
  if (copy.boundsSearch != searches_) {
    // Where the last least window taken still passes the block, its
    // pieces are not read; where not, the least window is taken anew.
    const double later =
        laterWindowBound(copy, size, current, copiedUpperSum);
    if (later == std::numeric_limits<double>::infinity() ||
        (later >= threshold &&
         slidingSumsAtLeast(later, count, copiedUpperSum, threshold))) {
      ++plan_.stats.blocksPassedUnread;
      return true;
    }
    size_t widest = 0;
    copy.lowest = lowestWindowBound(copy, size, current, &widest);
    copy.boundsSearch = searches_;
    // Kept for the next request of its size class, if no smaller: few
    // sizes recur, and a class's sizes have much the same windows.
    copy.taken[sizeClassIndex(size) % copy.taken.size()] = {
        size, current, copy.lowest, widest, copy.generation, copy.floorDrops};
  }
  const double lowest = copy.lowest;
  if (lowest == std::numeric_limits<double>::infinity())
    return true; // no window at all
  if (!(lowest >= threshold))
    return false; // the rounding only takes from it
  if (slidingSumsAtLeast(lowest, count, copiedUpperSum, threshold))
    return true;
  return slidingSumsAtLeast(lowest, count, upperScoreSum(copy, current),
                            threshold);
}

bool Simulator::crossingCostsAtLeast(const Arena &region, size_t block,
                                     int64_t size, double threshold) {
  const std::vector<BlockCopy> &copies = blockCopies(region);
  const BlockCopy &low = copies[block], &high = copies[block + 1];
  // A run ends at the first piece that cannot be a victim, or that holds
  // `size` bytes alone, and the next starts after the last.
  auto boundary = [&](const BlockCopy &copy, size_t i) {
    return copy.sizes[i] >= size ||
           std::binary_search(copy.cuts.begin(), copy.cuts.end(), i);
  };
  size_t highCount = 0;
  while (highCount < high.sizes.size() && !boundary(high, highCount))
    ++highCount;
  if (highCount == high.sizes.size())
    return false;
  // A piece that holds `size` alone ends the run with it.
  if (!std::binary_search(high.cuts.begin(), high.cuts.end(), highCount))
    ++highCount;
  size_t lowFirst = low.sizes.size();
  while (lowFirst > 0 && !boundary(low, lowFirst - 1))
    --lowFirst;
  const size_t lowCount = low.sizes.size() - lowFirst;
  // Either block may have been passed on its last least window, its
  // pieces' bounds untaken: the run's are taken here.
  const Progress current = now();
  double lowest = std::numeric_limits<double>::infinity();
  forEachWindowOf(
      lowCount + highCount, size,
      [&](size_t i) {
        return i < lowCount ? low.sizes[lowFirst + i]
                            : high.sizes[i - lowCount];
      },
      [&](size_t i) {
        return i < lowCount ? pieceLowerBound(low, lowFirst + i, current)
                            : pieceLowerBound(high, i - lowCount, current);
      },
      [&](double sum, size_t, size_t) { lowest = std::min(lowest, sum); });
  if (lowest == std::numeric_limits<double>::infinity())
    return true;
  const size_t count = low.sizes.size() + high.sizes.size();
  return slidingSumsAtLeast(
             lowest, count,
             low.upperFixed + high.upperFixed +
                 current.madeCost *
                     (low.upperPerMadeCost + high.upperPerMadeCost),
             threshold) ||
         slidingSumsAtLeast(lowest, count,
                            upperScoreSum(low, current) +
                                upperScoreSum(high, current),
                            threshold);
}

Arena::Iterator Simulator::firstRecordableRun(const Arena &region,
                                              Arena::Iterator from,
                                              int64_t size,
                                              double threshold) {
  const std::vector<BlockCopy> &copies = blockCopies(region);
  const size_t block = from.block();
  if (block >= copies.size() || copies[block].boundsSearch != searches_)
    return from;
  // Taken at this search's moment, the bounds still hold (a floor or
  // chain cost written into the copy since is no lower than the exact
  // cost). As for a whole block (blockCostsAtLeast()), a window whose
  // bound is at least the threshold, less the rounding allowance over the
  // block, cannot be recorded by the run that holds it.
  const BlockCopy &copy = copies[block];
  const std::vector<double> &windowBounds = copy.windowBounds;
  const size_t count = windowBounds.size();
  const double upperSum =
      copy.upperFixed + groups_.madeCost() * copy.upperPerMadeCost;
  size_t first = from.index();
  while (first < count &&
         (windowBounds[first] == std::numeric_limits<double>::infinity() ||
          (windowBounds[first] >= threshold &&
           slidingSumsAtLeast(windowBounds[first], count, upperSum,
                              threshold))))
    ++first;
  if (first == from.index())
    return from;
  return runStartBefore(region, from, first, size);
}

Arena::Iterator Simulator::runStartBefore(const Arena &region,
                                          Arena::Iterator from, size_t until,
                                          int64_t size) {
  const std::vector<Arena::Piece> &pieces = region.blockPieces(from.block());
  for (size_t i = until; i-- > from.index();) {
    ++plan_.stats.piecesScanned;
    const Arena::Piece &p = pieces[i];
    const bool victim = p.owner == Arena::kFree ||
                        (p.owner >= 0 && evictableNow(p.owner));
    if (!victim || p.size >= size)
      return region.iteratorAt(from.block(), i + 1);
  }
  return from;
}

TensorId Simulator::chooseLowestScore(const Arena &region) {
  // A piece whose score's lower bound is not below the best so far cannot
  // be strictly lower: it is skipped unscored.
  TensorId victim = kNone;
  double best = std::numeric_limits<double>::infinity();
  const Arena::Pieces pieces = region.piecesFrom(searchStart(region));
  for (Arena::Iterator piece = pieces.begin(); piece != pieces.end();
       ++piece) {
    ++plan_.stats.piecesScanned;
    __builtin_prefetch(valueAhead(piece));
    const int32_t owner = piece->owner;
    if (owner < 0 || !evictableNow(owner))
      continue;
    const ScoreTerms terms =
        scoreTerms(owner, region, piece->offset, piece->size);
    if (boundedSearch_ && victim != kNone &&
        scoreLowerBound(values_[owner], terms) >= best)
      continue;
    double s = score(owner, terms, piece.block(), piece.index());
    if (victim == kNone || s < best) {
      best = s;
      victim = owner;
    }
  }
  return victim;
}

bool Simulator::makeRoom(Arena &region, int64_t size) {
  // Only choosing victims counts as search time, not evicting them.
  auto timed = [&](auto &&choose) {
    auto start = std::chrono::steady_clock::now();
    auto result = choose();
    plan_.stats.evictionSearchSeconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                      start)
            .count();
    return result;
  };
  const bool window = options_.policy == Policy::Coop ||
                      options_.policy == Policy::Lookahead;
  if (window && options_.slidingWindow) {
    if (!timed([&] { return chooseWindow(region, size, &victims_); }))
      return false;
    for (TensorId victim : victims_)
      drop(victim, InstructionKind::Evict);
    return true;
  }
  while (!region.fits(size)) {
    TensorId victim = timed([&] { return chooseLowestScore(region); });
    if (victim == kNone)
      return false;
    drop(victim, InstructionKind::Evict);
  }
  return true;
}

bool Simulator::fitsWithoutEviction(int64_t size) const {
  if (small_.size() > 0 && size <= options_.smallTensorBytes &&
      small_.fits(size))
    return true;
  return main_.fits(size);
}

std::string Simulator::describe(Request request) const {
  switch (request.kind) {
  case Request::Output:
    return "'" + g_.tensors[request.id].name + "'";
  case Request::Discarded:
    return "the discarded '" + g_.tensors[request.id].name + "'";
  case Request::Workspace:
    break;
  }
  return "the workspace of " + describeOp(request.id);
}

Status Simulator::allocate(int64_t size, int32_t owner, bool expensive,
                           Request request, Arena **region,
                           int64_t *offset) {
  const bool atHighEdge = options_.twoEndedPartitioning && !expensive;
  // The small region first where it may take the request (a fixed list:
  // a vector here was a heap allocation per request).
  const std::array<Arena *, 2> regions = {&small_, &main_};
  const size_t firstRegion =
      small_.size() > 0 && size <= options_.smallTensorBytes ? 0 : 1;
  // A value the replay keeps resident is as good as unevictable until
  // then: pack it low, next to the persistent state, out of the windows.
  const bool packLow = owner >= 0 && (kept(owner) || packLow_[owner]);
  // Under a cap on the live bytes (an arena with headroom), room is made
  // for the bytes first, a victim at a time; contiguity comes after.
  if (options_.policy != Policy::None &&
      allocatedBytes_ + size > options_.allocatedBytesCap) {
    ++plan_.stats.evictionEvents;
    while (allocatedBytes_ + size > options_.allocatedBytesCap) {
      TensorId victim = chooseLowestScore(main_);
      if (victim == kNone && small_.size() > 0)
        victim = chooseLowestScore(small_);
      if (victim == kNone)
        break;
      drop(victim, InstructionKind::Evict);
    }
  }
  auto place = [&](Arena *r) {
    return packLow ? r->allocateLowest(size, owner)
                   : r->allocate(size, owner, atHighEdge);
  };
  for (size_t i = firstRegion; i < regions.size(); ++i)
    if (Arena *r = regions[i]; (*offset = place(r)) >= 0) {
      *region = r;
      noteAllocated(*offset, size);
      return Status::ok();
    }
  if (options_.policy != Policy::None)
    for (size_t i = firstRegion; i < regions.size(); ++i)
      if (Arena *r = regions[i]; makeRoom(*r, size)) {
        *offset = place(r);
        assert(*offset >= 0);
        *region = r;
        noteAllocated(*offset, size);
        ++plan_.stats.evictionEvents;
        fragmentationSum_ += double(main_.freeBytes() + small_.freeBytes()) /
                             double(options_.budgetBytes);
        return Status::ok();
      }
  int64_t largest = main_.largestFreePiece();
  if (small_.size() > 0)
    largest = std::max(largest, small_.largestFreePiece());
  plan_.stats.unplacedRequestBytes = size;
  plan_.stats.failedOp = currentOp_;
  plan_.stats.reclaimableBytesAtFailure = 0;
  for (const Arena *r : {&main_, &small_})
    for (const Arena::Piece &piece : r->pieces())
      if (piece.owner == Arena::kFree ||
          (piece.owner >= 0 && evictableNow(piece.owner)))
        plan_.stats.reclaimableBytesAtFailure += piece.size;
  std::string message =
      "out of memory at " + describeOp(currentOp_) + " under policy " +
      policyName(options_.policy) + ": cannot place " + std::to_string(size) +
      " bytes for " + describe(request) + " in a budget of " +
      std::to_string(options_.budgetBytes) + " bytes (largest free piece " +
      std::to_string(largest) + ", " +
      std::to_string(main_.freeBytes() + small_.freeBytes()) +
      " bytes free, memory floor " + std::to_string(a_.floorBytes) + ")";
  if (options_.policy == Policy::None)
    message += "; the step without rematerialization needs at least " +
               std::to_string(computeMemoryStats(g_).peakLiveBytes) +
               " live bytes";
  return Status::error(message);
}

bool Simulator::shouldConsumeOperand(TensorId operand, TensorId output,
                                     OpId op) {
  const Value &v = values_[operand];
  if (!v.resident || !options_.recomputableInPlace)
    return false;
  // Reads still to come other than `op`'s own: the rest of the closure and,
  // while recomputing, the current op.
  int32_t readsByOp = 0;
  for (TensorId in : g_.ops[op].inputs)
    readsByOp += a_.content[in] == operand;
  if (v.pendingReads > readsByOp)
    return false;
  if (a_.lastUse[operand] <= currentOp_)
    // Nobody reads the old value after this op. A recursive closure (whose
    // later branches hold nothing yet) may still want it for the current
    // op, and must then be able to recompute it.
    return !recursiveClosures_ || op == currentOp_ ||
           a_.lastUse[operand] < currentOp_ || a_.recomputable[operand];
  if (options_.policy == Policy::None || !a_.evictable[operand] ||
      kept(operand))
    return false;
  // The old value is still read later. Keeping it costs nothing while memory
  // allows; otherwise it becomes a virtual evicted value (Coop's in-place).
  return !fitsWithoutEviction(
      allocationSize(g_.tensors[output].bytes, options_.alignment));
}

Status Simulator::execute(OpId k, bool isRecompute) {
  const Op &op = g_.ops[k];
  Instruction ins;
  ins.kind = isRecompute ? InstructionKind::Recompute : InstructionKind::Run;
  ins.op = k;
  // A recomputation of a discardable op leaves the real versions of its
  // in-place outputs alone and writes them to scratch instead.
  const bool discarding = isRecompute && a_.discardsInPlace[k];
  auto isDiscarded = [&](TensorId out) {
    return discarding && g_.tensors[out].previousVersion != kNone;
  };
  for (TensorId out : op.outputs) {
    if (isDiscarded(out))
      continue;
    if (values_[out].resident) {
      // A sibling of a recomputed value, rewritten where it is: not a
      // victim while the other outputs find room.
      values_[out].pinned = true;
      continue;
    }
    const TensorId prev = g_.tensors[out].previousVersion;
    if (prev != kNone && shouldConsumeOperand(a_.content[prev], out, k)) {
      // The buffer keeps its address and now holds the new version.
      const TensorId operand = a_.content[prev];
      const Placement old = placements_[operand];
      old.region->reassign(old.offset, out);
      noteChanged(old.region, old.offset);
      markGone(operand);
      place(out, old.region, old.offset, old.size);
      ins.outputs.push_back({out, old.offset, old.size, true});
      values_[out].pinned = true;
      continue;
    }
    const int64_t size = allocationSize(g_.tensors[out].bytes, options_.alignment);
    Arena *region = nullptr;
    int64_t offset = -1;
    Status st = allocate(size, out, a_.expensive[out],
                         {Request::Output, out}, &region, &offset);
    if (!st)
      return st;
    place(out, region, offset, size);
    ins.outputs.push_back({out, offset, size, false});
    values_[out].pinned = true;
  }
  changePending(k, [&] {
    neededByPendingRerun_[k] = 0;
    for (TensorId out : op.outputs)
      if (awayAndRead_[out] && values_[out].resident) {
        awayAndRead_[out] = 0;
        --outputsAwayAndRead_[k];
      }
  });
  // Scratch for discarded outputs: like workspace, never a victim.
  std::vector<Arena *> scratchRegions;
  for (TensorId out : op.outputs) {
    if (!isDiscarded(out))
      continue;
    const int64_t size =
        allocationSize(g_.tensors[out].bytes, options_.alignment);
    Arena *region = nullptr;
    int64_t offset = -1;
    Status st = allocate(size, kWorkspaceOwner, a_.expensive[out],
                         {Request::Discarded, out}, &region, &offset);
    if (!st)
      return st;
    ins.discarded.push_back({out, offset, size, false});
    scratchRegions.push_back(region);
  }
  Arena *wsRegion = nullptr;
  if (op.workspaceBytes > 0) {
    ins.workspaceBytes = allocationSize(op.workspaceBytes, options_.alignment);
    bool expensive = isExpensiveKernel(op, ins.workspaceBytes, options_);
    Status st = allocate(ins.workspaceBytes, kWorkspaceOwner, expensive,
                         {Request::Workspace, k}, &wsRegion,
                         &ins.workspaceOffset);
    if (!st)
      return st;
  }
  plan_.instructions.push_back(std::move(ins));
  if (wsRegion) {
    wsRegion->release(plan_.instructions.back().workspaceOffset);
    allocatedBytes_ -= plan_.instructions.back().workspaceBytes;
  }
  const std::vector<Allocation> &discarded =
      plan_.instructions.back().discarded;
  for (size_t i = 0; i < discarded.size(); ++i) {
    scratchRegions[i]->release(discarded[i].offset);
    allocatedBytes_ -= discarded[i].size;
  }

  clock_ += op.costUs;
  plan_.stats.executedCostUs += op.costUs;
  for (TensorId in : isRecompute ? a_.recomputeReads[k] : op.inputs)
    access(a_.content[in]);
  for (TensorId out : op.outputs) {
    if (isDiscarded(out))
      continue;
    access(out);
    values_[out].pinned = false;
  }
  if (isRecompute)
    ++plan_.stats.recomputeCount;
  return Status::ok();
}

Status Simulator::listClosure(TensorId content) {
  if (values_[content].resident)
    return Status::ok();
  if (Status st = checkRecomputable(content); !st)
    return st;
  const OpId producer = g_.tensors[content].producer;
  if (opStamp_[producer] == epoch_)
    return Status::ok(); // already listed: it brings back all its outputs
  opStamp_[producer] = epoch_;
  for (TensorId in : a_.recomputeReads[producer]) {
    Status st = listClosure(in);
    if (!st)
      return st;
  }
  closure_.push_back(producer);
  return Status::ok();
}

void Simulator::freeIfUnwanted(TensorId content) {
  const Value &v = values_[content];
  if (v.resident && v.pendingReads == 0 && a_.lastUse[content] < currentOp_ &&
      !retainedAt(content, currentOp_))
    drop(content, InstructionKind::Free);
}

void Simulator::freeUnwantedSiblings(OpId op, TensorId except) {
  for (TensorId out : g_.ops[op].outputs)
    if (out != except && a_.content[out] == out &&
        !(a_.discardsInPlace[op] && g_.tensors[out].previousVersion != kNone))
      freeIfUnwanted(out);
}

void Simulator::consumeReads(OpId op) {
  for (TensorId in : a_.recomputeReads[op]) {
    --values_[in].pendingReads;
    freeIfUnwanted(in);
    // Rebuilt by this closure and read by none of it any more.
    if (options_.evictClosureValues && evictableNow(in) &&
        g_.tensors[in].producer != kNone &&
        opStamp_[g_.tensors[in].producer] == epoch_ && !recursiveClosures_)
      drop(in, InstructionKind::Evict);
  }
  freeUnwantedSiblings(op, kNone);
  // Outputs that neither the rest of the closure nor the current op read
  // (a max-pool's indices, rebuilt with its output) go at once, not after
  // the op: the schedule counts them only while their producer runs.
  if (options_.evictClosureValues && !recursiveClosures_)
    for (TensorId out : g_.ops[op].outputs)
      if (a_.content[out] == out && evictableNow(out))
        drop(out, InstructionKind::Evict);
}

void Simulator::letGo(TensorId content) {
  --values_[content].pendingReads;
  freeIfUnwanted(content);
}

Status Simulator::checkRecomputable(TensorId content) const {
  if (a_.recomputable[content])
    return Status::ok();
  return Status::error("internal error at " + describeOp(currentOp_) + ": '" +
                       g_.tensors[content].name +
                       "' is gone and cannot be recomputed");
}

Status Simulator::rematerialize(TensorId content) {
  if (values_[content].resident)
    return Status::ok();
  if (Status st = checkRecomputable(content); !st)
    return st;
  // Every recomputation brings at least one value back, but a value brought
  // back can be evicted again before its reader runs; bound the work.
  if (++recomputesForCurrentOp_ > 4 * int64_t(g_.ops.size()) + 64)
    return Status::error("out of memory at " + describeOp(currentOp_) +
                         " under policy " + policyName(options_.policy) +
                         ": its recursive closure keeps evicting what it "
                         "brings back");
  const OpId producer = g_.tensors[content].producer;
  closure_.push_back(producer); // what a failure below was rebuilding
  const std::vector<TensorId> &reads = a_.recomputeReads[producer];
  for (size_t i = 0; i < reads.size(); ++i) {
    Status st = rematerialize(reads[i]);
    if (!st) {
      for (size_t j = 0; j < i; ++j)
        letGo(reads[j]);
      return st;
    }
    hold(reads[i]);
  }
  Status st = execute(producer, /*isRecompute=*/true);
  for (TensorId in : reads)
    letGo(in);
  if (!st)
    return st;
  // Siblings nobody wanted go at once; `content` waits for its reader.
  freeUnwantedSiblings(producer, content);
  return Status::ok();
}

Status Simulator::runOp(OpId k) {
  currentOp_ = k;
  ++epoch_;
  const Op &op = g_.ops[k];
  // The whole schedule is known: list the closure, then count the reads it
  // and the op still have to make, so each value recomputed for it is held
  // exactly until its last reader within the closure has run.
  closure_.clear();
  evictedInputs_.clear();
  for (TensorId in : op.inputs)
    if (!values_[a_.content[in]].resident)
      evictedInputs_.push_back(a_.content[in]);
  if (recursiveClosures_) {
    recomputesForCurrentOp_ = 0;
    for (TensorId in : op.inputs) {
      Status st = rematerialize(a_.content[in]);
      if (!st)
        return st;
      hold(a_.content[in]);
    }
  } else {
    for (TensorId in : op.inputs) {
      Status st = listClosure(a_.content[in]);
      if (!st)
        return st;
    }
    // Listed depth first, a chain of residual blocks runs every block's
    // branch before the first add and holds every branch's output at
    // once; in the step's order each block ends before the next starts.
    if (options_.evictClosureValues)
      std::sort(closure_.begin(), closure_.end());
    for (OpId p : closure_)
      for (TensorId in : a_.recomputeReads[p])
        hold(in);
    for (TensorId in : op.inputs)
      hold(a_.content[in]);
    for (OpId p : closure_) {
      Status st = execute(p, /*isRecompute=*/true);
      if (!st)
        return st;
      consumeReads(p);
    }
  }
  if (op.isView) {
    // Aliases its source: nothing to allocate or compute.
    Instruction ins;
    ins.op = k;
    plan_.instructions.push_back(std::move(ins));
    access(a_.content[op.inputs[0]]);
  } else {
    Status st = execute(k, /*isRecompute=*/false);
    if (!st)
      return st;
  }
  for (TensorId in : op.inputs)
    --values_[a_.content[in]].pendingReads;
  // Values past their last use go now, unless retained for recomputations.
  for (TensorId t : a_.dieAt[k])
    if (values_[t].resident && retainUntil_[t] <= k)
      drop(t, InstructionKind::Free);
  for (TensorId t : retireAt_[k])
    if (values_[t].resident)
      drop(t, InstructionKind::Free);
  if (options_.scheduledEvictions)
    for (TensorId t : (*options_.scheduledEvictions)[k])
      if (evictableNow(t))
        drop(t, InstructionKind::Evict);
  if (options_.evictClosureValues)
    for (OpId p : closure_)
      for (TensorId out : g_.ops[p].outputs) {
        const TensorId t = a_.content[out];
        if (evictableNow(t) &&
            std::none_of(op.inputs.begin(), op.inputs.end(),
                         [&](TensorId in) { return a_.content[in] == t; }))
          drop(t, InstructionKind::Evict);
      }
  return Status::ok();
}

std::vector<std::pair<TensorId, OpId>>
Simulator::deadValuesRebuiltAtFailure() const {
  std::vector<std::pair<TensorId, OpId>> dead;
  for (OpId p : closure_)
    for (TensorId out : g_.ops[p].outputs)
      if (a_.content[out] == out && a_.lastUse[out] < currentOp_ &&
          a_.sharedInput[out])
        dead.push_back({out, a_.lastRecomputeUse[out]});
  return dead;
}

std::vector<TensorId> Simulator::barriersAtFailure() const {
  std::vector<TensorId> barriers;
  for (const Arena *region : {&main_, &small_})
    for (const Arena::Piece &piece : region->pieces()) {
      const int32_t owner = piece.owner;
      if (owner >= 0 && g_.tensors[owner].producer != kNone &&
          !evictableNow(owner))
        barriers.push_back(owner);
    }
  return barriers;
}

Status Simulator::run() {
  PlanStats &stats = plan_.stats;
  stats.memoryFloorBytes = a_.floorBytes;
  stats.memoryFloorOp = a_.floorOp;
  stats.persistentBytes = a_.persistentBytes;
  boundedSearch_ = options_.boundedEvictionSearch;
  for (const Op &op : g_.ops) {
    stats.baselineCostUs += op.costUs;
    boundedSearch_ &= std::isfinite(op.costUs) && op.costUs >= 0;
    for (TensorId out : op.outputs) {
      values_[out].producerCost = op.costUs;
      values_[out].producerNeighbours =
          int32_t(op.inputs.size() + op.outputs.size());
    }
  }
  totalOpCost_ = stats.baselineCostUs;
  for (size_t t = 0; t < g_.tensors.size(); ++t)
    setEvictableOps(TensorId(t));
  chainReaders_.resize(g_.tensors.size());
  for (std::vector<TensorId> &readers : chainReaders_)
    readers.clear();
  lastChainReader_.assign(g_.tensors.size(), kNone);
  if (options_.budgetBytes < a_.floorBytes) {
    std::string message =
        "budget of " + std::to_string(options_.budgetBytes) +
        " bytes is below the memory floor of " +
        std::to_string(a_.floorBytes) + " bytes (" +
        std::to_string(a_.persistentBytes) + " persistent";
    if (a_.floorHeldBytes > 0)
      message += " + " + std::to_string(a_.floorHeldBytes) +
                 " held by values that cannot be recomputed where they are "
                 "read again";
    if (a_.floorOp != kNone)
      message += " + the working set of " + describeOp(a_.floorOp);
    return Status::error(message + ")");
  }

  const int64_t usable =
      options_.budgetBytes / options_.alignment * options_.alignment;
  const int64_t smallBytes =
      options_.smallRegionBytes > 0
          ? std::min(usable, allocationSize(options_.smallRegionBytes,
                                     options_.alignment))
          : 0;
  main_ = Arena(0, usable - smallBytes);
  small_ = Arena(usable - smallBytes, smallBytes);

  // Persistent state first, from the low end, never evicted.
  for (size_t i = 0; i < g_.tensors.size(); ++i) {
    if (g_.tensors[i].producer != kNone)
      continue;
    const TensorId t = static_cast<TensorId>(i);
    const int64_t size = allocationSize(g_.tensors[t].bytes, options_.alignment);
    const int64_t offset = main_.allocate(size, t, /*atHighEdge=*/false);
    if (offset < 0)
      return Status::error("budget of " +
                           std::to_string(options_.budgetBytes) +
                           " bytes cannot hold the persistent state (" +
                           std::to_string(a_.persistentBytes) + " bytes)");
    noteAllocated(offset, size);
    place(t, &main_, offset, size);
    plan_.arguments.push_back({t, offset, size, false});
    persistentEnd_ = std::max(persistentEnd_, offset + size);
  }

  // Every op runs, and most values are freed: room for that many
  // instructions at once instead of growing (and moving) them.
  plan_.instructions.reserve(g_.ops.size() + g_.tensors.size());
  double costLeftUs = stats.baselineCostUs;
  for (OpId k = 0; k < OpId(g_.ops.size()); ++k) {
    // One replay of a large step can take a second: bounded too.
    if (options_.deadline.passed()) {
      stats.timeLimitReached = true;
      return Status::error("the search's limit stopped the simulation at " +
                           describeOp(k));
    }
    // The op's work: what it emits (its run, evictions, recomputations)
    // and the pieces its eviction searches scanned.
    const size_t emitted = plan_.instructions.size();
    const int64_t scanned = stats.piecesScanned;
    Status st = runOp(k);
    options_.deadline.count(kWorkPerSimulatedInstruction *
                                int64_t(plan_.instructions.size() - emitted) +
                            kWorkPerScannedPiece *
                                (stats.piecesScanned - scanned));
    if (!st)
      return st;
    // Where a replay may follow and no plan bounds the cost (the search
    // has none yet), the simulation goes on to its end or its failure: the
    // keeps a replay learns from a failure may keep fewer bytes at once (a
    // generated step's lookahead: 229,376 bytes in the first replay of an
    // arena, 228,864 in its last, budget 228,879). Where a plan exists,
    // such replays cost more than they find (Inception V3 at r = 0.25
    // under the work limit: 25.51 -> 26.68 %).
    if (stats.peakAllocatedBytes > options_.allocatedBytesBound &&
        !stats.allocatedBytesBoundReached) {
      stats.allocatedBytesBoundReached = true;
      if (!options_.learnFromFailures ||
          options_.costBoundUs < std::numeric_limits<double>::infinity()) {
        stats.boundStopped = true;
        return boundReached();
      }
    }
    // Every later op runs at least once, and so does every re-run already
    // committed to (pendingRecomputeUs_): past the bound, this plan cannot
    // win. (The slack keeps a plan that ties the bound, whatever the order
    // of the sums' rounding.)
    costLeftUs -= g_.ops[k].costUs;
    if (stats.executedCostUs + costLeftUs + pendingRecomputeUs_ >
        options_.costBoundUs * (1 + 1e-9)) {
      stats.costBoundReached = stats.boundStopped = true;
      return Status::error("the cost bound stopped the simulation after " +
                           describeOp(k));
    }
  }

  if (stats.allocatedBytesBoundReached)
    return boundReached();
  // Every evicted value a later op read came back for it, and every input
  // such a re-run needed with it.
  assert(std::all_of(outputsAwayAndRead_.begin(), outputsAwayAndRead_.end(),
                     [](int32_t count) { return count == 0; }) &&
         std::all_of(neededByPendingRerun_.begin(), neededByPendingRerun_.end(),
                     [](char needed) { return needed == 0; }));
  if (stats.baselineCostUs > 0)
    stats.computeOverhead = stats.executedCostUs / stats.baselineCostUs - 1;
  if (stats.evictionEvents > 0)
    stats.fragmentationRate = fragmentationSum_ / double(stats.evictionEvents);
  return Status::ok();
}

/// Marks `values` to be packed low on the next replay; an in-place result
/// lives where its first version was placed, so the versions it overwrote
/// are marked too. Returns whether anything new was marked.
bool packLowFromNowOn(const Graph &g, const std::vector<TensorId> &values,
                      std::vector<char> *packLow) {
  bool marked = false;
  for (TensorId value : values)
    for (TensorId v = g.contentOf(value);
         v != kNone && g.tensors[v].producer != kNone;
         v = g.tensors[v].previousVersion == kNone
                 ? kNone
                 : g.contentOf(g.tensors[v].previousVersion)) {
      if (!(*packLow)[v]) {
        (*packLow)[v] = 1;
        marked = true;
      }
    }
  return marked;
}

/// What a series of replays learns from each failure besides the values to
/// keep (see simulate()).
struct ReplayLessons {
  bool packBarriers = false;
  bool retainRebuilt = false;
  bool recursiveClosures = false;
};

/// What the replays of one simulate() call hand on to each other rather
/// than allocate again: the chain readers' lists (Simulator::
/// chainReaders_), whose growth from empty in every replay took 3.5 % of
/// the LSTM's plan search.
struct ReplayScratch {
  std::vector<std::vector<TensorId>> chainReaders;
};

/// One series of replays (see simulate()).
Status replay(const Graph &graph, const PlanOptions &options,
              const StepAnalysis &analysis, ReplayLessons lessons,
              ReplayScratch &scratch, Plan *out) {
  LearnedLessons learned = firstLessons(graph, options);
  learned.recursiveClosures |= lessons.recursiveClosures;
  std::vector<OpId> &keepUntil = learned.keepUntil;
  std::vector<char> &packLow = learned.packLow;
  std::vector<OpId> &retainUntil = learned.retainUntil;
  Status first = Status::ok();
  for (int attempt = 0;; ++attempt) {
    *out = Plan();
    out->policy = options.policy;
    out->twoEndedPartitioning = options.twoEndedPartitioning;
    out->budgetBytes = options.budgetBytes;
    Simulator simulator(graph, options, analysis, *out, keepUntil, packLow,
                        retainUntil, learned.recursiveClosures,
                        scratch.chainReaders);
    Status st = simulator.run();
    if (st) {
      // What it learned, for a simulation without replays to plan again.
      if (attempt > 0 || options.lessons || lessons.recursiveClosures)
        out->lessons = std::make_shared<const LearnedLessons>(learned);
      return st;
    }
    if (attempt == 0)
      first = st;
    // Stopped, not out of memory: nothing to learn from. (A simulation
    // past the allocated-bytes bound that then ran out of memory is
    // learned from: its replay may keep fewer bytes at once.)
    if (out->stats.timeLimitReached || out->stats.costBoundReached ||
        (out->stats.allocatedBytesBoundReached && out->stats.failedOp == kNone))
      return first;
    bool newLesson = false;
    const OpId failed = simulator.failedOp();
    std::vector<TensorId> toKeep = simulator.evictedInputsOfFailedOp();
    if (options.keepEveryInputOfFailedOp && failed != kNone &&
        !toKeep.empty())
      for (TensorId in : graph.ops[failed].inputs)
        if (graph.tensors[graph.contentOf(in)].producer != kNone)
          toKeep.push_back(graph.contentOf(in));
    for (TensorId t : toKeep)
      if (keepUntil[t] < failed) {
        keepUntil[t] = failed;
        newLesson = true;
      }
    if (lessons.packBarriers)
      newLesson |= packLowFromNowOn(graph, simulator.barriersAtFailure(),
                                    &packLow);
    if (lessons.retainRebuilt)
      for (auto [value, until] : simulator.deadValuesRebuiltAtFailure())
        if (retainUntil[value] < until) {
          retainUntil[value] = until;
          newLesson = true;
        }
    if (!newLesson || attempt + 1 >= kMaxReplays || failed == kNone ||
        !options.learnFromFailures)
      return first;
  }
}

} // namespace

LearnedLessons firstLessons(const Graph &graph, const PlanOptions &options) {
  if (options.lessons)
    return *options.lessons;
  LearnedLessons none;
  none.keepUntil.assign(graph.tensors.size(), kNone);
  none.packLow.assign(graph.tensors.size(), 0);
  none.retainUntil = options.scheduledRetention
                         ? *options.scheduledRetention
                         : std::vector<OpId>(graph.tensors.size(), kNone);
  return none;
}

Status simulate(const Graph &graph, const PlanOptions &options, Plan *out) {
  if (Status st = checkAlignment(options); !st)
    return st;
  return simulate(graph, options, analyse(graph, options), out);
}

Status simulate(const Graph &graph, const PlanOptions &options,
                const StepAnalysis &analysis, Plan *out) {
  // The whole schedule is known, so a failed replay can be learned from:
  // when an op runs out of memory while recomputing inputs that were
  // evicted before it, replay with those inputs kept resident until that
  // op, and repeat while that adds something new. A budget that plans on
  // the first replay gives exactly the plain policy's plan.
  // The step analysis depends on neither the lessons nor the attempt:
  // made once for every replay (11 % of a thorough BiLSTM plan).
  ReplayScratch scratch;
  Status first =
      replay(graph, options, analysis, ReplayLessons(), scratch, out);
  if (first || options.policy == Policy::None || !options.learnFromFailures ||
      first.message().rfind("out of memory", 0) != 0)
    return first;
  // Then a second series that also learns where the failure's barriers
  // (resident values that were not evictable then: mostly what the op and
  // its closure still had to read) cut the arena into runs too short for
  // the request, and packs them first fit at the low end from the next
  // replay on. Only when the first series fails, so every budget that
  // planned before plans exactly as before; never for `none`, the baseline
  // that memory ratios are measured against. The first series' error is
  // the one reported.
  // Whether the cost bound cut any series: the step may then plan, at a
  // higher cost. Whether any bound stopped a series, on every outcome.
  bool costBoundReached = out->stats.costBoundReached;
  bool boundStopped = out->stats.boundStopped;
  auto replayed = [&](ReplayLessons lessons) {
    Status st = replay(graph, options, analysis, lessons, scratch, out);
    costBoundReached |= out->stats.costBoundReached;
    boundStopped |= out->stats.boundStopped;
    out->stats.boundStopped = boundStopped;
    return bool(st);
  };
  ReplayLessons lessons;
  lessons.packBarriers = true;
  if (replayed(lessons))
    return Status::ok();
  // A third series also learns which values the failing closure rebuilt
  // although nothing reads them any more, and that more than one op read
  // (a projection shared by every time step of a recurrent layer): those
  // are not freed at their last use but stay resident, evictable, until
  // the last op that may recompute from them, so later closures find them
  // instead of rebuilding them each time.
  lessons.retainRebuilt = true;
  if (replayed(lessons))
    return Status::ok();
  // A last series runs closures recursively, DTR's way (rematerialize):
  // each producer's inputs are brought back in turn and held only until it
  // has run, instead of the whole listed closure holding everything it
  // reads until its last reader, which scatters barriers through the arena
  // when closures are deep (a stack of per-step states of a recurrent net).
  lessons.recursiveClosures = true;
  if (replayed(lessons))
    return Status::ok();
  out->stats.costBoundReached = costBoundReached;
  return first;
}

} // namespace coop::planner
