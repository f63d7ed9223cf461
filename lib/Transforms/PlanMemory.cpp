//===- PlanMemory.cpp - Rewrite a step into an explicit memory schedule ---===//
//
// Runs the planner core on a coop.step function and rewrites the function
// into the plan's schedule: offsets on every buffer, evictions and frees as
// ops, recomputations as clones of their original ops.
//
//===----------------------------------------------------------------------===//

#include "coop/Analysis/StepGraph.h"
#include "coop/Dialect/Coop/IR/CoopOps.h"
#include "coop/Planner/ByteSize.h"
#include "coop/Planner/MemoryPicture.h"
#include "coop/Planner/Plan.h"
#include "coop/Support/CheckedArithmetic.h"
#include "coop/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdio>

namespace mlir::coop {
#define GEN_PASS_DEF_COOPPLANMEMORY
#include "coop/Transforms/Passes.h.inc"
} // namespace mlir::coop

using namespace mlir;
using namespace mlir::coop;
using planner::kNone;
using planner::OpId;
using planner::TensorId;

namespace {

/// Where a diagnostic about a whole step goes: the step's name, not the
/// function's location, whose source line a diagnostic would show, and
/// which is the signature: as long as the argument list (45 KB for an
/// imported zoo model).
Location stepLocation(func::FuncOp func) {
  return NameLoc::get(
      StringAttr::get(func.getContext(), "@" + func.getSymName()));
}

/// Upper ends of the accepted ranges of time-limit and work-limit (a million
/// seconds, a million seconds' work, are "no limit" in practice) and
/// pack-nodes.
constexpr double kMaxTimeLimit = 1e6;
constexpr int64_t kMaxWorkLimit = 1000000000000000;
constexpr int64_t kMaxPackNodes = 1000000000;

std::string numberText(int64_t value) { return std::to_string(value); }
std::string numberText(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

/// Emits the planned schedule in front of the original ops, which are then
/// erased. Tracks which SSA value holds each tensor's content right now.
class ScheduleBuilder {
public:
  ScheduleBuilder(func::FuncOp func, const StepGraph &step,
                  const planner::Plan &plan)
      : func(func), step(step), graph(step.getGraph()), plan(plan),
        builder(func.front().getTerminator()), current(graph.tensors.size()),
        offsetOf(graph.tensors.size(), -1),
        newestVersion(graph.tensors.size(), kNone),
        viewValue(graph.tensors.size()), viewSource(graph.tensors.size()),
        viewCreated(graph.ops.size(), false) {}

  LogicalResult build();

private:
  Value materialize(TensorId tensor);
  LogicalResult emitRun(const planner::Instruction &ins);
  LogicalResult emitRelease(const planner::Instruction &ins);

  func::FuncOp func;
  const StepGraph &step;
  const planner::Graph &graph;
  const planner::Plan &plan;
  OpBuilder builder;
  std::vector<Value> current; // resident content tensors
  std::vector<int64_t> offsetOf;
  /// The newest version written into each storage (indexed by its root).
  std::vector<TensorId> newestVersion;
  std::vector<Value> viewValue;  // last view created for a view tensor
  std::vector<Value> viewSource; // the source value it was created over
  std::vector<bool> viewCreated; // per view op: has it run once?
  std::string internalError;
};

Value ScheduleBuilder::materialize(TensorId tensor) {
  const planner::Tensor &info = graph.tensors[tensor];
  if (info.viewOf == kNone) {
    if (!current[tensor] && internalError.empty())
      internalError = "plan reads '" + info.name + "' while it is not resident";
    return current[tensor];
  }
  // A view is valid only over the source value it was made from: after the
  // source is recomputed, the view is re-created over the new value.
  Value source = materialize(info.viewOf);
  if (!source)
    return nullptr;
  if (viewValue[tensor] && viewSource[tensor] == source)
    return viewValue[tensor];
  const OpId viewOp = info.producer;
  Operation *original = step.getOperation(viewOp);
  IRMapping mapping;
  mapping.map(original->getOperand(0), source);
  auto view = cast<ViewOp>(builder.clone(*original, mapping));
  if (viewCreated[viewOp])
    view.setRecomputeOf(viewOp);
  viewCreated[viewOp] = true;
  for (auto [result, sibling] :
       llvm::zip(view.getResults(), graph.ops[viewOp].outputs)) {
    viewValue[sibling] = result;
    viewSource[sibling] = source;
  }
  return viewValue[tensor];
}

LogicalResult ScheduleBuilder::emitRun(const planner::Instruction &ins) {
  const planner::Op &op = graph.ops[ins.op];
  if (op.isView) {
    materialize(op.outputs.front());
    return success(internalError.empty());
  }
  // A recomputation writes discardable side effects to scratch. What they
  // overwrite is not really read, and may be long gone: the kernel gets the
  // storage's current version to copy into the scratch.
  llvm::DenseMap<TensorId, int64_t> scratch;
  llvm::DenseSet<TensorId> sideEffectInputs;
  for (const planner::Allocation &allocation : ins.discarded) {
    scratch[allocation.tensor] = allocation.offset;
    sideEffectInputs.insert(graph.tensors[allocation.tensor].previousVersion);
  }
  Operation *original = step.getOperation(ins.op);
  IRMapping mapping;
  for (auto [operand, tensor] : llvm::zip(original->getOperands(), op.inputs))
    mapping.map(operand,
                materialize(sideEffectInputs.contains(tensor)
                                ? newestVersion[graph.storageOf(tensor)]
                                : tensor));
  if (!internalError.empty())
    return failure();

  auto compute = cast<ComputeOp>(builder.clone(*original, mapping));
  for (const planner::Allocation &allocation : ins.outputs) {
    offsetOf[allocation.tensor] = allocation.offset;
    // The overwritten version no longer exists anywhere.
    if (allocation.inPlace)
      current[graph.contentOf(
          graph.tensors[allocation.tensor].previousVersion)] = nullptr;
  }
  SmallVector<int64_t> offsets;
  for (auto [result, tensor] : llvm::zip(compute.getResults(), op.outputs)) {
    if (auto it = scratch.find(tensor); it != scratch.end()) {
      offsets.push_back(it->second);
      continue;
    }
    // Outputs already resident (siblings of a recomputed tensor) are
    // rewritten with the same values where they are.
    offsets.push_back(offsetOf[tensor]);
    current[tensor] = result;
    newestVersion[graph.storageOf(tensor)] = tensor;
  }
  compute.setOffsets(offsets);
  if (ins.workspaceBytes > 0)
    compute.setWorkspaceOffset(ins.workspaceOffset);
  if (ins.kind == planner::InstructionKind::Recompute)
    compute.setRecomputeOf(ins.op);
  return success();
}

LogicalResult ScheduleBuilder::emitRelease(const planner::Instruction &ins) {
  Value value = current[ins.tensor];
  if (!value) {
    internalError = "plan releases '" + graph.tensors[ins.tensor].name +
                    "' while it is not resident";
    return failure();
  }
  Location loc = value.getLoc();
  if (ins.kind == planner::InstructionKind::Evict)
    builder.create<EvictOp>(loc, value);
  else
    builder.create<FreeOp>(loc, value);
  current[ins.tensor] = nullptr;
  return success();
}

LogicalResult ScheduleBuilder::build() {
  Block &body = func.front();
  SmallVector<Operation *> originals;
  for (Operation &op : body.without_terminator())
    originals.push_back(&op);

  for (BlockArgument arg : func.getArguments()) {
    TensorId tensor = step.getTensorId(arg);
    current[tensor] = arg;
    newestVersion[tensor] = tensor;
  }
  // StepGraph numbers the arguments first, so a tensor id is an argument
  // index here.
  for (const planner::Allocation &allocation : plan.arguments) {
    offsetOf[allocation.tensor] = allocation.offset;
    func.setArgAttr(allocation.tensor, CoopDialect::kOffsetAttrName,
                    builder.getI64IntegerAttr(allocation.offset));
  }

  for (const planner::Instruction &ins : plan.instructions) {
    bool isRelease = ins.kind == planner::InstructionKind::Evict ||
                     ins.kind == planner::InstructionKind::Free;
    if (failed(isRelease ? emitRelease(ins) : emitRun(ins)))
      return emitError(stepLocation(func))
             << "internal error while writing the plan: " << internalError;
  }

  Operation *terminator = body.getTerminator();
  for (OpOperand &operand : terminator->getOpOperands())
    operand.set(materialize(step.getTensorId(operand.get())));
  if (!internalError.empty())
    return emitError(stepLocation(func))
           << "internal error while writing the plan: " << internalError;
  for (Operation *op : llvm::reverse(originals))
    op->erase();
  return success();
}

/// The report's line on where the step's costs came from (coop.costs,
/// recorded by coop-annotate-costs, else costs given in the input), and a
/// warning when some ops have none: the planner takes them as free to
/// recompute.
std::string describeCosts(func::FuncOp func) {
  int64_t computeOps = 0, costed = 0;
  func.walk([&](ComputeOp op) {
    ++computeOps;
    costed += op.getCostUsAttr() != nullptr;
  });
  SmallVector<std::string> sources;
  int64_t recordedOps = 0;
  if (auto recorded = func->getAttrOfType<DictionaryAttr>(CoopDialect::kCostsAttrName)) {
    auto count = [&](StringRef source) {
      IntegerAttr attr = recorded.getAs<IntegerAttr>(source);
      int64_t n = attr ? attr.getInt() : 0;
      recordedOps += n;
      return n;
    };
    StringAttr device = recorded.getAs<StringAttr>("device");
    StringAttr table = recorded.getAs<StringAttr>("profile_table");
    if (int64_t n = count("profile"))
      sources.push_back(llvm::formatv("profile table '{0}' for {1} ops",
                                      table ? table.getValue() : "", n).str());
    if (int64_t n = count("roofline"))
      sources.push_back(llvm::formatv("roofline ({0}) for {1} ops",
                                      device ? device.getValue() : "", n).str());
    if (int64_t n = count("given"))
      sources.push_back(llvm::formatv("given in the input for {0} ops", n).str());
  }
  // Costs with no record: in the input (or added since).
  if (int64_t unrecorded = costed - recordedOps; unrecorded > 0)
    sources.push_back(llvm::formatv("given in the input for {0} ops", unrecorded).str());
  if (costed < computeOps)
    sources.push_back(llvm::formatv("none for {0} ops", computeOps - costed).str());
  std::string line = "\n  costs:              " + llvm::join(sources, ", ");
  if (costed < computeOps)
    line += llvm::formatv("\n  warning: {0} of {1} compute ops have no cost (cost_us): the "
                          "planner counts their recomputation as free; cost them with "
                          "--coop-annotate-costs (--coop-compile does)",
                          computeOps - costed, computeOps)
                .str();
  return line;
}

struct CoopPlanMemoryPass
    : public mlir::coop::impl::CoopPlanMemoryBase<CoopPlanMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<func::FuncOp> steps;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (isTrainingStep(func))
        steps.push_back(func);
    // An empty file must not "compile" to an empty program.
    if (steps.empty()) {
      emitError(getOperation().getLoc())
          << "nothing to plan: the input has no function marked 'coop.step'";
      return signalPassFailure();
    }
    for (func::FuncOp func : steps)
      if (failed(planStep(func)))
        return signalPassFailure();
  }

private:
  LogicalResult planStep(func::FuncOp func);
  FailureOr<planner::PlanOptions> buildOptions(func::FuncOp func,
                                               const planner::Graph &graph);
  void attachPlan(func::FuncOp func, const planner::Plan &plan,
                  const planner::PlanOptions &options, double seconds);
  void printReport(func::FuncOp func, const planner::Plan &plan,
                   double seconds);
  LogicalResult writePicture(func::FuncOp func, const planner::Graph &graph,
                             const planner::Plan &plan,
                             const planner::PlanOptions &options);

