//===- CandidateSearch.cpp - The default planner: search over candidates --===//
//
// A candidate is a policy, maybe following evictions scheduled ahead of
// time from the whole step's live-byte profile (EvictionSchedule.h). A
// quick round simulates each once in the budget's own arena, the policies
// alone first; a thorough round, best first, gives each the whole of
// plan(): replays that learn from failures and simulated arenas above and
// below the budget, repacked offline, where one that failed at once first
// gets a rescue, the replays in the budget's arena only, within a share of
// the time left. The least promising candidates (schedules likely to stop
// where another stopped) get a second pair of rounds after that, so that
// the limit cuts them first. The last fifth of the limit is the capped
// round's: every candidate again, those whose schedule keeps the live
// bytes nearest the budget first, each in an arena a quarter
// larger than the budget with its live bytes capped at the budget, then
// repacked into the budget (where the budget's own arena runs out of
// contiguous runs, not of bytes). The fitting plan with the least overhead
// wins, so the result is never worse than any policy's own plan that the
// search reached.
//
//===----------------------------------------------------------------------===//

#include "coop/Planner/Plan.h"

#include "EvictionSchedule.h"
#include "PlanImprovement.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>

namespace coop::planner {
namespace {

/// How a schedule's greedy runs: how it counts what recomputations
/// rebuild, how long a chain it prices, which gaps it may drop a value
/// for, what re-running a multi-output op brings back, and which
/// candidate it takes.
struct ScheduleKind {
  RebuiltBytes rebuilt = RebuiltBytes::EveryValue;
  RecomputeChains chains = RecomputeChains::Short;
  ScheduleGaps gaps = ScheduleGaps::BetweenReads;
  SiblingOutputs siblings = SiblingOutputs::Apart;
  ChoicePick pick = ChoicePick::BestRatio;
  DeadInputs dead = DeadInputs::Recomputed;
  StuckPeaks stuck = StuckPeaks::Stop;
  /// The same choices to make, however the rebuilt bytes are counted.
  bool sameChoices(const ScheduleKind &other) const {
    return chains == other.chains && gaps == other.gaps &&
           siblings == other.siblings && pick == other.pick &&
           dead == other.dead && stuck == other.stuck;
  }
  bool operator==(const ScheduleKind &other) const {
    return rebuilt == other.rebuilt && sameChoices(other);
  }
};

/// A policy, its eviction shape, and evictions chosen ahead of time.
struct Candidate {
  Candidate(Policy policy, bool window, int targetPerMille = 0,
            ScheduleKind kind = {})
      : policy(policy), window(window), targetPerMille(targetPerMille),
        kind(kind) {}
  Policy policy;
  /// Coop's contiguous window, or single victims compared per byte.
  bool window;
  /// Evictions scheduled for the live bytes to stay below this per mille of
  /// the budget it plans for (0: none), computed when the candidate first
  /// runs.
  int targetPerMille;
  /// Plans for this per mille of the budget: a plan that fits a smaller
  /// budget fits the budget too, and a smaller budget sometimes plans with
  /// less overhead (the simulator and the schedule's greedy are not
  /// monotone in their budget).
  int budgetPerMille = 1000;
  /// How the schedule is computed.
  ScheduleKind kind;
  /// PlanOptions::evictClosureValues: the twin of a schedule counting held
  /// bytes (RebuiltBytes::HeldAtOnce, HeldInTurn) that follows it, which
  /// that count assumes.
  bool evictClosureValues = false;
  /// PlanOptions::retainSharedInputs. With a schedule: the twin of the
  /// schedule's candidate that follows it.
  bool retainSharedInputs = false;
  /// PlanOptions::twoEndedPartitioning, where the options allow it.
  bool partition = true;
  /// Its quick round's run was already thorough (or a rescue).
  bool ranThorough = false;
  /// It has a plan for this budget, from its quick run or its rescue.
  bool planned = false;
  /// Put off to the second pair of rounds, where a copy of it runs: the
  /// first list's entry is then not run again one-ended, the copy is.
  bool deferred = false;
  std::shared_ptr<const EvictionSchedule> schedule;
  /// What the schedule keeps past its last use (null: nothing).
  std::shared_ptr<const std::vector<OpId>> retention;
  /// No schedule of its own: its target is below the floor, the greedy
  /// reached no lower a peak than for another target, (HeldAtOnce) the
  /// same target was reached counting every rebuilt value, (HeldInTurn)
  /// no schedule counting HeldAtOnce missed it, or
  /// (SiblingOutputs::RebuiltTogether, dead inputs rebuilt) no op has two
  /// outputs to drop, or
  /// (DeadInputs::Retained) no recomputation can read a shared input past
  /// its last use.
  bool redundant = false;
  /// A policy planned as `policy=` plans it (Candidate{policy, true}): no
  /// schedule, no twin, the whole budget, the options' shape.
  bool alone() const {
    return policy != Policy::None && window && partition &&
           targetPerMille == 0 && budgetPerMille == 1000 &&
           !retainSharedInputs && !evictClosureValues;
  }
};

std::string percent(int perMille) {
  return std::to_string(perMille / 10) + "." + std::to_string(perMille % 10) +
         " %";
}

std::string describe(const Candidate &candidate) {
  if (candidate.policy == Policy::None)
    return "no recomputation";
  std::string name = policyName(candidate.policy);
  if (!candidate.window)
    name += " (single victims)";
  if (candidate.targetPerMille > 0) {
    const ScheduleKind &kind = candidate.kind;
    name += " after evictions scheduled for " +
            percent(candidate.targetPerMille) + " of the budget";
    if (kind.rebuilt == RebuiltBytes::HeldAtOnce)
      name += " (recomputations counted as held)";
    if (kind.rebuilt == RebuiltBytes::HeldInTurn)
      name += " (recomputations counted in turn)";
    if (kind.chains == RecomputeChains::Long)
      name += " (long recompute chains)";
    if (kind.gaps == ScheduleGaps::FromProducer)
      name += " (values away from their producer)";
    if (kind.siblings == SiblingOutputs::RebuiltTogether)
      name += " (sibling outputs rebuilt together)";
    if (kind.pick == ChoicePick::CheapestCover)
      name += " (cheapest cover of the excess)";
    if (kind.dead == DeadInputs::Retained)
      name += " (dead inputs retained)";
    if (kind.stuck == StuckPeaks::SetAside)
      name += " (stuck peaks set aside)";
  }
  if (candidate.evictClosureValues)
    name += " (closure values evicted again)";
  if (candidate.retainSharedInputs)
    name += " (shared inputs retained)";
  if (!candidate.partition)
    name += " (one-ended placement)";
  if (candidate.budgetPerMille < 1000)
    name += ", planned for " + percent(candidate.budgetPerMille) +
            " of the budget";
  return name;
}

/// The capped round (CandidateSearch::cappedRound) gets the last
/// 1/kCappedRoundShares of the work limit (with no limit, 1/(kCappedRoundShares
/// - 1) of the work done before it, or the default limit's last share if
/// more).
constexpr int kCappedRoundShares = 5;
/// The improvement phase after the rounds may also take 1/this of the work
/// limit from the capped round's share: where the rounds spend their own,
/// the best plan went unimproved (ResNet-152 at r = 0.2: 28.21 -> 24.39 %
/// with it; the zoo's grid better at 8 points, worse at none).
constexpr int kImprovementReserveShares = 10;

/// Per mille of `bytes`, without overflow.
int64_t perMilleOf(int64_t bytes, int64_t perMille) {
  return bytes / 1000 * perMille + bytes % 1000 * perMille / 1000;
}

class CandidateSearch {
public:
  CandidateSearch(const Graph &graph, const PlanOptions &options)
      : graph_(graph), options_(options),
        workLimit_(options.searchWorkLimit > 0
                       ? options.searchWorkLimit
                       : std::numeric_limits<int64_t>::max()) {
    if (options.searchTimeLimitSeconds > 0)
      options_.deadline = options_.deadline.withTimeLimit(
          std::chrono::steady_clock::now(), options.searchTimeLimitSeconds);
    cappedRoundDeadline_ = options_.deadline.withWorkLimit(&work_, workLimit_);
    // (The clock's limit is not split: where it binds, the plan already
    // depends on the machine.)
    options_.deadline = options_.deadline.withWorkLimit(&work_, roundsShare());
  }
  CandidateSearch(const CandidateSearch &) = delete;
  CandidateSearch &operator=(const CandidateSearch &) = delete;

