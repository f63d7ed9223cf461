//===- Plan.h - Rematerialization plans for one arena -----------*- C++ -*-===//
//
// simulate() replays a training step through a simulated arena and records
// every placement, eviction, recomputation and free as a fixed instruction
// sequence: the online policy's plan. plan() uses the future on top of it:
// it repacks the fixed schedule's buffers offline (Packer.h) and searches
// the simulated arena's size for the plan that, once repacked, fits the
// budget with the least recomputation. verifyPlan() checks any plan
// independently. See docs/planner.md for the algorithms.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_PLANNER_PLAN_H
#define COOP_PLANNER_PLAN_H

#include "coop/Planner/Deadline.h"
#include "coop/Planner/Graph.h"
#include "coop/Planner/Packer.h"
#include "coop/Planner/Status.h"

#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace coop::planner {

/// How victims are chosen when best fit finds no free piece.
enum class Policy {
  None, // no rematerialization: fail when memory runs out
  Coop, // sliding window over address-ordered pieces, score C/s
  DTR,  // repeatedly evict the lowest C/(s*m) anywhere
  DTE,  // repeatedly evict the lowest C/(s*(m + adjacent free bytes))
  /// Coop's window and placement, scored with the future instead of the
  /// past: the recompute chain the next read will trigger, over the
  /// distance to that read (Belady's furthest-next-use, weighted by cost).
  Lookahead,
};

const char *policyName(Policy policy);
/// The policy policyName() calls `name`; false when there is none.
bool policyFromName(const std::string &name, Policy *policy);

/// Evictions decided ahead of time: after op k has run, the values listed
/// at index k are evicted (each comes back, recomputed, at its next read).
using EvictionSchedule = std::vector<std::vector<TensorId>>;

/// What simulate()'s replays learned from failures (docs/planner.md,
/// "Replays" and what follows), per value: the op before which
/// neither the policy nor the schedule evicts it, whether it is packed at
/// the low end, the op through which it stays resident past its last use;
/// and whether closures run recursively.
struct LearnedLessons {
  std::vector<OpId> keepUntil;
  std::vector<char> packLow;
  std::vector<OpId> retainUntil;
  bool recursiveClosures = false;
};

struct PlanOptions {
  int64_t budgetBytes = 0;
  int64_t alignment = 512;
  Policy policy = Policy::Coop;

  /// Expensive tensors take the low edge of their free piece, cheap ones the
  /// high edge. Off: everything takes the low edge.
  bool twoEndedPartitioning = true;
  /// An output is expensive when its producer's kernel name contains one of
  /// these, ...
  std::vector<std::string> expensiveKernelSubstrings = {
      "convolution", "conv2d", "mm", "matmul", "linear", "add_n"};
  /// ... or, when positive, when cost / bytes (us per byte) reaches this.
  double expensiveCostDensity = 0.0;

  /// Allocations of at most `smallTensorBytes` go first to a region of
  /// `smallRegionBytes` at the top of the arena that the window never scans.
  /// Zero region bytes switches the region off.
  int64_t smallRegionBytes = 0;
  int64_t smallTensorBytes = 10 * 1024;

  /// Recomputable in-place (Coop). Off: every in-place op copies on write.
  bool recomputableInPlace = true;
  /// Coop's contiguous window. Off: evict the single lowest-h(t) tensor and
  /// retry, like DTR's loop but with Coop's score.
  bool slidingWindow = true;
  /// Eviction searches skip the pieces that bounds on their scores show
  /// cannot be chosen, with the same victims (docs/planner.md, "Eviction
  /// search"). Off: every piece is scored, the reference the tests hold
  /// the bounded search to.
  bool boundedEvictionSearch = true;
  /// Evictions the simulator makes whatever the arena, on top of the
  /// policy's own (searchPlan() fills it). Null: none.
  std::shared_ptr<const EvictionSchedule> scheduledEvictions;
  /// Per value: the op through which the simulator keeps it resident past
  /// its last use, for the scheduled evictions' recomputations to read
  /// (kNone: freed at its last use). Null: none.
  std::shared_ptr<const std::vector<OpId>> scheduledRetention;
  /// simulate()'s replays start from these lessons rather than from none
  /// (a plan's own, Plan::lessons: without replays, the same simulation
  /// gives that plan again). Null: none.
  std::shared_ptr<const LearnedLessons> lessons;

