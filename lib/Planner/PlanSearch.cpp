//===- PlanSearch.cpp - Plans that use the fixed schedule's future --------===//
//
// A simulated plan fixes the schedule; its buffers' lifetimes are then known
// and can be packed offline tighter than the simulator's online best fit.
// So a plan simulated in an arena larger than the budget, which evicts and
// recomputes less, may still fit the budget once repacked. plan() searches
// that simulated arena: the budget itself, an unbounded arena (the schedule
// without evictions), then steps growing from 1/512 of the budget until a
// repacked plan no longer fits (a packing removes fragmentation, a few
// percent, never live bytes), then a bisection of the last step, then a few
// arenas below the budget; the fitting plan with the least overhead wins.
//
//===----------------------------------------------------------------------===//

#include "coop/Planner/Plan.h"

#include "StepAnalysis.h"

#include <algorithm>
#include <chrono>
#include <limits>

namespace coop::planner {
namespace {

/// An arena no plan can run out of: every value and workspace at once.
int64_t unboundedBudget(const Graph &graph, int64_t alignment) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / 2;
  int64_t total = 0;
  auto add = [&](int64_t bytes) {
    total = std::min(kMax, total + std::min(kMax, allocationSize(bytes, alignment)));
  };
  for (const Tensor &t : graph.tensors)
    add(t.bytes);
  for (const Op &op : graph.ops)
    add(op.workspaceBytes);
  return total / alignment * alignment;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start)
      .count();
}

/// Runs the candidates of one plan() call and keeps the best that fits.
class SimulatedBudgetSearch {
public:
  SimulatedBudgetSearch(const Graph &graph, const PlanOptions &options,
                        const StepAnalysis &analysis)
      : graph_(graph), options_(options), analysis_(analysis) {
    packing_.alignment = options.alignment;
    packing_.searchNodeLimit = options.packingNodeLimit;
    packing_.initialOrderOnly = options.packInitialOrderOnly;
    // The ratio's denominator, `none`'s arena, is packed as low as it
    // goes; any other plan only needs to fit.
    if (options.policy != Policy::None)
      packing_.targetPeak = options.budgetBytes;
  }

  /// CostsMore: the cost bound stopped the simulation (it would have
  /// planned at a higher cost than a plan found, or failed).
  enum class Outcome { Fits, TooLarge, SimulationFailed, CostsMore };

  /// Simulates in an arena of `simulated` bytes and, unless its own
  /// addresses already fit the budget, repacks the plan; without `rescue`,
  /// a failed simulation is not replayed; `capped`, the policy evicts to
  /// keep at most the budget's bytes allocated at once
  /// (PlanOptions::allocatedBytesCap). After the deadline, the simulation
  /// fails at once; it stops once it costs more than the best plan so far
  /// (or the options' bound).
  Outcome tryArena(int64_t simulated, bool rescue = true, bool capped = false);
  bool found() const { return found_; }
  /// The simulator's error at the budget's arena (else at the first arena
  /// tried), or a repacking error.
  const Status &firstError() const { return firstError_; }
  const Plan &firstPlan() const { return firstPlan_; }
  /// Moves the winning plan out, repacked, with the search's figures.
  Status take(Plan *out);
  /// Without a fitting plan: the first plan tried and its error.
  Status fail(Plan *out);
  bool bestRecomputesNothing() const {
    return found_ && best_.stats.recomputeCount == 0;
  }

private:
  bool better(const Plan &a, const Plan &b) const;
  Status repack(Plan *plan);

  const Graph &graph_;
  const PlanOptions &options_;
  /// The same for every arena: only the budget and the replays differ.
  const StepAnalysis &analysis_;
  PackOptions packing_;
  Plan best_, firstPlan_;
  bool found_ = false;
  bool budgetTried_ = false;
  bool bestRepacked_ = false;
  bool timeLimitReached_ = false;
  bool costBoundReached_ = false;
  bool boundStopped_ = false;
  Status firstError_ = Status::ok();
  int64_t tried_ = 0;
  double packingSeconds_ = 0;
};

bool SimulatedBudgetSearch::better(const Plan &a, const Plan &b) const {
  const PlanStats &x = a.stats, &y = b.stats;
  if (costsLess(x, y) || costsLess(y, x))
    return costsLess(x, y);
  return x.simulatedBudgetBytes < y.simulatedBudgetBytes; // the smaller arena
}