  /// How promising a candidate is: its executed cost when it planned, or
  /// when the best plan's cost stopped it (`costAtLeast`: it would have
  /// planned at a higher cost, or failed; after a plan of that cost);
  /// otherwise worse than any plan, then by how costly its thorough run is
  /// for what it rescues (`failureExpense`), then the later it ran out of
  /// memory the better.
  struct Rank {
    bool planned = false;
    double cost = 0;
    OpId failedOp = kNone;
    int failureExpense = 0;
    bool costAtLeast = false;
    bool operator<(const Rank &other) const {
      if (planned != other.planned)
        return planned;
      if (planned)
        return cost != other.cost ? cost < other.cost
                                  : !costAtLeast && other.costAtLeast;
      if (failureExpense != other.failureExpense)
        return failureExpense < other.failureExpense;
      return failedOp > other.failedOp;
    }
  };
  /// Among candidates that failed at once: 0 for most; 1 for a schedule
  /// with long recompute chains (near the floor they hold more at once than
  /// the replays rescue: DenseNet-121 at 0.15, 82.84 % after 2.1 s, where
  /// the short chains' schedule plans at 50.05 %); 2 for single victims
  /// (one eviction search per victim: their replays cost several times as
  /// much, 10x on the BiLSTM).
  static int failureExpense(const Candidate &candidate) {
    if (!candidate.window)
      return 2;
    return candidate.kind.chains == RecomputeChains::Long ? 1 : 0;
  }
  /// How a candidate is planned. Quick: one simulation in the budget's
  /// arena (a scheduled candidate's unbounded one first), no replays after
  /// a failure. Rescue: the replays that learn from failures, in the
  /// budget's arena only. Thorough: plan() as the options ask (replays,
  /// simulated arenas above and below the budget), its simulations stopped
  /// by the search's bounds (the best plan's cost, the budget's bytes at
  /// once). Unbounded: plan() as `policy=` plans, without those bounds.
  /// Capped: replays in an arena with headroom, the live bytes capped at
  /// the budget (PlanOptions::ArenaSearch::Capped), within the bounds.
  enum class Run { Quick, Rescue, Thorough, Unbounded, Capped };
  /// Plans one candidate, unless a plan was found and it recomputes nothing
  /// or the limit has passed (runsWhateverTheLimit: always runs, to its
  /// end), until the deadline. A rescue, and a thorough run of a candidate
  /// with no plan yet, stop after 1/`shares` of the time left: near the
  /// floor the replays of one candidate that fails anyway took the whole
  /// limit (DenseNet-121 at r = 0.1406: coop retaining shared inputs,
  /// 2.9 s, before dtr, which plans in 0.4 s, had run).
  Rank consider(Candidate &candidate, Run run, int shares = 2);
  /// Whether `candidate` would schedule for a target below the peak where
  /// a schedule counting the same way stopped, short of its own target:
  /// the greedy mostly stops there again (on the BiLSTM at r <= 0.7 every
  /// target from 94 % to 103 % of the budget stops at one peak), so it is
  /// among the least promising candidates.
  bool belowMissedPeak(const Candidate &candidate) const {
    const int64_t target = targetBytes(candidate);
    return target > 0 && !candidate.schedule && !twinsSchedule(candidate) &&
           std::any_of(schedules_.begin(), schedules_.end(),
                       [&](const ScheduleRecord &r) {
                         return r.kind == candidate.kind &&
                                r.peak > r.target && r.peak > target;
                       });
  }
  /// Improves the best plan, with the time the candidates left
  /// (docs/planner.md, "The improvement phase"), and with `reserve` more
  /// units of work taken from the capped round's share.
  void improveBest(int64_t reserve = 0);
  /// The work the rounds before the capped round have, from the start.
  int64_t roundsShare() const {
    return workLimit_ / kCappedRoundShares * (kCappedRoundShares - 1);
  }
  /// The candidates run again capped (Run::Capped), those whose schedule
  /// keeps the live bytes nearest the budget first, with the last share of
  /// the limit that the rest of the search was not given, and the best plan
  /// improved again if one of them made it.
  void cappedRound();
  Status finish(Plan *out);
  /// Records `candidate`'s rank for the capped round, the best of its runs
  /// (`description`: describe(candidate)).
  void remember(const Candidate &candidate, const std::string &description,
                const Rank &rank);
  /// The policies whose thorough run alone (Candidate::alone()) had a
  /// simulation that a bound stopped, in the order they ran: only there
  /// may `policy=` plan for less.
  const std::vector<Policy> &policiesStoppedByBounds() const {
    return policiesStoppedByBounds_;
  }
  bool triedAny() const { return !tried_.empty(); }
  /// The first candidate, and the first that recomputes after the schedule
  /// without evictions, run whatever the limit: that schedule cannot plan
  /// below its packed arena, and a small limit it spent left the search no
  /// attempt that evicts (a generated step with a limit of 200,000 units
  /// failed where its smaller budgets planned). The failure reported is
  /// the later one's, which names the op that ran out.
  bool runsWhateverTheLimit(const Candidate &candidate) const {
    return tried_.empty() ||
           (candidate.policy != Policy::None && !recomputingTried_);
  }
  /// Whether a schedule so far stopped above its target.
  bool scheduleMissed() const {
    return std::any_of(schedules_.begin(), schedules_.end(),
                       [](const ScheduleRecord &r) { return r.peak > r.target; });
  }

private:
  const Graph &graph_;
  /// The search's work so far, on every copy of options_.deadline.
  WorkMeter work_;
  /// The caller's, with the search's deadline.
  PlanOptions options_;
  std::vector<SearchCandidate> tried_;
  /// Every candidate that ran, with its description and the best rank of
  /// its runs.
  struct RankedCandidate {
    Rank rank;
    std::string description;
    Candidate candidate;
  };
  std::vector<RankedCandidate> ranked_;
  /// The whole limit, and its deadline: the candidates before the capped
  /// round get all but its last share (options_.deadline).
  const int64_t workLimit_;
  Deadline cappedRoundDeadline_;
  /// How best_ was planned.
  Run bestRun_ = Run::Quick;
  Plan best_, first_;
  /// What plan() was given for best_: the improvement phase re-simulates it.
  PlanOptions bestOptions_;
  bool found_ = false, timedOut_ = false, recomputingTried_ = false;
  Status firstError_ = Status::ok();
  std::vector<Policy> policiesStoppedByBounds_;
  /// For schedules, once one is needed.
  std::unique_ptr<StepAnalysis> analysis_;
  /// A schedule computed: what it planned for and aimed at, how it
  /// counted, the live-byte peak it reached (and outside the runs it set
  /// aside), and its evictions (null for a repeat).
  struct ScheduleRecord {
    int64_t budget, target, peak, peakElsewhere;
    ScheduleKind kind;
    std::shared_ptr<const EvictionSchedule> evictions;
    /// What the evictions keep past their last use (null: nothing).
    std::shared_ptr<const std::vector<OpId>> retention;
  };
  /// Every schedule so far.
  std::vector<ScheduleRecord> schedules_;

