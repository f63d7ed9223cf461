//===- CandidateSearch.cpp - The default planner: search over candidates ---===//
//
// A candidate is a policy, maybe following evictions scheduled ahead of
// time from the whole step's live-byte profile (EvictionSchedule.h). A
// quick round simulates each once in the budget's own arena; a thorough
// round, best first, gives each the whole of plan(): replays that learn
// from failures and simulated arenas above and below the budget, repacked
// offline. The fitting plan with the least overhead wins, so the result is
// never worse than any policy's own plan that the search reached.
//
//===----------------------------------------------------------------------===//

#include "coop/Planner/Plan.h"

#include "EvictionSchedule.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>

namespace coop::planner {
namespace {

/// A policy, its eviction shape, and evictions chosen ahead of time.
struct Candidate {
  Candidate(Policy policy, bool window, int targetPerMille = 0,
            RebuiltBytes rebuilt = RebuiltBytes::EveryValue)
      : policy(policy), window(window), targetPerMille(targetPerMille),
        rebuilt(rebuilt) {}
  Policy policy;
  /// Coop's contiguous window, or single victims compared per byte.
  bool window;
  /// Evictions scheduled for the live bytes to stay below this per mille of
  /// the budget (0: none), computed when the candidate first runs.
  int targetPerMille;
  /// How the schedule counts what its recomputations rebuild.
  RebuiltBytes rebuilt;
  std::shared_ptr<const EvictionSchedule> schedule;
  /// No schedule of its own: its target is below the floor, the greedy
  /// reached no lower a peak than for another target, or (HeldAtOnce) the
  /// same target was reached counting every rebuilt value.
  bool redundant = false;
};

std::string describe(const Candidate &candidate) {
  if (candidate.policy == Policy::None)
    return "no recomputation";
  std::string name = policyName(candidate.policy);
  if (!candidate.window)
    name += " (single victims)";
  if (candidate.targetPerMille > 0)
    name += " after evictions scheduled for " +
            std::to_string(candidate.targetPerMille / 10) + "." +
            std::to_string(candidate.targetPerMille % 10) + " % of the budget";
  if (candidate.targetPerMille > 0 &&
      candidate.rebuilt == RebuiltBytes::HeldAtOnce)
    name += " (recomputations counted as held)";
  return name;
}

class CandidateSearch {
public:
  CandidateSearch(const Graph &graph, const PlanOptions &options)
      : graph_(graph), options_(options),
        start_(std::chrono::steady_clock::now()) {}

  /// How promising a candidate is: its executed cost when it planned;
  /// otherwise worse than any plan, the earlier it ran out of memory.
  struct Rank {
    bool planned = false;
    double cost = 0;
    OpId failedOp = kNone;
    bool operator<(const Rank &other) const {
      if (planned != other.planned)
        return planned;
      return planned ? cost < other.cost : failedOp > other.failedOp;
    }
  };
  /// Plans one candidate, unless a plan was found and it recomputes nothing
  /// or the time limit has passed. Quick: one simulation in the budget's
  /// arena (a scheduled candidate's unbounded one first), no replays after
  /// a failure. Thorough: plan() as the options ask (replays, simulated
  /// arenas).
  Rank consider(Candidate &candidate, bool thorough);
  Status finish(Plan *out);

private:
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start_)
        .count();
  }

  const Graph &graph_;
  const PlanOptions &options_;
  const std::chrono::steady_clock::time_point start_;
  std::vector<SearchCandidate> tried_;
  Plan best_, first_;
  bool found_ = false, timedOut_ = false;
  Status firstError_ = Status::ok();
  /// For schedules, once one is needed.
  std::unique_ptr<StepAnalysis> analysis_;
  std::vector<int64_t> scheduledPeaks_;
  /// Targets (per mille) reached counting every rebuilt value.
  std::vector<int> reachedPerMille_;

  /// Computes `candidate`'s schedule, or marks it redundant.
  void schedule(Candidate &candidate);
};

void CandidateSearch::schedule(Candidate &candidate) {
  if (!analysis_)
    analysis_ = std::make_unique<StepAnalysis>(analyse(graph_, options_));
  const int64_t budget = options_.budgetBytes;
  const int64_t perMille = candidate.targetPerMille;
  const int64_t target = budget / 1000 * perMille + budget % 1000 * perMille / 1000;
  const bool reached = std::find(reachedPerMille_.begin(),
                                 reachedPerMille_.end(),
                                 perMille) != reachedPerMille_.end();
  if (target < analysis_->floorBytes ||
      (candidate.rebuilt == RebuiltBytes::HeldAtOnce && reached)) {
    candidate.redundant = true;
    return;
  }
  ScheduledEvictions scheduled = scheduleEvictions(
      graph_, *analysis_, options_.alignment, target, candidate.rebuilt);
  if (candidate.rebuilt == RebuiltBytes::EveryValue &&
      scheduled.peakLiveBytes <= target)
    reachedPerMille_.push_back(int(perMille));
  if (std::find(scheduledPeaks_.begin(), scheduledPeaks_.end(),
                scheduled.peakLiveBytes) != scheduledPeaks_.end()) {
    candidate.redundant = true;
    return;
  }
  scheduledPeaks_.push_back(scheduled.peakLiveBytes);
  candidate.schedule = std::make_shared<const EvictionSchedule>(
      std::move(scheduled.evictAfter));
}