  /// simulate() replays a failed simulation with what it learned (four
  /// series of up to 64 replays, see docs/planner.md). Off: the first
  /// failure is final (cheap, for a search that has other candidates).
  bool learnFromFailures = true;
  /// When an op fails with some of its inputs evicted before it, the
  /// replays keep every one of its transient inputs resident until it, not
  /// only those evicted this time: denied those, a policy evicts the op's
  /// other inputs instead, so the replays learned them a few at a time and
  /// ran out of replays. Off for every policy= (searchPlan() sets it).
  bool keepEveryInputOfFailedOp = false;

  /// A value that more than one op reads and that a recomputation may read
  /// after its last use (a recurrent layer's input projection, which every
  /// step's gates are a view of) is freed at its last use as usual, but
  /// once a recomputation has rebuilt it, it stays resident, evictable,
  /// until the last op that may recompute from it: from the start, what the
  /// third replay series learns from failures. Off: each closure that needs
  /// it rebuilds it and frees it again.
  bool retainSharedInputs = false;

  /// plan() repacks the schedule offline. Off: plan() is simulate(), the
  /// online policy's plan with the online allocator's addresses.
  bool offlinePacking = true;
  /// Which arenas plan() simulates in besides the budget's own: larger
  /// ones evict less and may still fit the budget once repacked.
  enum class ArenaSearch {
    BudgetOnly,
    /// Also an unbounded arena: the schedule without evictions, or only
    /// the scheduled ones.
    Unbounded,
    /// Also arenas growing from the budget, and a few below it.
    Full,
    /// Only an arena with headroom (a quarter of the budget), its live
    /// bytes capped at the budget (allocatedBytesCap), repacked into the
    /// budget: the policy evicts for bytes and places with room to spare.
    Capped,
  };
  ArenaSearch simulatedArenas = ArenaSearch::Full;
  /// After an op, the values its closure rebuilt for it, other than its
  /// own operands, are evicted again (they come back at their next read),
  /// as evictions scheduled counting RebuiltBytes::HeldAtOnce assume;
  /// off: they stay resident until the policy evicts them. On, the closure
  /// also runs in the step's order, and a rebuilt output that nothing
  /// there reads any more goes as soon as its producer has run, as
  /// RebuiltBytes::HeldInTurn counts.
  bool evictClosureValues = false;
  /// The packer's exact-search nodes per repacked plan (PackOptions).
  int64_t packingNodeLimit = 2000;
  /// Repack by the simulator's own order only (PackOptions): quick.
  bool packInitialOrderOnly = false;
  /// searchPlan(): work (Deadline.h) after which no new candidate, replay
  /// or simulated arena starts, whether a plan was found or not (0: no
  /// limit); the first candidate that recomputes (and the schedule without
  /// evictions before it) runs to its end. The default is about 3.75 s on the
  /// 2-core machine of docs/test-suite.md.
  int64_t searchWorkLimit = kDefaultSearchWorkLimit;
  /// searchPlan(): the same in seconds of the clock (0: none). A binding
  /// time limit makes the result depend on the machine's speed and load.
  double searchTimeLimitSeconds = 0;
  /// simulate() stops (a failure) at the first op after this, and plan()
  /// tries no new simulated arena; searchPlan() brings it forward by its
  /// limits and counts its work on it. Default: never.
  Deadline deadline;
  /// simulate() stops (a failure) once its plan cannot cost less than
  /// this: the cost executed so far, plus every later op's once, plus one
  /// re-run of the producer of each evicted value a later op reads and of
  /// the producers of the gone inputs such a re-run needs, exceeds it.
  /// searchPlan() sets it to its best plan's cost, so that a candidate that
  /// cannot win stops early (branch and bound). Default: none.
  double costBoundUs = std::numeric_limits<double>::infinity();
  /// simulate() fails where more bytes are allocated at once than this: it
  /// stops at that op, unless a replay may follow (learnFromFailures) and
  /// no cost bound is set, where it goes on so that a failure after it is
  /// learned from. Default: none.
  int64_t allocatedBytesBound = std::numeric_limits<int64_t>::max();
  /// simulate() keeps at most this many bytes allocated at once: before a
  /// request that would pass it, the policy evicts its lowest-scored
  /// values one at a time until the request fits under it. With an arena
  /// (budgetBytes) larger than the cap, the headroom serves placement
  /// only, and the plan's live bytes still fit a packing of the cap.
  /// Where nothing is left to evict, the request is allocated past it.
  /// Default: none.
  int64_t allocatedBytesCap = std::numeric_limits<int64_t>::max();
  /// plan() bounds its walk over simulated arenas: each arena by the cost
  /// of the best arena's plan so far, and one above the budget by the
  /// budget's bytes (its plan could fit in no packing). searchPlan() sets
  /// it for its candidates; off, a single policy walks every arena to its
  /// end, as the published policies' reproductions always have.
  bool boundArenaWalk = false;
};

