//===- PlanImprovement.h - Local search on the plan search's winner -*- C++ -*-===//
//
// Internal to the planner core. The plan search simulates each candidate
// once or a few times and keeps the best plan; improvePlan() then spends
// the time left on that plan alone: it changes the evictions it follows
// ahead of time one at a time (drops a scheduled eviction whose
// recomputations cost the most, or moves an eviction the policy made under
// pressure up to the value's last read before it), simulates the change
// once with the winner's options, and keeps it where the plan still fits
// the budget and costs less. A change may also swap a dropped eviction for
// one of a value cheaper to recompute, idle where the dropped one's bytes
// do not fit. With keeps, a change also keeps an evicted value resident
// until its read (neither the schedule nor the policy may evict it): after
// the evictions' own changes, and in a second descent from the same plan;
// the cheaper of the two plans is kept.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_LIB_PLANNER_PLANIMPROVEMENT_H
#define COOP_LIB_PLANNER_PLANIMPROVEMENT_H

#include "StepAnalysis.h"

namespace coop::planner {

/// What improvePlan() did.
struct PlanImprovement {
  /// Changes kept (each made the plan cheaper).
  int improvements = 0;
  /// Changes simulated, kept or not.
  int neighboursTried = 0;
  /// The deadline stopped it with changes left to try.
  bool timeLimitReached = false;
};

/// The most changes improvePlan() simulates for one plan: without a time
/// limit it runs until no change improves or this many were tried, so that
/// an unlimited search stays reasonable (one or two simulations each; the
/// zoo's winners at r = 0.5 run out of changes after 50-160).
constexpr int kMaxImprovementNeighbours = 128;

/// Improves `incumbent`, the plan that `winner` (the options plan() was
/// given, its arena in incumbent->stats.simulatedBudgetBytes) found for
/// `budgetBytes`: first improvement, the changes in order of their expected
/// gain (recomputation microseconds a dropped eviction caused, less the
/// swapped-in value's producer; then bytes times ops an eviction moved up
/// frees earlier), each simulated once without replays in the winner's
/// arena (and in the budget's own where that keeps more live than the
/// budget), repacked; a change is kept where the plan fits the budget and
/// executes in less time (or as long with fewer recomputations). Nothing
/// where the winner's own schedule, simulated that way, is not the
/// incumbent (from what its replays learned, Plan::lessons). Two descents
/// from the incumbent: the evictions' own changes, then with keeps besides
/// (raising the lessons' keepUntil) from where that stopped; and with keeps
/// from the start. Each neighbourhood until no change improves or after
/// `maxNeighbours` tries, all by `deadline`; the cheaper plan is kept, with
/// its search stats (winning candidate, arenas tried).
PlanImprovement improvePlan(const Graph &graph, const StepAnalysis &analysis,
                            const PlanOptions &winner, int64_t budgetBytes,
                            const Deadline &deadline, Plan *incumbent,
                            int maxNeighbours = kMaxImprovementNeighbours);

} // namespace coop::planner

#endif // COOP_LIB_PLANNER_PLANIMPROVEMENT_H