CandidateSearch::Rank CandidateSearch::consider(Candidate &candidate,
                                                bool thorough) {
  if (found_ && best_.stats.recomputeCount == 0)
    return Rank(); // nothing recomputes less
  if (found_ && options_.searchTimeLimitSeconds > 0 &&
      elapsed() > options_.searchTimeLimitSeconds) {
    timedOut_ = true;
    return Rank();
  }
  if (candidate.targetPerMille > 0 && !candidate.schedule &&
      !candidate.redundant)
    schedule(candidate);
  if (candidate.redundant)
    return Rank();
  PlanOptions options = options_;
  options.policy = candidate.policy;
  options.slidingWindow = candidate.window;
  options.scheduledEvictions = candidate.schedule;
  if (!thorough) {
    // A schedule's own evictions in an unbounded arena, repacked: one more
    // simulation, and often the best plan (no contiguity to make room for).
    options.simulatedArenas = candidate.schedule
                                  ? PlanOptions::ArenaSearch::Unbounded
                                  : PlanOptions::ArenaSearch::BudgetOnly;
    options.learnFromFailures = false;
    // The budget's arena was laid out by the simulator: compacting its own
    // order mostly fits. An unbounded one was not, and needs the packer.
    options.packInitialOrderOnly = !candidate.schedule;
  }
  const std::string name =
      describe(candidate) +
      (candidate.policy == Policy::None ? ""
                                         : thorough ? ", thorough" : ", quick");
  const double began = elapsed();
  Plan result;
  Status st = plan(graph_, options, &result);
  tried_.push_back(
      {name, bool(st), result.stats.computeOverhead, elapsed() - began});
  if (tried_.size() == 1) {
    firstError_ = st;
    first_ = result;
  }
  if (!st)
    return {false, 0, result.stats.failedOp};
  const Rank rank = {true, result.stats.executedCostUs, kNone};
  if (!found_ || costsLess(result.stats, best_.stats)) {
    best_ = std::move(result);
    best_.stats.winningCandidate = name;
    found_ = true;
  }
  return rank;
}

Status CandidateSearch::finish(Plan *out) {
  *out = found_ ? std::move(best_) : std::move(first_);
  out->stats.candidates = std::move(tried_);
  out->stats.searchTimeLimitReached = timedOut_;
  return found_ ? Status::ok() : firstError_;
}

} // namespace

Status searchPlan(const Graph &graph, const PlanOptions &options, Plan *out) {
  CandidateSearch search(graph, options);
  // The schedule without evictions, packed offline, first: where it fits,
  // nothing recomputes less. It cannot fit below the live bytes' peak.
  if (options.offlinePacking &&
      options.budgetBytes >= computeMemoryStats(graph).peakLiveBytes) {
    Candidate withoutEvictions{Policy::None, true};
    search.consider(withoutEvictions, /*thorough=*/true);
  }
  // Schedules aim at the budget first, then below it (headroom for the
  // simulator's contiguity and the packing's leftovers), then above it (the
  // policy makes the last evictions where they fit best).
  std::vector<Candidate> candidates;
  // Where a target is out of the greedy's reach with the margin of every
  // rebuilt value (near the floor), again counting what is really held.
  for (RebuiltBytes rebuilt :
       {RebuiltBytes::EveryValue, RebuiltBytes::HeldAtOnce})
    for (int perMille : {1000, 970, 940, 1030})
      candidates.push_back({Policy::Lookahead, true, perMille, rebuilt});
  for (Policy policy : {Policy::Lookahead, Policy::Coop, Policy::DTR,
                        Policy::DTE}) {
    candidates.push_back({policy, true});
    if (policy == Policy::Lookahead)
      candidates.push_back({policy, false});
  }
  // The quick round; a failure ranks by how far it got.
  std::vector<std::pair<CandidateSearch::Rank, Candidate>> ranked;
  for (Candidate &candidate : candidates)
    ranked.push_back({search.consider(candidate, false), candidate});
  const bool thoroughDiffers =
      options.learnFromFailures ||
      (options.offlinePacking &&
       options.simulatedArenas != PlanOptions::ArenaSearch::BudgetOnly);
  if (thoroughDiffers) {
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto &a, const auto &b) {
                       return a.first < b.first;
                     });
    for (auto &entry : ranked)
      search.consider(entry.second, true);
  }
  return search.finish(out);
}

} // namespace coop::planner