  /// The arena the step needs with no rematerialization, under the same
  /// allocator options: what `ratio` is a fraction of.
  int64_t noRematerializationBytes = 0;
  /// policy=search: planner::searchPlan() instead of one policy's plan().
  bool searchCandidates = false;
};

LogicalResult CoopPlanMemoryPass::planStep(func::FuncOp func) {
  if (func->hasAttr(CoopDialect::kPlanAttrName))
    return emitError(stepLocation(func), "step is already planned");
  const StepGraph &step = getChildAnalysis<StepGraph>(func);
  if (!step.isValid())
    return emitError(step.getErrorLoc())
           << "cannot plan step: " << step.getError();
  const auto sizingStart = std::chrono::steady_clock::now();
  FailureOr<planner::PlanOptions> options = buildOptions(func, step.getGraph());
  if (failed(options))
    return failure();
  // The search's time limit bounds the step's whole planning: sizing the
  // budget for a ratio (`none`'s arena packed, 0.3 s for the 12k-op BiLSTM)
  // counts too.
  if (searchCandidates && timeLimit > 0)
    options->deadline = options->deadline.withTimeLimit(sizingStart, timeLimit);

  planner::Plan plan;
  auto start = std::chrono::steady_clock::now();
  planner::Status status =
      searchCandidates ? planner::searchPlan(step.getGraph(), *options, &plan)
                       : planner::plan(step.getGraph(), *options, &plan);
  double planningSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (!status && plan.stats.timeLimitReached)
    // The search as a whole stopped, not an op.
    return emitError(stepLocation(func))
           << "cannot plan @" << func.getSymName() << " with policy '" << policy
           << "': " << status.message()
           << "; try work-limit=0 and time-limit=0 (no limits) or larger ones";
  if (!status) {
    // At the op the failure is about, never at the function: a
    // diagnostic shows its location's source line, and a step's
    // signature is one line as long as its argument list (45 KB for a
    // zoo model). The op that found no room, else the one whose working
    // set sets the floor, else the one where the live bytes peak.
    const planner::PlanStats &stats = plan.stats;
    OpId at = stats.failedOp != kNone         ? stats.failedOp
              : stats.memoryFloorOp != kNone ? stats.memoryFloorOp
                                             : planner::computeMemoryStats(
                                                   step.getGraph())
                                                   .peakOp;
    InFlightDiagnostic diag =
        emitError(at != kNone ? step.getOperation(at)->getLoc()
                              : stepLocation(func))
        << "cannot plan @" << func.getSymName() << " with policy '" << policy
        << "': " << status.message();
    if (stats.memoryFloorOp != kNone && stats.memoryFloorOp != at)
      diag.attachNote(step.getOperation(stats.memoryFloorOp)->getLoc())
          << "the op with the largest working set, which sets the floor of "
          << stats.memoryFloorBytes << " bytes";
    return failure();
  }
  if (!svg.empty() &&
      failed(writePicture(func, step.getGraph(), plan, *options)))
    return failure();
  attachPlan(func, plan, *options, planningSeconds);
  if (report)
    printReport(func, plan, planningSeconds);
  return ScheduleBuilder(func, step, plan).build();
}

