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

namespace coop::planner {
namespace {

/// A policy, its eviction shape, and evictions chosen ahead of time.
struct Candidate {
  Candidate(Policy policy, bool window) : policy(policy), window(window) {}
  Policy policy;
  /// Coop's contiguous window, or single victims compared per byte.
  bool window;
  std::shared_ptr<const EvictionSchedule> schedule;
  /// The schedule's target, in per mille of the budget.
  int targetPerMille = 0;
};

std::string describe(const Candidate &candidate) {
  if (candidate.policy == Policy::None)
    return "no recomputation";
  std::string name = policyName(candidate.policy);
  if (!candidate.window)
    name += " (single victims)";
  if (candidate.schedule)
    name += " after evictions scheduled for " +
            std::to_string(candidate.targetPerMille / 10) + "." +
            std::to_string(candidate.targetPerMille % 10) + " % of the budget";
  return name;
}

bool better(const PlanStats &x, const PlanStats &y) {
  if (x.executedCostUs != y.executedCostUs)
    return x.executedCostUs < y.executedCostUs;
  if (x.recomputeCount != y.recomputeCount)
    return x.recomputeCount < y.recomputeCount;
  return x.addressHighWater < y.addressHighWater;
}

class CandidateSearch {
public:
  CandidateSearch(const Graph &graph, const PlanOptions &options)
      : graph_(graph), options_(options),
        start_(std::chrono::steady_clock::now()) {}

  /// Plans one candidate unless the time limit has passed and a plan was
  /// found. Returns its executed cost, infinite when it did not plan.
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
  /// Quick: one simulation in the budget's arena, no replays after a
  /// failure. Thorough: plan() as the options ask (replays, simulated
  /// arenas).
  Rank consider(const Candidate &candidate, bool thorough);
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
};

CandidateSearch::Rank CandidateSearch::consider(const Candidate &candidate,
                                                bool thorough) {
  if (found_ && best_.stats.recomputeCount == 0)
    return Rank(); // nothing recomputes less
  if (found_ && options_.searchTimeLimitSeconds > 0 &&
      elapsed() > options_.searchTimeLimitSeconds) {
    timedOut_ = true;
    return Rank();
  }
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
  if (!found_ || better(result.stats, best_.stats)) {
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
      options.budgetBytes >= computeMemoryStats(graph).peakLiveBytes)
    search.consider({Policy::None, true}, /*thorough=*/true);
  std::vector<Candidate> candidates;
  // Schedules aim at the budget first, then below it (headroom for the
  // simulator's contiguity and the packing's leftovers), then above it (the
  // policy makes the last evictions where they fit best).
  const StepAnalysis analysis = analyse(graph, options);
  std::vector<int64_t> peaks;
  for (int perMille : {1000, 970, 940, 1030}) {
    const int64_t budget = options.budgetBytes;
    const int64_t target =
        budget / 1000 * perMille + budget % 1000 * perMille / 1000;
    if (target < analysis.floorBytes)
      continue;
    ScheduledEvictions scheduled =
        scheduleEvictions(graph, analysis, options.alignment, target);
    // A target the greedy could not reach gives the schedule of the one
    // before it.
    if (std::find(peaks.begin(), peaks.end(), scheduled.peakLiveBytes) !=
        peaks.end())
      continue;
    peaks.push_back(scheduled.peakLiveBytes);
    auto schedule = std::make_shared<const EvictionSchedule>(
        std::move(scheduled.evictAfter));
    Candidate candidate{Policy::Lookahead, true};
    candidate.schedule = std::move(schedule);
    candidate.targetPerMille = perMille;
    candidates.push_back(std::move(candidate));
  }
  for (Policy policy : {Policy::Lookahead, Policy::Coop, Policy::DTR,
                        Policy::DTE}) {
    candidates.push_back({policy, true});
    if (policy == Policy::Lookahead)
      candidates.push_back({policy, false});
  }
  // The quick round; a failure ranks by how far it got.
  std::vector<std::pair<CandidateSearch::Rank, Candidate>> ranked;
  for (const Candidate &candidate : candidates)
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
    for (const auto &entry : ranked)
      search.consider(entry.second, true);
  }
  return search.finish(out);
}

} // namespace coop::planner