/// The largest buffer alignment (1 GiB): a value of at most
/// coop::kMaxPlannedBytes rounded up to it still fits in int64_t.
constexpr int64_t kMaxAlignment = int64_t(1) << 30;

/// Bytes the arena gives a value of `bytes`: rounded up to the alignment,
/// and at least one unit so that every value has its own address.
int64_t allocationSize(int64_t bytes, int64_t alignment);

/// Bytes the arena gives `op`'s workspace while it runs: none without one.
int64_t workspaceAllocation(const Op &op, int64_t alignment);

/// The arena ArenaSearch::Capped simulates in for `budgetBytes`: a
/// quarter larger, rounded down to the alignment.
int64_t cappedArenaBytes(int64_t budgetBytes, int64_t alignment);

/// Two-ended placement's class: are `bytes` produced by `op` expensive to
/// recompute (placed at the low end) rather than cheap (high end)?
bool isExpensiveKernel(const Op &op, int64_t bytes, const PlanOptions &options);

struct Allocation {
  TensorId tensor = kNone;
  int64_t offset = 0;
  int64_t size = 0;
  /// Takes over the buffer of the operand this output overwrites.
  bool inPlace = false;
};

enum class InstructionKind { Run, Recompute, Evict, Free };

struct Instruction {
  InstructionKind kind = InstructionKind::Run;
  /// Run, Recompute: the op.
  OpId op = kNone;
  /// Evict, Free: the value whose buffer is dropped.
  TensorId tensor = kNone;
  /// Run, Recompute: where each output that needed a buffer lives. Outputs
  /// already resident (other results of a recomputed op) are rewritten with
  /// identical values where they are; views have none.
  std::vector<Allocation> outputs;
  /// Run, Recompute: scratch space held only while the op runs.
  int64_t workspaceOffset = -1;
  int64_t workspaceBytes = 0;
  /// Recompute of an Op::discardableInPlace op: scratch placements of the
  /// in-place outputs it recomputes and throws away (`inPlace` false). Held
  /// only while the instruction runs, like the workspace; they change no
  /// value's state. Empty on every other instruction.
  std::vector<Allocation> discarded;
};

/// One plan searchPlan() tried.
struct SearchCandidate {
  std::string name;
  bool planned = false;
  double computeOverhead = 0;
  double seconds = 0;
  /// Its work (Deadline.h's units), schedule included.
  int64_t work = 0;
  /// No plan: the best plan's cost stopped it (it did not fail).
  bool costBoundReached = false;
};