FailureOr<planner::PlanOptions>
CoopPlanMemoryPass::buildOptions(func::FuncOp func,
                                 const planner::Graph &graph) {
  planner::PlanOptions options;
  // The search ignores options.policy.
  searchCandidates = policy == "search";
  if (!searchCandidates && !planner::policyFromName(policy, &options.policy))
    return emitError(stepLocation(func))
           << "unknown policy '" << policy
           << "'; expected search, lookahead, coop, dtr, dte or none";
  // Every numeric option within a range the planner's arithmetic handles.
  auto inRange = [&](StringRef option, auto value, auto low, auto high,
                     StringRef unit) -> LogicalResult {
    if (value >= low && value <= high) // false for NaN
      return success();
    return emitError(stepLocation(func))
           << option << " must be in [" << numberText(low) << ", "
           << numberText(high) << "]" << unit << ", got " << numberText(value);
  };
  if (failed(inRange("time-limit", double(timeLimit), 0.0, kMaxTimeLimit,
                     " seconds")) ||
      failed(inRange("work-limit", int64_t(workLimit), int64_t(0),
                     kMaxWorkLimit, " units")) ||
      failed(inRange("alignment", int64_t(alignment), int64_t(1),
                     planner::kMaxAlignment, " bytes")) ||
      failed(inRange("small-region", int64_t(smallRegion), int64_t(0),
                     ::coop::kMaxPlannedBytes, " bytes")) ||
      failed(inRange("pack-nodes", int64_t(packNodes), int64_t(0),
                     kMaxPackNodes, " nodes")))
    return failure();
  options.searchTimeLimitSeconds = timeLimit;
  options.searchWorkLimit = workLimit;
  options.alignment = alignment;
  options.twoEndedPartitioning = partition;
  options.recomputableInPlace = inplace;
  options.slidingWindow = window;
  options.smallRegionBytes = smallRegion;
  options.offlinePacking = pack;
  options.simulatedArenas = searchBudget
                                ? planner::PlanOptions::ArenaSearch::Full
                                : planner::PlanOptions::ArenaSearch::BudgetOnly;
  options.packingNodeLimit = packNodes;

  // ratio=0 is given, not missing: it is refused below as not positive.
  if (budget.empty() == !ratio.hasValue())
    return emitError(stepLocation(func),
        "give exactly one of budget=<bytes> (e.g. 512MiB) or ratio=<r>");
  if (!budget.empty()) {
    int64_t bytes = 0;
    if (!planner::parseByteSize(budget, &bytes) || bytes <= 0)
      return emitError(stepLocation(func))
             << "invalid budget '" << budget
             << "': expected a positive number of bytes with an optional "
                "unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)";
    if (failed(inRange("budget", bytes, int64_t(1), ::coop::kMaxPlannedBytes,
                       " bytes")))
      return failure();
    options.budgetBytes = bytes;
    return options;
  }
  if (!(ratio > 0.0))
    return emitError(stepLocation(func))
           << "ratio must be positive, got " << ratio;
  planner::PlanOptions unconstrained = options;
  unconstrained.policy = planner::Policy::None;
  if (planner::Status status = planner::minimumBudget(
          graph, unconstrained, &noRematerializationBytes);
      !status)
    return emitError(stepLocation(func)) << "cannot size the step without "
                                       "rematerialization: "
                                    << status.message();
  // The budget must be a representable byte count: a ratio so large (or
  // infinite) that it is not would wrap.
  const double largest = static_cast<double>(::coop::kMaxPlannedBytes);
  const double bytes = ratio * static_cast<double>(noRematerializationBytes);
  if (!(bytes < largest))
    return emitError(stepLocation(func))
           << "ratio " << ratio << " gives a budget of " << bytes
           << " bytes, more than the largest supported (2^62); give a "
              "ratio of at most "
           << largest / static_cast<double>(noRematerializationBytes);
  options.budgetBytes = static_cast<int64_t>(bytes);
  return options;
}