SimulatedBudgetSearch::Outcome
SimulatedBudgetSearch::tryArena(int64_t simulated, bool rescue, bool capped) {
  PlanOptions options = options_;
  options.budgetBytes = simulated;
  options.learnFromFailures &= rescue;
  if (found_ && options_.boundArenaWalk)
    options.costBoundUs =
        std::min(options.costBoundUs, best_.stats.executedCostUs);
  // More bytes at once than the budget: too large, whatever the packing.
  if (options_.policy != Policy::None && options_.boundArenaWalk)
    options.allocatedBytesBound = options_.budgetBytes;
  if (capped)
    options.allocatedBytesCap = options_.budgetBytes;
  Plan candidate;
  Status st = simulate(graph_, options, analysis_, &candidate);
  candidate.stats.simulatedBudgetBytes = simulated;
  candidate.stats.simulatedBytesCap = options.allocatedBytesCap;
  timeLimitReached_ |= candidate.stats.timeLimitReached;
  costBoundReached_ |= candidate.stats.costBoundReached;
  boundStopped_ |= candidate.stats.boundStopped;
  // Only a plan whose own addresses do not fit needs packing to be judged
  // (the winner is repacked in take()); none that keeps more bytes live at
  // once than the budget can fit. `none` is always packed: its arena is
  // the answer.
  const bool fitsAsIs = options_.policy != Policy::None &&
                        candidate.stats.addressHighWater <= options_.budgetBytes;
  const bool hopeless = candidate.stats.allocatedBytesBoundReached;
  if (st && !fitsAsIs && !hopeless)
    st = repack(&candidate);
  // The budget's own arena has the error worth reporting.
  const bool atBudget = simulated == options_.budgetBytes;
  if (tried_++ == 0 || (atBudget && !budgetTried_)) {
    budgetTried_ |= atBudget;
    firstError_ = st;
    firstPlan_ = candidate;
  }
  if (!st && !hopeless)
    return candidate.stats.costBoundReached ? Outcome::CostsMore
                                            : Outcome::SimulationFailed;
  if (hopeless || candidate.stats.addressHighWater > options_.budgetBytes)
    return Outcome::TooLarge;
  candidate.budgetBytes = options_.budgetBytes;
  if (!found_ || better(candidate, best_)) {
    best_ = std::move(candidate);
    bestRepacked_ = !fitsAsIs;
  }
  found_ = true;
  return Outcome::Fits;
}

Status SimulatedBudgetSearch::repack(Plan *plan) {
  const auto start = std::chrono::steady_clock::now();
  PackResult packing;
  Status st = repackPlan(graph_, packing_, plan, &packing, options_.deadline);
  packingSeconds_ += secondsSince(start);
  PlanStats &stats = plan->stats;
  stats.addressHighWater = packing.peak;
  stats.packingLowerBoundBytes = packing.lowerBound;
  stats.packingMethod = packing.method;
  stats.packingProvedOptimal = packing.provedOptimal;
  return st;
}

Status SimulatedBudgetSearch::take(Plan *out) {
  if (!bestRepacked_)
    if (Status st = repack(&best_); !st)
      return st;
  *out = std::move(best_);
  out->stats.simulatedBudgetsTried = tried_;
  out->stats.packingSeconds = packingSeconds_;
  out->stats.timeLimitReached = timeLimitReached_;
  out->stats.boundStopped = boundStopped_;
  return Status::ok();
}

Status SimulatedBudgetSearch::fail(Plan *out) {
  *out = firstPlan_;
  out->stats.timeLimitReached = timeLimitReached_;
  out->stats.costBoundReached = costBoundReached_;
  out->stats.boundStopped = boundStopped_;
  if (!firstError_)
    return firstError_;
  // The first arena's simulation planned, but not within the budget (one
  // larger than the budget, its plan too large even once packed).
  const PlanStats &stats = out->stats;
  return Status::error(
      "out of memory: the plan simulated in an arena of " +
      std::to_string(stats.simulatedBudgetBytes) + " bytes needs " +
      std::to_string(stats.addressHighWater) + " bytes once packed offline (" +
      std::to_string(stats.peakAllocatedBytes) +
      " bytes live at once), more than the budget of " +
      std::to_string(options_.budgetBytes) + " bytes");
}

} // namespace

int64_t cappedArenaBytes(int64_t budgetBytes, int64_t alignment) {
  // A quarter: an eighth and a sixteenth planned less at Inception V3's
  // r = 0.25 and 0.3, a half more at Swin-T's r = 0.25 and U-Net's 0.3;
  // a fifth and a tenth gave the improvement phase the same plans
  // (docs/planner.md, "An arena with headroom, its live bytes capped").
  return (budgetBytes + budgetBytes / 4) / alignment * alignment;
}

bool runsCheaper(const PlanStats &a, const PlanStats &b) {
  if (a.executedCostUs != b.executedCostUs)
    return a.executedCostUs < b.executedCostUs;
  return a.recomputeCount < b.recomputeCount;
}