struct PlanStats {
  double baselineCostUs = 0;  // every op once
  double executedCostUs = 0;  // recomputations included
  double computeOverhead = 0; // executed / baseline - 1
  /// Most bytes allocated at once (alignment included).
  int64_t peakAllocatedBytes = 0;
  /// Highest address ever in use (with two-ended placement this is close
  /// to B as soon as a cheap tensor exists).
  int64_t addressHighWater = 0;
  /// Mean over eviction-driven allocations of free bytes / B right after.
  double fragmentationRate = 0;
  int64_t evictionEvents = 0; // allocations that had to evict
  double evictionSearchSeconds = 0;
  /// Pieces the victim searches examined (one pass per window search over
  /// the pieces above the persistent state, one per victim for the
  /// single-tensor loops) ...
  int64_t piecesScanned = 0;
  /// ... and those of them whose score was computed (the others were
  /// skipped by bounds, see PlanOptions::boundedEvictionSearch).
  int64_t piecesScored = 0;
  /// Blocks of pieces the window searches passed on a bound on their
  /// windows taken at an earlier search, without reading their pieces
  /// (see "Eviction search" in docs/planner.md).
  int64_t blocksPassedUnread = 0;
  int64_t evictionCount = 0;  // Evict instructions
  int64_t recomputeCount = 0; // Recompute instructions
  int64_t memoryFloorBytes = 0;
  OpId memoryFloorOp = kNone;
  int64_t persistentBytes = 0;
  /// Out of memory only: the request that found no room, and the bytes
  /// then free or evictable. Fewer than requested: the arena lacked bytes,
  /// not a contiguous run, and no packing of any schedule could help.
  int64_t unplacedRequestBytes = 0;
  int64_t reclaimableBytesAtFailure = 0;
  /// Out of memory only: the op that found no room.
  OpId failedOp = kNone;

  /// plan() only. The arena the winning plan was simulated in (>= the
  /// budget when the packing made up the difference).
  int64_t simulatedBudgetBytes = 0;
  /// The cap on the live bytes that arena had (PlanOptions::
  /// allocatedBytesCap; the maximum: none).
  int64_t simulatedBytesCap = std::numeric_limits<int64_t>::max();
  /// Simulated arenas tried, and the seconds spent repacking plans.
  int64_t simulatedBudgetsTried = 0;
  double packingSeconds = 0;
  /// The winning plan's packing: max-live lower bound, the method that
  /// gave its addresses, and whether no packing of its schedule is lower.
  int64_t packingLowerBoundBytes = 0;
  std::string packingMethod;
  bool packingProvedOptimal = false;

  /// Whether options.deadline (the search's work or time limit) stopped the
  /// planner early: a replay, a simulated arena or a candidate it did not
  /// try.
  bool timeLimitReached = false;
  /// searchPlan() only, with timeLimitReached: the clock's limit had passed
  /// when it finished (otherwise its work limit, or a share of it, stopped
  /// it).
  bool clockLimitReached = false;
  /// Whether options.costBoundUs stopped a simulation: its plan would have
  /// cost more than the bound, or failed.
  bool costBoundReached = false;
  /// Whether options.allocatedBytesBound stopped a simulation.
  bool allocatedBytesBoundReached = false;
  /// Whether a bound stopped a simulation before its end or its failure
  /// (the cost bound, or the allocated-bytes bound at the op): simulate(),
  /// any of its replays; plan(), any of its arenas'. Where none did, the
  /// bounds changed nothing: the plan, or the failure, is the unbounded
  /// one's.
  bool boundStopped = false;

  /// searchPlan() only: its work (Deadline.h's units), every candidate
  /// tried, in order, and the winner's name.
  int64_t searchWork = 0;
  std::vector<SearchCandidate> candidates;
  std::string winningCandidate;
};

struct Plan {
  Policy policy = Policy::Coop;
  /// What the replays that found it learned (null: it planned at once).
  std::shared_ptr<const LearnedLessons> lessons;
  /// PlanOptions::twoEndedPartitioning as planned (a search's winner may
  /// place every value from the low end where the options allow both).
  bool twoEndedPartitioning = true;
  int64_t budgetBytes = 0;
  /// Step arguments, placed before the first instruction.
  std::vector<Allocation> arguments;
  std::vector<Instruction> instructions;
  PlanStats stats;
};

/// The lessons simulate()'s first replay starts from: options.lessons, or
/// none learned yet (the values options.scheduledRetention keeps retained).
LearnedLessons firstLessons(const Graph &graph, const PlanOptions &options);

/// The online policy's plan: replays a finalized graph through a simulated
/// arena of exactly options.budgetBytes, addresses from its best fit. Fails
/// when the budget is below the memory floor or the policy runs out of
/// memory; the message names the floor or the op.
Status simulate(const Graph &graph, const PlanOptions &options, Plan *out);