  /// For a twin that evicts closure values again or retains shared inputs,
  /// its original's schedule record, once made.
  const ScheduleRecord *twinsSchedule(const Candidate &candidate) const {
    if (!candidate.evictClosureValues && !candidate.retainSharedInputs)
      return nullptr;
    return scheduleRecord(candidate);
  }
  /// The record of the schedule `candidate` follows (a twin: its
  /// original's), once made; null without one.
  const ScheduleRecord *scheduleRecord(const Candidate &candidate) const {
    if (candidate.targetPerMille == 0)
      return nullptr;
    const int64_t budget =
        perMilleOf(options_.budgetBytes, candidate.budgetPerMille);
    for (const ScheduleRecord &r : schedules_)
      if (r.budget == budget && r.target == targetBytes(candidate) &&
          r.kind == candidate.kind)
        return &r;
    return nullptr;
  }
  /// How far the live bytes of `candidate`'s schedule rise above the
  /// budget (0 where they stay within it; the most there is without a
  /// schedule): the capped arena caps them at the budget and leaves the
  /// policy only placement to solve, which is all it can solve.
  int64_t scheduledExcess(const Candidate &candidate) const {
    const ScheduleRecord *record = scheduleRecord(candidate);
    if (!record)
      return std::numeric_limits<int64_t>::max();
    return std::max<int64_t>(0, record->peak - options_.budgetBytes);
  }
  /// The live bytes `candidate`'s schedule aims at (0: none).
  int64_t targetBytes(const Candidate &candidate) const {
    if (candidate.targetPerMille == 0)
      return 0;
    return perMilleOf(perMilleOf(options_.budgetBytes, candidate.budgetPerMille),
                      candidate.targetPerMille);
  }