void CoopPlanMemoryPass::attachPlan(func::FuncOp func,
                                    const planner::Plan &plan,
                                    const planner::PlanOptions &options,
                                    double seconds) {
  Builder b(func.getContext());
  const planner::PlanStats &stats = plan.stats;
  SmallVector<NamedAttribute> fields = {
      b.getNamedAttr("budget", b.getI64IntegerAttr(options.budgetBytes)),
      b.getNamedAttr("policy",
                     b.getStringAttr(planner::policyName(plan.policy))),
      b.getNamedAttr("alignment", b.getI64IntegerAttr(options.alignment)),
      b.getNamedAttr("partition", b.getBoolAttr(plan.twoEndedPartitioning)),
      b.getNamedAttr("inplace", b.getBoolAttr(inplace)),
      b.getNamedAttr("window", b.getBoolAttr(window)),
      b.getNamedAttr("small_region", b.getI64IntegerAttr(smallRegion)),
      b.getNamedAttr("pack", b.getBoolAttr(pack)),
      b.getNamedAttr("floor_bytes",
                     b.getI64IntegerAttr(stats.memoryFloorBytes)),
      b.getNamedAttr("persistent_bytes",
                     b.getI64IntegerAttr(stats.persistentBytes)),
      b.getNamedAttr("peak_bytes",
                     b.getI64IntegerAttr(stats.peakAllocatedBytes)),
      b.getNamedAttr("high_water_bytes",
                     b.getI64IntegerAttr(stats.addressHighWater)),
      b.getNamedAttr("compute_overhead",
                     b.getF64FloatAttr(stats.computeOverhead)),
      b.getNamedAttr("fragmentation",
                     b.getF64FloatAttr(stats.fragmentationRate)),
      b.getNamedAttr("evictions", b.getI64IntegerAttr(stats.evictionCount)),
      b.getNamedAttr("recomputes", b.getI64IntegerAttr(stats.recomputeCount)),
      b.getNamedAttr("eviction_search_us",
                     b.getF64FloatAttr(stats.evictionSearchSeconds * 1e6)),
      b.getNamedAttr("planning_us", b.getF64FloatAttr(seconds * 1e6)),
  };
  if (noRematerializationBytes > 0)
    fields.push_back(b.getNamedAttr(
        "unconstrained_bytes", b.getI64IntegerAttr(noRematerializationBytes)));
  if (pack)
    fields.push_back(b.getNamedAttr(
        "simulated_budget", b.getI64IntegerAttr(stats.simulatedBudgetBytes)));
  if (searchCandidates)
    fields.push_back(b.getNamedAttr(
        "search", b.getStringAttr(stats.winningCandidate)));
  func->setAttr(CoopDialect::kPlanAttrName, b.getDictionaryAttr(fields));
}