/// Plans a finalized graph into options.budgetBytes: simulate() in that
/// arena and, as options.simulatedArenas asks, in larger ones (policy
/// `none`: once, in an unbounded one, since its schedule does not depend
/// on the arena), each plan's buffers repacked offline; the plan that fits
/// the budget with the least compute overhead wins (ties: the smaller
/// arena). Fails like simulate() when none fits.
Status plan(const Graph &graph, const PlanOptions &options, Plan *out);

/// Of two plans for the same budget, does `a` cost less to run: less
/// executed time, then fewer recomputations?
bool runsCheaper(const PlanStats &a, const PlanStats &b);

/// Of two plans for the same budget, does `a` cost less: runsCheaper(),
/// then a lower high-water mark?
bool costsLess(const PlanStats &a, const PlanStats &b);

/// The default planner: several candidates, and the fitting plan with the least
/// compute overhead (ties: fewer recomputations, then the lower high-water
/// mark). Candidates: lookahead (window, and single victims), coop, dtr, dte,
/// and lookahead following evictions scheduled ahead of time for the live bytes
/// to stay below targets around the budget. A quick round simulates each in the
/// budget's arena without replays; a thorough round, best first, runs plan()
/// with the given options; when the quick round's leader planned, the two best
/// also plan for 3/4 and 7/8 of the budget (a plan for a smaller budget fits
/// this one). Last, each policy whose own thorough run the search's bounds
/// stopped somewhere plans again as plan() plans it alone: with no limit, never
/// worse than coop, dtr, dte or lookahead. options.policy is ignored.
/// options.searchWorkLimit bounds the whole search, and so does
/// options.searchTimeLimitSeconds where given; deterministic unless the time
/// limit stops it (the stats say which did). Where no candidate fits, the
/// whole search runs again for 98.5 % of the budget (above the floor),
/// within half the work limit, and its plan is the plan. Fails like the
/// budget's first candidate that recomputes when none fits, or, when a limit
/// stopped a search that found no plan above the floor, says so.
Status searchPlan(const Graph &graph, const PlanOptions &options, Plan *out);

/// Gives `plan` new offsets: its buffers' lifetimes packed by packBuffers(),
/// starting from its own addresses, so the high-water mark never rises.
/// Only offsets change. Its work is counted on `deadline`.
Status repackPlan(const Graph &graph, const PackOptions &options, Plan *plan,
                  PackResult *packing, const Deadline &deadline = {});

/// The smallest budget (a multiple of the alignment) for which plan() with
/// these options finds a plan, and that plan in `planned` (when given).
/// For `none` with offline packing, the packed peak of its schedule;
/// otherwise found by bisection between the memory floor and the sum of
/// all allocations, where a plan found at one budget also answers every
/// budget its high-water mark fits: plan() is not monotone in the budget,
/// so plan() at the returned budget itself may fail where `planned` fits.
Status minimumBudget(const Graph &graph, PlanOptions options,
                     int64_t *budgetBytes, Plan *planned = nullptr);

/// The memory floor of `graph` and the arena `none` needs (its minimum
/// budget), under `options` but for the policy: the range of budgets a
/// sweep over the step spans.
struct StepBounds {
  int64_t floor = 0;
  int64_t none = 0;
};
Status stepBounds(const Graph &graph, PlanOptions options, StepBounds *out);

/// A budget `fraction` of the way from the floor to `none`'s arena.
inline int64_t budgetBetween(const StepBounds &bounds, double fraction) {
  return bounds.floor + int64_t(fraction * double(bounds.none - bounds.floor));
}

/// Replays `plan` on its own, without the planner's code, and proves it
/// safe: allocations inside [0, budget) and disjoint, inputs resident with
/// the right version, nothing freed twice or used after it was dropped, and
/// the final persistent state and step outputs of the unconstrained step
/// resident at the end. Messages name the instruction index and the op.
/// Where verifyPlan() stopped: argument placement #index, instruction
/// #index, or the end of the plan (index == instructions.size()).
struct PlanPosition {
  bool inArguments = false;
  size_t index = 0;
};

Status verifyPlan(const Graph &graph, const Plan &plan, int64_t budgetBytes,
                  PlanPosition *failedAt = nullptr);

} // namespace coop::planner

#endif // COOP_PLANNER_PLAN_H