bool costsLess(const PlanStats &a, const PlanStats &b) {
  if (runsCheaper(a, b) || runsCheaper(b, a))
    return runsCheaper(a, b);
  return a.addressHighWater < b.addressHighWater;
}

Status plan(const Graph &graph, const PlanOptions &options, Plan *out) {
  if (Status st = checkAlignment(options); !st)
    return st;
  return plan(graph, options, analyse(graph, options), out);
}

Status plan(const Graph &graph, const PlanOptions &options,
            const StepAnalysis &analysis, Plan *out) {
  if (!options.offlinePacking)
    return simulate(graph, options, analysis, out);
  const int64_t budget = options.budgetBytes;
  const int64_t align = options.alignment;
  const int64_t unbounded =
      std::max(unboundedBudget(graph, align), budget / align * align);
  SimulatedBudgetSearch search(graph, options, analysis);

  if (options.policy == Policy::None) {
    // Its schedule does not depend on the arena: simulate once, unbounded.
    search.tryArena(unbounded);
    if (search.found())
      return search.take(out);
    if (!search.firstError())
      return search.firstError(); // an internal error
    const PlanStats &stats = search.firstPlan().stats;
    if (budget < stats.memoryFloorBytes)
      return simulate(graph, options, out); // names the floor
    *out = search.firstPlan();
    return Status::error(
        "out of memory under policy none: the step without "
        "rematerialization needs " +
        std::to_string(stats.addressHighWater) +
        " bytes once packed offline (" +
        std::to_string(stats.peakAllocatedBytes) +
        " bytes live at once), more than the budget of " +
        std::to_string(budget) + " bytes");
  }

  using Outcome = SimulatedBudgetSearch::Outcome;
  using ArenaSearch = PlanOptions::ArenaSearch;
  if (options.simulatedArenas == ArenaSearch::Unbounded) {
    // Where the arena that needs no eviction for contiguity fits once
    // repacked, the budget's own can only add evictions.
    if (search.tryArena(unbounded) != Outcome::Fits)
      search.tryArena(budget);
    return search.found() ? search.take(out) : search.fail(out);
  }
  if (options.simulatedArenas == ArenaSearch::Capped) {
    search.tryArena(cappedArenaBytes(budget, align), /*rescue=*/true,
                    /*capped=*/true);
    return search.found() ? search.take(out) : search.fail(out);
  }
  const Outcome atBudget = search.tryArena(budget);
  if (budget < search.firstPlan().stats.memoryFloorBytes)
    return search.fail(out); // names the floor
  // When the simulator ran short of bytes, not of a contiguous run, a
  // larger arena only keeps more live: no packing brings that back.
  const PlanStats &first = search.firstPlan().stats;
  const bool shortOfBytes = atBudget == Outcome::SimulationFailed &&
                            first.reclaimableBytesAtFailure <
                                first.unplacedRequestBytes;
  // The schedule without evictions, simulated in an unbounded arena, is
  // `none`'s: when it fits once packed, nothing recomputes less.
  if (options.simulatedArenas != ArenaSearch::BudgetOnly &&
      !search.bestRecomputesNothing())
    search.tryArena(unbounded);
  if (options.simulatedArenas == ArenaSearch::Full && !shortOfBytes &&
      !search.bestRecomputesNothing()) {
    // Grow the simulated arena by 1/512, 1/256, ... 1/16 of the budget
    // until a repacked plan no longer fits, then bisect the last step. A
    // simulation that fails costs the most (every replay series): after
    // one at the budget, start at 1/32 and stop at the next.
    int64_t fits = atBudget == Outcome::Fits ? budget : 0, tooLarge = 0;
    // The first arena above `fits` that the cost bound stopped: not known
    // to fit, the end of the bisection before one too large.
    int64_t stoppedAbove = 0;
    // The largest arena the cost bound stopped.
    int64_t lastStopped = 0;
    bool failed = atBudget == Outcome::SimulationFailed;
    for (int64_t step = std::max<int64_t>(budget / (failed ? 32 : 512), align);
         step <= std::max<int64_t>(budget / 16, align) &&
         !search.bestRecomputesNothing();
         step *= 2) {
      const int64_t simulated =
          std::min(unbounded, (budget + step) / align * align);
      const Outcome outcome = search.tryArena(simulated);
      if (outcome == Outcome::Fits) {
        fits = simulated;
        stoppedAbove = 0;
      }
      // One the cost bound stopped goes on growing: a larger one evicts
      // less, and may cost less than the plan that set the bound.
      if (outcome == Outcome::CostsMore && stoppedAbove == 0)
        stoppedAbove = simulated;
      if (outcome == Outcome::CostsMore)
        lastStopped = simulated;
      if (outcome == Outcome::TooLarge)
        tooLarge = simulated;
      if (outcome == Outcome::TooLarge ||
          (outcome == Outcome::SimulationFailed && failed) ||
          simulated >= unbounded)
        break;
      failed |= outcome == Outcome::SimulationFailed;
    }
    // Refine where growing helped, or where the budget itself failed:
    // above the largest arena that fitted, below the first the cost bound
    // stopped above it or else the one too large.
    bool refine = fits > budget || atBudget == Outcome::SimulationFailed ||
                  atBudget == Outcome::TooLarge;
    int64_t lo = std::max(fits, budget),
            hi = stoppedAbove > 0 ? stoppedAbove : tooLarge;
    // Where every arena above the budget up to one too large cost more
    // than the best plan, the plans that evict least may still cost less:
    // those between the largest stopped arena and the one too large (a
    // generated step's lookahead: 12.87 % there, where the search kept
    // 15.49 % and every arena walked cost 20-30 %).
    if (!refine && tooLarge > 0 && lastStopped > 0) {
      refine = true;
      lo = lastStopped;
      hi = tooLarge;
    }
    for (int64_t round = 0; refine && hi > 0 && round < 3 && hi - lo > align &&
                            !search.bestRecomputesNothing();
         ++round) {
      const int64_t mid = (lo + (hi - lo) / 2) / align * align;
      const Outcome outcome = search.tryArena(mid);
      if (outcome == Outcome::SimulationFailed)
        break;
      (outcome == Outcome::TooLarge ? hi : lo) = mid;
    }
  }
  // A plan for a smaller arena is a plan for this budget too, and the
  // simulator is not monotone in its arena (a tighter one may evict other
  // values and recompute less): keep the best of a few below the budget,
  // so a larger budget is rarely worse than a smaller one. Only plans the
  // simulator finds at once: rescuing failures there costs too much.
  if (options.simulatedArenas == ArenaSearch::Full &&
      !search.bestRecomputesNothing())
    for (int64_t fraction : {16, 8, 4}) {
      const int64_t simulated = (budget - budget / fraction) / align * align;
      if (simulated < first.memoryFloorBytes)
        break;
      const Outcome outcome = search.tryArena(simulated, /*rescue=*/false);
      if (outcome == Outcome::SimulationFailed ||
          outcome == Outcome::CostsMore)
        break;
    }
  return search.found() ? search.take(out) : search.fail(out);
}