  /// Computes `candidate`'s schedule, or marks it redundant.
  void schedule(Candidate &candidate);
  /// The step's analysis for every candidate that recomputes: they differ
  /// in nothing it depends on.
  const StepAnalysis &analysis() {
    if (!analysis_) {
      PlanOptions recomputing = options_;
      if (recomputing.policy == Policy::None)
        recomputing.policy = Policy::Lookahead;
      analysis_ = std::make_unique<StepAnalysis>(analyse(graph_, recomputing));
    }
    return *analysis_;
  }
};

void CandidateSearch::schedule(Candidate &candidate) {
  const StepAnalysis &step = analysis();
  const int64_t budget =
      perMilleOf(options_.budgetBytes, candidate.budgetPerMille);
  const int64_t target = perMilleOf(budget, candidate.targetPerMille);
  // A twin follows the schedule made just before it for its original, and
  // repeats what that repeats.
  if (const ScheduleRecord *original = twinsSchedule(candidate)) {
    candidate.schedule = original->evictions;
    candidate.retention = original->retention;
    candidate.redundant = !original->evictions;
    return;
  }
  // Counting only what is held matters where the margin of every rebuilt
  // value misses the target with chains as long, and counting it in turn
  // where counting it at once misses it too.
  // Whether a schedule counting `rebuilt`, the same choices to make for
  // this target, reached it (or, `missed`, stopped above it).
  auto stopped = [&](RebuiltBytes rebuilt, bool missed) {
    return std::any_of(schedules_.begin(), schedules_.end(),
                       [&](const ScheduleRecord &r) {
                         return r.kind.rebuilt == rebuilt &&
                                r.kind.sameChoices(candidate.kind) &&
                                r.target == target &&
                                (r.peak > target) == missed;
                       });
  };
  // Setting aside a peak where nothing can go changes nothing where the
  // greedy that stops there reached its target.
  auto stoppedAbove = [&]() {
    ScheduleKind stopping = candidate.kind;
    stopping.stuck = StuckPeaks::Stop;
    return std::any_of(schedules_.begin(), schedules_.end(),
                       [&](const ScheduleRecord &r) {
                         return r.kind == stopping && r.budget == budget &&
                                r.target == target && r.peak > target;
                       });
  };
  if (target < step.floorBytes ||
      (candidate.kind.stuck == StuckPeaks::SetAside && !stoppedAbove()) ||
      (candidate.kind.rebuilt == RebuiltBytes::HeldAtOnce &&
       stopped(RebuiltBytes::EveryValue, /*missed=*/false)) ||
      (candidate.kind.rebuilt == RebuiltBytes::HeldInTurn &&
       !stopped(RebuiltBytes::HeldAtOnce, /*missed=*/true)) ||
      // (Keeping dead inputs, it is a kind of its own all the same.)
      (candidate.kind.siblings == SiblingOutputs::RebuiltTogether &&
       candidate.kind.dead == DeadInputs::Recomputed &&
       !hasEvictableSiblings(graph_, step)) ||
      (candidate.kind.dead == DeadInputs::Retained &&
       retainableSharedInputs(graph_, step).empty())) {
    candidate.redundant = true;
    return;
  }
  // The first candidate's schedule runs whatever the time, as its
  // simulation does (consider()); any other stops at half the time left,
  // so that one slow greedy cannot spend what the rest of the search needs
  // (on the BiLSTM at r = 0.70 the held-bytes long-chain schedule with
  // values away from their producer takes 18 s unlimited, most schedules
  // 0.1 s).
  const Deadline deadline = tried_.empty() ? options_.deadline.withoutLimit()
                                           : options_.deadline.share(2);
  ScheduledEvictions scheduled =
      scheduleEvictions(graph_, step, options_.alignment, target,
                        candidate.kind.rebuilt, candidate.kind.chains,
                        candidate.kind.gaps, candidate.kind.siblings,
                        candidate.kind.pick, candidate.kind.dead,
                        candidate.kind.stuck, deadline);
  // No lower a peak than another schedule for this budget of its kind, or
  // the very evictions of another kind's (the kinds often agree: a step
  // whose multi-output ops never go, an excess no single value covers).
  ScheduleRecord record = {budget,
                           target,
                           scheduled.peakLiveBytes,
                           scheduled.peakElsewhereBytes,
                           candidate.kind,
                           nullptr,
                           nullptr};
  auto sameRetention = [&](const ScheduleRecord &r) {
    return r.retention ? *r.retention == scheduled.retainUntil
                       : scheduled.retainUntil.empty();
  };
  const bool repeated =
      std::any_of(schedules_.begin(), schedules_.end(),
                  [&](const ScheduleRecord &r) {
                    return r.budget == record.budget &&
                           ((r.kind.sameChoices(record.kind) &&
                             r.peak == record.peak &&
                             r.peakElsewhere == record.peakElsewhere) ||
                            (r.evictions &&
                             *r.evictions == scheduled.evictAfter &&
                             sameRetention(r)));
                  });
  if (!repeated) {
    candidate.schedule = std::make_shared<const EvictionSchedule>(
        std::move(scheduled.evictAfter));
    record.evictions = candidate.schedule;
    if (!scheduled.retainUntil.empty()) {
      candidate.retention = std::make_shared<const std::vector<OpId>>(
          std::move(scheduled.retainUntil));
      record.retention = candidate.retention;
    }
  }
  schedules_.push_back(std::move(record));
  candidate.redundant = repeated;
}

CandidateSearch::Rank CandidateSearch::consider(Candidate &candidate,
                                                Run run, int shares) {
  if (found_ && best_.stats.recomputeCount == 0)
    return Rank(); // nothing recomputes less
  const bool first = runsWhateverTheLimit(candidate);
  if (!first && options_.deadline.passed()) {
    timedOut_ = true;
    return Rank();
  }
  // A candidate's time includes its schedule's (0.1-0.4 s on the BiLSTM).
  const auto began = std::chrono::steady_clock::now();
  const int64_t workBefore = work_.done();
  if (candidate.targetPerMille > 0 && !candidate.schedule &&
      !candidate.redundant)
    schedule(candidate);
  // Retaining nothing, it is the same candidate as without.
  if (candidate.retainSharedInputs &&
      retainableSharedInputs(graph_, analysis()).empty())
    candidate.redundant = true;
  if (candidate.redundant)
    return Rank();
  PlanOptions options = options_;
  options.budgetBytes =
      perMilleOf(options_.budgetBytes, candidate.budgetPerMille);
  // Below the floor (which the first candidate that ran recorded) nothing
  // plans.
  if (!tried_.empty() && options.budgetBytes < first_.stats.memoryFloorBytes)
    return Rank();
  // The first candidate that recomputes (a quick one), and the schedule
  // without evictions before it, run whatever the time: one simulation, no
  // replays, so that a limit mostly spent before the search (sizing for a
  // ratio, a busy machine) still gets one attempt.
  if (first)
    options.deadline = options_.deadline.withoutLimit();
  else if (run == Run::Rescue || run == Run::Unbounded || run == Run::Capped ||
           (run == Run::Thorough && !candidate.planned))
    options.deadline = options_.deadline.share(shares);
  options.policy = candidate.policy;
  options.slidingWindow = candidate.window;
  options.scheduledEvictions = candidate.schedule;
  options.scheduledRetention = candidate.retention;
  options.evictClosureValues = candidate.evictClosureValues;
  options.retainSharedInputs = candidate.retainSharedInputs;
  // Only there: the other candidates' replays gave the same plans on the
  // zoo but one worse one (Inception V3 at r = 0.25, 26.68 -> 30.52 %).
  options.keepEveryInputOfFailedOp = candidate.retainSharedInputs;
  options.twoEndedPartitioning &= candidate.partition;
  // Branch and bound: a candidate that cannot cost less than the best plan
  // stops as soon as that is certain.
  const bool bounded = run != Run::Unbounded;
  if (found_ && bounded)
    options.costBoundUs = best_.stats.executedCostUs;
  options.boundArenaWalk = bounded;
  // Only the budget's own arena: where the replays rescue a candidate
  // there, it costs a fraction of the arena search (DenseNet-121 at
  // r = 0.1375, lookahead: 0.29 of 1.01 s).
  if (run == Run::Rescue)
    options.simulatedArenas = PlanOptions::ArenaSearch::BudgetOnly;
  if (run == Run::Quick) {
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
  if (run == Run::Capped)
    options.simulatedArenas = PlanOptions::ArenaSearch::Capped;
  const char *runName[] = {", quick", ", rescue", ", thorough", ", unbounded",
                           ", capped"};
  const std::string description = describe(candidate);
  const std::string name =
      description + (candidate.policy == Policy::None ? "" : runName[int(run)]);
  Plan result;
  Status st = options.policy == Policy::None
                  ? plan(graph_, options, &result)
                  : plan(graph_, options, analysis(), &result);
  tried_.push_back(
      {name, bool(st), result.stats.computeOverhead,
       std::chrono::duration<double>(std::chrono::steady_clock::now() - began)
           .count(),
       work_.done() - workBefore, !st && result.stats.costBoundReached});
  timedOut_ |= result.stats.timeLimitReached;
  if (run == Run::Thorough && candidate.alone() && result.stats.boundStopped)
    policiesStoppedByBounds_.push_back(candidate.policy);
  if (first) {
    firstError_ = st;
    first_ = result;
  }
  recomputingTried_ |= candidate.policy != Policy::None;
  Rank rank;
  if (!st && result.stats.costBoundReached) {
    rank = {true, options.costBoundUs, kNone, 0, /*costAtLeast=*/true};
  } else if (!st) {
    rank = {false, 0, result.stats.failedOp, failureExpense(candidate)};
  } else {
    candidate.planned = true;
    rank = {true, result.stats.executedCostUs, kNone, 0};
    if (!found_ || costsLess(result.stats, best_.stats)) {
      best_ = std::move(result);
      best_.budgetBytes = options_.budgetBytes;
      best_.stats.winningCandidate = name;
      bestOptions_ = options;
      bestRun_ = run;
      found_ = true;
    }
  }
  if (candidate.policy != Policy::None && run != Run::Capped)
    remember(candidate, description, rank);
  return rank;
}

void CandidateSearch::remember(const Candidate &candidate,
                               const std::string &description,
                               const Rank &rank) {
  for (RankedCandidate &known : ranked_)
    if (known.description == description) {
      known.rank = std::min(known.rank, rank);
      return;
    }
  ranked_.push_back({rank, description, candidate});
}

void CandidateSearch::cappedRound() {
  // The limit's last fifth, or what is left of the limit. With no limit,
  // no more than a quarter of the work before it (where nothing planned,
  // eight capped replay series took minutes: DenseNet-121 at r = 0.10, over
  // 5 min against 2 min for the rest of the search), but never less than
  // the default limit's fifth: on a small step a quarter of the rest is
  // less than one capped run (a generated step of 27 ops then planned at
  // 51,541 bytes and not at 51,882).
  const int64_t left = workLimit_ - std::min(workLimit_, work_.done());
  const int64_t round =
      options_.searchWorkLimit > 0
          ? std::min(left, workLimit_ / kCappedRoundShares)
          : std::max(work_.done() / (kCappedRoundShares - 1),
                     kDefaultSearchWorkLimit / kCappedRoundShares);
  options_.deadline = cappedRoundDeadline_.withWorkLimit(&work_, round);
  // Those whose schedule keeps the live bytes nearest the budget first,
  // then by rank: a schedule far above it leaves the policy evictions to
  // find that the cap only makes harder (Swin-T at r = 0.25: every
  // candidate whose schedule rose 300 MB or more above the budget failed
  // capped, the first two within 47 MB of it planned; by rank alone the
  // round spent itself on those failures first, 58.42 % against 19.16 %).
  std::stable_sort(ranked_.begin(), ranked_.end(),
                   [&](const RankedCandidate &a, const RankedCandidate &b) {
                     const int64_t x = scheduledExcess(a.candidate),
                                   y = scheduledExcess(b.candidate);
                     if (x != y)
                       return x < y;
                     // Failures (maybe for lack of the contiguous room
                     // the round gives) before bound stops, which had it
                     // and rank as planned at the bound (Swin-T at
                     // r = 0.25: one first took the share the plan at
                     // 19.16 % needed, 22.44 %).
                     if (a.rank.costAtLeast != b.rank.costAtLeast)
                       return b.rank.costAtLeast;
                     return a.rank < b.rank;
                   });
  // Only the search's own limit is a limit reached, not the round's share.
  const bool timedOut = timedOut_;
  // Every candidate in that order, each with an equal share of the work
  // the round has left, until it runs out. The sixteen best-ranked alone
  // left the round's work unspent where the search ended before its limit
  // (U-Net at r = 0.5: 4.59 % against 3.93 % with every candidate), and
  // where the limit cut the round, each had a larger share, spent by the
  // first that failed (Inception V3 at 0.25: 24.81 against 20.41 %).
  const int runs = int(ranked_.size());
  for (int i = 0; i < runs; ++i)
    consider(ranked_[i].candidate, Run::Capped, runs - i);
  if (found_ && bestRun_ == Run::Capped)
    improveBest();
  timedOut_ = timedOut || cappedRoundDeadline_.passed();
}

void CandidateSearch::improveBest(int64_t reserve) {
  const Deadline deadline =
      reserve == 0
          ? options_.deadline
          : cappedRoundDeadline_.withWorkLimit(
                &work_,
                std::max<int64_t>(0, roundsShare() - work_.done()) + reserve);
  if (found_ && best_.stats.recomputeCount > 0 && !deadline.passed()) {
    const PlanImprovement done =
        improvePlan(graph_, analysis(), bestOptions_, options_.budgetBytes,
                    deadline, &best_);
    timedOut_ |= done.timeLimitReached;
    if (done.improvements > 0)
      best_.stats.winningCandidate +=
          ", improved " + std::to_string(done.improvements) +
          (done.improvements == 1 ? " time" : " times");
  }
}

Status CandidateSearch::finish(Plan *out) {
  *out = found_ ? std::move(best_) : std::move(first_);
  out->stats.candidates = std::move(tried_);
  out->stats.timeLimitReached = timedOut_;
  out->stats.clockLimitReached = timedOut_ && options_.deadline.timePassed();
  out->stats.searchWork = work_.done();
  if (found_)
    return Status::ok();
  if (!timedOut_)
    return firstError_;
  // Below the floor no time helps: that error says why, not the limit.
  if (options_.budgetBytes < out->stats.memoryFloorBytes) {
    out->stats.timeLimitReached = out->stats.clockLimitReached = false;
    return firstError_;
  }
  char limit[48];
  // With no work limit only the clock, or a share of it that a rescue or
  // schedule had, can have stopped it.
  if (out->stats.clockLimitReached || options_.searchWorkLimit <= 0)
    std::snprintf(limit, sizeof(limit), "time limit of %g s",
                  options_.searchTimeLimitSeconds);
  else
    std::snprintf(limit, sizeof(limit), "work limit of %lld units",
                  static_cast<long long>(options_.searchWorkLimit));
  return Status::error(
      "no plan found within the " + std::string(limit) + " (" +
      std::to_string(out->stats.candidates.size()) +
      (out->stats.candidates.size() == 1 ? " candidate" : " candidates") +
      " tried; the first: " + firstError_.message() + ")");
}

/// The search for one budget: every candidate, in the order below.
Status searchAtBudget(const Graph &graph, const PlanOptions &options,
                      Plan *out) {
  CandidateSearch search(graph, options);
  // The schedule without evictions, packed offline, first: where it fits,
  // nothing recomputes less. It cannot fit below the live bytes' peak.
  if (options.offlinePacking &&
      options.budgetBytes >= computeMemoryStats(graph).peakLiveBytes) {
    Candidate withoutEvictions{Policy::None, true};
    search.consider(withoutEvictions, CandidateSearch::Run::Thorough);
  }
  // The policies alone first: a quick run of each costs one simulation
  // (milliseconds), where a schedule's greedy near the floor can cost
  // seconds, so whatever coop, dtr or dte plans at once is found before
  // the limit can cut it.
  std::vector<Candidate> candidates;
  for (Policy policy : {Policy::Lookahead, Policy::Coop, Policy::DTR,
                        Policy::DTE})
    candidates.push_back({policy, true});
  const size_t firstSchedule = candidates.size();
  // Schedules aim at the budget first, then below it (headroom for the
  // simulator's contiguity and the packing's leftovers), then above it (the
  // policy makes the last evictions where they fit best).
  // Where a target is out of the greedy's reach with the margin of every
  // rebuilt value (near the floor), again counting what is really held.
  // Short recompute chains, then long ones: neither is better everywhere.
  // A schedule counting what is held assumes that the values a closure
  // rebuilt go again once it has read them, where the simulator keeps
  // them until their next read (swin_t at r = 0.25: a peak of 1.09 GB
  // scheduled, 1.50 GB simulated): each is followed by its twin that
  // evicts them again, whose plan has the schedule's peak (the same
  // point: 58.42 %, where nothing else plans).
  auto addScheduled = [&](const Candidate &candidate) {
    candidates.push_back(candidate);
    if (candidate.kind.rebuilt != RebuiltBytes::EveryValue) {
      candidates.push_back(candidate);
      candidates.back().evictClosureValues = true;
    }
  };
  for (RecomputeChains chains : {RecomputeChains::Short, RecomputeChains::Long})
    for (RebuiltBytes rebuilt :
         {RebuiltBytes::EveryValue, RebuiltBytes::HeldAtOnce})
      for (int perMille : {1000, 970, 940, 1030})
        addScheduled({Policy::Lookahead, true, perMille, {rebuilt, chains}});
  // The long-chain schedules again, values also away from right after
  // their producer: better on the CNNs at r = 0.5 (ResNet-50 7.48 -> 7.14 %),
  // worse on the BiLSTM's gates; after the other schedules, where the time
  // limit cuts them first on the largest steps.
  for (RebuiltBytes rebuilt :
       {RebuiltBytes::EveryValue, RebuiltBytes::HeldAtOnce})
    for (int perMille : {1000, 970, 940, 1030})
      addScheduled(
          {Policy::Lookahead, true, perMille,
           {rebuilt, RecomputeChains::Long, ScheduleGaps::FromProducer}});
  // Those counting every rebuilt value again, a multi-output op's outputs
  // priced together (max-pool's output and indices: one re-run rebuilds
  // both): only where some op has two outputs to drop.
  for (int perMille : {1000, 970, 940, 1030})
    candidates.push_back({Policy::Lookahead, true, perMille,
                          {RebuiltBytes::EveryValue, RecomputeChains::Long,
                           ScheduleGaps::FromProducer,
                           SiblingOutputs::RebuiltTogether}});
  // Those again, keeping an input past its last use where a recomputation
  // reads it instead of rebuilding it: a dense block's concatenations
  // then go for a copy each. Counting what is held too, for the targets
  // the margin misses (near the floor: DenseNet-121 at r = 0.15).
  for (RebuiltBytes rebuilt :
       {RebuiltBytes::EveryValue, RebuiltBytes::HeldAtOnce})
    for (int perMille : {1000, 970, 940, 1030})
      candidates.push_back({Policy::Lookahead, true, perMille,
                            {rebuilt, RecomputeChains::Long,
                             ScheduleGaps::FromProducer,
                             SiblingOutputs::RebuiltTogether,
                             ChoicePick::BestRatio, DeadInputs::Retained}});
  // The long chains counting every rebuilt value again, taking the
  // cheapest value that alone ends an excursion over the target: at light
  // budgets the excess is small and the best ratio often frees far more
  // than it needs.
  for (int perMille : {1000, 970, 940, 1030})
    candidates.push_back({Policy::Lookahead, true, perMille,
                          {RebuiltBytes::EveryValue, RecomputeChains::Long,
                           ScheduleGaps::BetweenReads, SiblingOutputs::Apart,
                           ChoicePick::CheapestCover}});
  // Right after the first schedule, where the step has values that
  // recomputations read after their last use and more than one op read (a
  // recurrent layer's input projection): coop keeping such a value once a
  // recomputation has rebuilt it, instead of every closure rebuilding it
  // and freeing it again (which the replays learn only after failures, so
  // that a budget that plans before them pays for it: the BiLSTM's coop
  // rebuilt its two projections 92 times at r = 0.65, 3 times at 0.60).
  // Where that schedule stopped above its target, none is likely to plan
  // at once: it is then planned thoroughly at once, before the other
  // schedules can spend the limit.
  Candidate retaining{Policy::Coop, true};
  retaining.retainSharedInputs = true;
  candidates.insert(candidates.begin() + firstSchedule + 1, retaining);
  // Then the first schedule's evictions again, keeping such a value once
  // rebuilt: where one closure rebuilds it for several dropped values (an
  // attention block's fused QKV projection, split into the queries and
  // keys the backward reads), each closure re-running the projection
  // costs it again (self-attention at r = 0.88: 33.37 -> 24.12 %).
  Candidate scheduledRetaining = candidates[firstSchedule];
  scheduledRetaining.retainSharedInputs = true;
  candidates.insert(candidates.begin() + firstSchedule + 2, scheduledRetaining);
  // The held-bytes kinds again counting what each recomputation holds in
  // turn, only for the targets those missed (near the floor), where they
  // cost a greedy each: Inception V3 plans at r = 0.21875 (38.73 %), where
  // nothing did; the schedules counted at once stay, since a plan that
  // follows one that missed its target may still fit.
  for (const ScheduleKind &kind :
       {ScheduleKind{RebuiltBytes::HeldInTurn, RecomputeChains::Short},
        ScheduleKind{RebuiltBytes::HeldInTurn, RecomputeChains::Long},
        ScheduleKind{RebuiltBytes::HeldInTurn, RecomputeChains::Long,
                     ScheduleGaps::FromProducer},
        ScheduleKind{RebuiltBytes::HeldInTurn, RecomputeChains::Long,
                     ScheduleGaps::FromProducer,
                     SiblingOutputs::RebuiltTogether, ChoicePick::BestRatio,
                     DeadInputs::Retained}})
    for (int perMille : {1000, 970, 940, 1030})
      addScheduled({Policy::Lookahead, true, perMille, kind});
  // The long chains counting every rebuilt value with values away from
  // their producer again, setting aside the peaks where nothing can go,
  // only where the greedy that stops there missed its target (counting
  // held bytes too, the BiLSTM at r = 0.7 unlimited took 102 -> 151 s for
  // the same plan).
  for (int perMille : {1000, 970, 940, 1030})
    candidates.push_back({Policy::Lookahead, true, perMille,
                          {RebuiltBytes::EveryValue, RecomputeChains::Long,
                           ScheduleGaps::FromProducer, SiblingOutputs::Apart,
                           ChoicePick::BestRatio, DeadInputs::Recomputed,
                           StuckPeaks::SetAside}});
  // Last: a simulation that searches once per victim costs the most.
  candidates.push_back({Policy::Lookahead, false});
  using Run = CandidateSearch::Run;
  const bool arenasDiffer =
      options.offlinePacking &&
      options.simulatedArenas != PlanOptions::ArenaSearch::BudgetOnly;
  const bool thoroughDiffers = options.learnFromFailures || arenasDiffer;
  // A candidate that failed at once gets a rescue first only where the
  // thorough run would search arenas around the budget too.
  const bool rescueDiffers = options.learnFromFailures && arenasDiffer;
  // A quick round (a failure ranks by how far it got), then a thorough
  // round, best first: a failure's rescue there, and its thorough run after
  // the round's others where the rescue planned, after every round where it
  // did not (near the floor a rescue that plans costs a fraction of the
  // arena search, and the arena search of one that fails, several replay
  // series more). Schedules for targets below
  // where one counting the same way stopped short of its own go to a
  // second pair of rounds, after the first's thorough one, so that the
  // time limit cuts them first.
  std::vector<Candidate> deferred;
  // (The search's first candidate runs whatever the time: a quick one.)
  // A schedule's twin retaining shared inputs runs quick, as its original.
  auto thoroughAtOnce = [&](Candidate &candidate) {
    candidate.ranThorough = candidate.retainSharedInputs &&
                            candidate.targetPerMille == 0 && thoroughDiffers &&
                            search.triedAny() && search.scheduleMissed();
    return candidate.ranThorough;
  };
  // A candidate for `perMille` of the budget (its schedule, if any, made
  // again for that budget).
  auto forBudget = [](Candidate candidate, int perMille) {
    candidate.budgetPerMille = perMille;
    candidate.schedule = nullptr;
    candidate.retention = nullptr;
    candidate.redundant = false;
    candidate.planned = false;
    return candidate;
  };
  auto planBelow = [&](const Candidate &candidate, int perMille) {
    Candidate below = forBudget(candidate, perMille);
    return search.consider(below, Run::Thorough);
  };
  using RankedCandidates =
      std::vector<std::pair<CandidateSearch::Rank, Candidate>>;
  auto bestFirst = [](RankedCandidates &list) {
    std::stable_sort(
        list.begin(), list.end(),
        [](const auto &a, const auto &b) { return a.first < b.first; });
  };
  // Candidates the replays in the budget's arena did not rescue: their
  // arena search around the budget comes last of all, where the limit
  // cuts it first (each costs several replay series more; on ResNet-50 at
  // r = 0.2 only lookahead placing from one end plans, and running these
  // first left it no time).
  RankedCandidates unrescued;
  auto rounds = [&](std::vector<Candidate> &round, bool firstPair) {
    RankedCandidates ranked, thoroughPlans;
    // Rescued or not, for their thorough run after the round's others.
    RankedCandidates rescues;
    auto rescue = [&](Candidate &candidate, int shares) {
      const CandidateSearch::Rank rank =
          search.consider(candidate, Run::Rescue, shares);
      rescues.push_back({rank, candidate});
      return rank;
    };
    // A thorough plan better than every quick one came from replays that
    // learn from failures, and those jump with the budget (the BiLSTM's
    // coop retaining shared inputs: 31.8 to 52.7 % between r = 0.57 and
    // 0.75, in no order): the same candidate for a few budgets just below,
    // whose plans fit this one, while they plan for less (one the best
    // plan's cost stopped took 0.5-1 s there for nothing, and the next
    // budget as long).
    // As rescues, each then has its thorough run as the round's other
    // rescues do.
    auto planJustBelow = [&](const Candidate &candidate, bool asRescues) {
      for (int perMille : {960, 920, 880}) {
        Candidate below = forBudget(candidate, perMille);
        const CandidateSearch::Rank rank =
            asRescues ? rescue(below, 2) : planBelow(candidate, perMille);
        if (!rank.planned || rank.costAtLeast)
          break;
      }
    };
    for (Candidate &candidate : round) {
      if (firstPair && search.belowMissedPeak(candidate)) {
        candidate.deferred = true;
        deferred.push_back(candidate);
      } else if (thoroughAtOnce(candidate)) {
        // Its plan competes, but it leads nothing: not a quick plan. A
        // quarter of the time left: the rest of the quick round and every
        // rescue are still to come (near the floor of DenseNet-121 it
        // fails after 2.9 s, where dtr's rescue plans in 0.4 s). Half
        // where nothing planned at once before it: the quick plans that
        // would have to be protected are not there, and the BiLSTM at
        // r = 0.55 needs 0.6-0.9 s of replays, more than a quarter of what
        // sizing its ratio leaves of 3 s.
        const bool nothingPlannedYet =
            std::none_of(ranked.begin(), ranked.end(),
                         [](const auto &r) { return r.first.planned; });
        const int shares = nothingPlannedYet ? 2 : 4;
        const CandidateSearch::Rank rank =
            rescueDiffers ? rescue(candidate, shares)
                          : search.consider(candidate, Run::Thorough, shares);
        // Where nothing planned at once before it, the budgets just below
        // at once, before the schedules of the quick round can spend the
        // limit (the BiLSTM at r = 0.65 and 0.70, where no quick candidate
        // plans: 36.98 and 36.71 % there, 50.80 and 43.90 % for the budget
        // itself), as rescues (thorough, 0.65 s each on Inception V3 at
        // r = 0.3, where the rescues cost 0.06-0.17 s, and its winner,
        // a schedule's rescue, then did not run: 14.67 -> 21.32 %);
        // otherwise after the quick round, where a quick plan may be
        // better.
        if (candidate.planned) {
          if (nothingPlannedYet)
            planJustBelow(candidate, rescueDiffers);
          else
            thoroughPlans.push_back({rank, candidate});
        }
        ranked.push_back({CandidateSearch::Rank(), candidate});
      } else if (candidate.evictClosureValues && !ranked.empty() &&
                 ranked.back().first.planned &&
                 ranked.back().second.kind == candidate.kind &&
                 ranked.back().second.targetPerMille ==
                     candidate.targetPerMille) {
        // Its original planned at once: the twin, which only recomputes
        // more to hold less, is left out.
        continue;
      } else {
        // A twin runs once, quick: its replays and arena search cost
        // seconds for plans that recompute several times over (the e2e
        // LSTM at r = 0.5 with no limit: 356-3339 %, the search
        // 28 s -> 86 s with them).
        candidate.ranThorough |= candidate.evictClosureValues;
        ranked.push_back({search.consider(candidate, Run::Quick), candidate});
      }
    }
    bestFirst(ranked);
    for (const auto &[rank, candidate] : thoroughPlans)
      if (ranked.empty() || rank < ranked.front().first)
        planJustBelow(candidate, /*asRescues=*/false);
    // Each rescue gets an equal share of the time left among those still
    // to run (what one leaves unused goes to the next): the replays that
    // rescue a candidate near the floor take 0.05-0.4 s on DenseNet-121,
    // those that fail up to 14 s (dte at r = 0.1375), and which will
    // plan is not known before.
    int rescuesLeft = 0;
    for (const auto &[rank, candidate] : ranked)
      rescuesLeft += thoroughDiffers && !candidate.ranThorough && !rank.planned;
    // Right after the leader, before the limit can cut them, and only
    // when it planned at once (where nothing did, a smaller budget is a
    // waste of the time left): the two best candidates planned for 3/4 and
    // 7/8 of this budget, whose plans fit it too, so that it is not worse
    // than what they find there. Only those that planned: one the cost
    // bound stopped ranks next to the plan that set the bound, but would
    // have cost more or failed (the e2e LSTM at r = 0.375: two such took
    // 38 M units below the budget, and the rescues that find 113.86 %
    // were left none, 561.84 %).
    auto plannedAtOnce = [&](size_t at) {
      return at < ranked.size() && ranked[at].first.planned &&
             !ranked[at].first.costAtLeast;
    };
    for (size_t i = 0; i < ranked.size(); ++i) {
      Candidate &candidate = ranked[i].second;
      if (thoroughDiffers && !candidate.ranThorough) {
        if (ranked[i].first.planned)
          search.consider(candidate, Run::Thorough);
        else if (rescueDiffers)
          rescue(candidate, rescuesLeft--);
        else
          search.consider(candidate, Run::Thorough, rescuesLeft--);
      }
      if (!firstPair || i > 0 || !plannedAtOnce(0))
        continue;
      for (int perMille : {750, 875})
        for (size_t leader = 0; leader < 2 && plannedAtOnce(leader); ++leader)
          planBelow(ranked[leader].second, perMille);
    }
    bestFirst(rescues);
    for (auto &[rank, candidate] : rescues) {
      if (rank.planned)
        search.consider(candidate, Run::Thorough);
      else
        unrescued.push_back({rank, candidate});
    }
  };
  rounds(candidates, /*firstPair=*/true);
  rounds(deferred, /*firstPair=*/false);
  // Every candidate again with expensive and cheap values both at the low
  // end of free memory, last, where the limit cuts it first: it keeps
  // contiguous room where two ends split it (U-Net at r = 0.5: 7.39 ->
  // 5.52 %, the same on the other zoo graphs at 0.5), and is worse as
  // often (ResNet-50's coop at 0.5: 7.48 -> 7.75 %). Schedules are reused.
  if (options.twoEndedPartitioning) {
    std::vector<Candidate> oneEnded;
    for (const std::vector<Candidate> *list : {&candidates, &deferred})
      for (const Candidate &candidate : *list)
        if ((list == &deferred || !candidate.deferred) &&
            !candidate.evictClosureValues) {
          oneEnded.push_back(candidate);
          oneEnded.back().partition = false;
          oneEnded.back().planned = false;
        }
    rounds(oneEnded, /*firstPair=*/false);
  }
  bestFirst(unrescued);
  int unrescuedLeft = int(unrescued.size());
  for (auto &[rank, candidate] : unrescued)
    search.consider(candidate, Run::Thorough, unrescuedLeft--);
  search.improveBest(options.searchWorkLimit > 0
                         ? options.searchWorkLimit / kImprovementReserveShares
                         : 0);
  // Last, each policy whose run on its own a bound of the search stopped
  // somewhere, planned as `policy=` plans it: the bounds stop a replay or
  // an arena that cannot win as it stands, but a replay after it could
  // have learned a cheaper plan (generated steps, with no limit: lookahead
  // 33.71 % on its own, 35.81 % in the search; coop 59.22 %, the search
  // 65.58 %). With no limit the search is then never worse than a policy.
  // After the improvement phase, whose share of the limit they would take
  // (DenseNet-121 at r = 0.35: 13.16 -> 13.21 %).
  const std::vector<Policy> stopped = search.policiesStoppedByBounds();
  int stoppedLeft = int(stopped.size());
  for (Policy policy : stopped) {
    Candidate alone{policy, true};
    search.consider(alone, Run::Unbounded, stoppedLeft--);
  }
  search.cappedRound();
  return search.finish(out);
}

} // namespace

Status searchPlan(const Graph &graph, const PlanOptions &options, Plan *out) {
  if (Status st = checkAlignment(options); !st)
    return st;
  // One clock for the budget's search and the budgets below it.
  PlanOptions timed = options;
  if (options.searchTimeLimitSeconds > 0)
    timed.deadline = options.deadline.withTimeLimit(
        std::chrono::steady_clock::now(), options.searchTimeLimitSeconds);
  const Status failure = searchAtBudget(graph, timed, out);
  if (failure)
    return failure;
  // Nothing planned: near the floor, whether a budget plans jumps with it
  // (ResNet-50 plans at r = 0.19375 and 0.203125 but not at 0.2 nor
  // 0.20625, with no limit either), and a plan for a smaller budget fits
  // this one. So the whole search again for 98.5 % of the budget, within
  // half the work limit (a failing budget then costs 1.5 times the limit).
  // It plans at r = 0.2 and 0.20625 there, and it was the rung that planned
  // wherever 97 % was tried after it too (zoo bisections, generated steps).
  // The budget's own failure is the one reported: it names the op and the
  // limit.
  constexpr int kBelowPerMille = 985;
  PlanOptions below = timed;
  below.budgetBytes = perMilleOf(options.budgetBytes, kBelowPerMille);
  if (below.budgetBytes < out->stats.memoryFloorBytes ||
      timed.deadline.timePassed())
    return failure;
  // (A limit stays a limit: 0 would be none.)
  if (options.searchWorkLimit > 0)
    below.searchWorkLimit = std::max<int64_t>(options.searchWorkLimit / 2, 1);
  Plan planned;
  const Status st = searchAtBudget(graph, below, &planned);
  const std::string forBelow =
      ", for " + percent(kBelowPerMille) + " of the budget";
  for (SearchCandidate &candidate : planned.stats.candidates) {
    candidate.name += forBelow;
    out->stats.candidates.push_back(std::move(candidate));
  }
  out->stats.searchWork += planned.stats.searchWork;
  if (!st)
    return failure;
  planned.budgetBytes = options.budgetBytes;
  planned.stats.winningCandidate += forBelow;
  planned.stats.candidates = std::move(out->stats.candidates);
  planned.stats.searchWork = out->stats.searchWork;
  *out = std::move(planned);
  return st;
}

} // namespace coop::planner