void CoopPlanMemoryPass::printReport(func::FuncOp func,
                                     const planner::Plan &plan,
                                     double seconds) {
  const planner::PlanStats &stats = plan.stats;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "coop-plan-memory @" << func.getSymName() << ": policy "
     << planner::policyName(plan.policy) << ", budget ";
  os << planner::formatByteSize(plan.budgetBytes);
  if (noRematerializationBytes > 0)
    os << " = " << llvm::format("%.3f", double(ratio)) << " x "
       << noRematerializationBytes << " (no rematerialization)";
  if (searchCandidates) {
    os << "\n  plan search:        " << stats.candidates.size()
       << " candidates tried"
       << (!stats.timeLimitReached    ? ""
           : stats.clockLimitReached ? " (time limit reached)"
                                     : " (work limit reached)")
       << "; won: " << stats.winningCandidate;
    for (const planner::SearchCandidate &candidate : stats.candidates) {
      os << "\n    " << candidate.name << ": ";
      if (candidate.planned)
        os << llvm::format("%.2f %%", candidate.computeOverhead * 100.0);
      else
        os << (candidate.costBoundReached ? "no plan (cost bound)"
                                          : "no plan");
      os << llvm::format(" (%.0f ms, ", candidate.seconds * 1e3)
         << candidate.work << " units)";
    }
    os << "\n  search work:        " << stats.searchWork << " units";
    if (workLimit > 0)
      os << " of the limit's " << int64_t(workLimit);
  }
  os << describeCosts(func);
  os << "\n  memory floor:       "
     << planner::formatByteSize(stats.memoryFloorBytes);
  os << "\n  persistent:         "
     << planner::formatByteSize(stats.persistentBytes);
  os << "\n  peak allocated:     "
     << planner::formatByteSize(stats.peakAllocatedBytes);
  os << "\n  arena high water:   "
     << planner::formatByteSize(stats.addressHighWater);
  if (pack) {
    os << " (packed offline: " << stats.packingMethod << ", lower bound "
       << planner::formatByteSize(stats.packingLowerBoundBytes)
       << (stats.packingProvedOptimal ? ", optimal" : "") << ")";
    os << "\n  simulated arena:    "
       << planner::formatByteSize(stats.simulatedBudgetBytes) << " (best of "
       << stats.simulatedBudgetsTried << " tried)";
  }
  os << "\n  compute overhead:   "
     << llvm::format("%.2f %%", stats.computeOverhead * 100.0)
     << "\n  fragmentation:      "
     << llvm::format("%.2f %%", stats.fragmentationRate * 100.0)
     << "\n  evictions:          " << stats.evictionCount << " in "
     << stats.evictionEvents << " eviction events"
     << "\n  recomputations:     " << stats.recomputeCount
     << "\n  eviction search:    "
     << llvm::format("%.3f ms", stats.evictionSearchSeconds * 1e3)
     << "\n  planning time:      " << llvm::format("%.3f ms", seconds * 1e3);
  if (pack)
    os << " (" << llvm::format("%.3f ms", stats.packingSeconds * 1e3)
       << " repacking)";
  os << "\n";
  llvm::outs() << os.str();
}

LogicalResult
CoopPlanMemoryPass::writePicture(func::FuncOp func, const planner::Graph &graph,
                                 const planner::Plan &plan,
                                 const planner::PlanOptions &options) {
  std::error_code error;
  llvm::raw_fd_ostream file(svg, error, llvm::sys::fs::OF_Text);
  if (error)
    return emitError(stepLocation(func))
           << "cannot write the memory picture to '"
                                    << svg << "': " << error.message();
  std::string picture = planner::renderMemoryPicture(graph, plan, options);
  file << picture;
  return success();
}

} // namespace