Status minimumBudget(const Graph &graph, PlanOptions options,
                     int64_t *budgetBytes, Plan *planned) {
  Plan scratch, best;
  const int64_t align = std::max<int64_t>(options.alignment, 1);
  if (options.policy == Policy::None && options.offlinePacking) {
    options.budgetBytes = unboundedBudget(graph, align);
    if (Status st = plan(graph, options, &scratch); !st)
      return st;
    *budgetBytes = (scratch.stats.addressHighWater + align - 1) / align * align;
    if (planned)
      *planned = std::move(scratch);
    return Status::ok();
  }
  // A zero budget fails at the floor check, after the floor is recorded.
  options.budgetBytes = 0;
  static_cast<void>(simulate(graph, options, &scratch));
  int64_t lo = scratch.stats.memoryFloorBytes / align; // in alignment units
  int64_t hi = unboundedBudget(graph, align) / align + lo;
  // A plan is a plan for every budget its high-water mark fits, so the
  // best plan found so far answers any larger budget: the feasibility the
  // bisection sees is monotone even where the simulator is not.
  auto keep = [&] {
    hi = std::max(lo, (scratch.stats.addressHighWater + align - 1) / align);
    best = std::move(scratch);
  };
  options.budgetBytes = hi * align;
  if (Status st = plan(graph, options, &scratch); !st)
    return st;
  keep();
  // Invariant: `best` fits hi; lo - 1 is known or assumed to fail.
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    options.budgetBytes = mid * align;
    if (plan(graph, options, &scratch))
      keep();
    else
      lo = mid + 1;
  }
  *budgetBytes = hi * align;
  if (planned) {
    *planned = std::move(best);
    planned->budgetBytes = *budgetBytes;
  }
  return Status::ok();
}

Status stepBounds(const Graph &graph, PlanOptions options, StepBounds *out) {
  options.policy = Policy::None;
  if (Status st = minimumBudget(graph, options, &out->none); !st)
    return st;
  Plan probe;
  options.budgetBytes = 0; // fails at the floor check, after recording it
  static_cast<void>(plan(graph, options, &probe));
  out->floor = probe.stats.memoryFloorBytes;
  return Status::ok();
}

} // namespace coop::planner
