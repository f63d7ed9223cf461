//===- CandidateSearch.cpp - The default planner: search over candidates ---===//
//
// Each candidate is a complete plan(): a policy, simulated with what it
// learns from failures, repacked offline. A first round plans every policy
// in the budget's own arena only, which is cheap; a second round gives the
// policies, best first, the simulated-arena search as well (arenas above
// and below the budget), while time allows. The fitting plan with the
// least overhead wins, so the result is never worse than any policy's own
// plan that the search reached.
//
//===----------------------------------------------------------------------===//

#include "coop/Planner/Plan.h"

#include <algorithm>
#include <chrono>
#include <limits>

namespace coop::planner {
namespace {

/// A policy and its eviction shape.
struct Candidate {
  Policy policy;
  /// Coop's contiguous window, or single victims compared per byte.
  bool window;
};

std::string describe(const Candidate &candidate) {
  std::string name = policyName(candidate.policy);
  if (!candidate.window)
    name += " (single victims)";
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
  double consider(const Candidate &candidate, bool searchArenas);
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

double CandidateSearch::consider(const Candidate &candidate,
                                 bool searchArenas) {
  constexpr double kNoPlan = std::numeric_limits<double>::infinity();
  if (found_ && options_.searchTimeLimitSeconds > 0 &&
      elapsed() > options_.searchTimeLimitSeconds) {
    timedOut_ = true;
    return kNoPlan;
  }
  PlanOptions options = options_;
  options.policy = candidate.policy;
  options.slidingWindow = candidate.window;
  options.searchSimulatedBudget = searchArenas;
  const std::string name =
      describe(candidate) +
      (searchArenas ? ", simulated arenas searched" : ", budget's arena");
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
    return kNoPlan;
  const double cost = result.stats.executedCostUs;
  if (!found_ || better(result.stats, best_.stats)) {
    best_ = std::move(result);
    best_.stats.winningCandidate = name;
    found_ = true;
  }
  return cost;
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
  // Round one; failures rank last, in this order.
  std::vector<std::pair<double, Candidate>> ranked;
  for (Candidate candidate :
       {Candidate{Policy::Lookahead, true}, Candidate{Policy::Lookahead, false},
        Candidate{Policy::Coop, true}, Candidate{Policy::DTR, true},
        Candidate{Policy::DTE, true}})
    ranked.push_back({search.consider(candidate, false), candidate});
  // Without offline packing, plan() has no arenas to search.
  if (options.offlinePacking && options.searchSimulatedBudget) {
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
