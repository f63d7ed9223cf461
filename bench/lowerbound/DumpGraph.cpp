//===- DumpGraph.cpp - Write a step's planner graph as JSON ---------------===//
//
// coop-dump-graph STEP.mlir [-o graph.json] [--alignment N]
// coop-dump-graph PLANNED.mlir -o planned.json
//
// Reads a cost-annotated coop.step, builds the planner-core Graph the way
// --coop-plan-memory does (the StepGraph analysis), and writes it as JSON
// for bench/lowerbound/checkmate_bound.py: every tensor and op, plus the
// denominator of `ratio`: the arena the step needs under policy none,
// packed offline (planner::minimumBudget, the call the pass makes).
// Given a planned step (the output of --coop-plan-memory), it writes the
// original graph and adds the plan's instructions, read back the way
// --coop-verify-plan reads them, so that checkmate_bound.py --check-plan can
// show the plan is a point of its relaxation.
// A bench tool: nothing in the compile path reads its output.
//
//===----------------------------------------------------------------------===//

#include "coop/Analysis/PlannedStep.h"
#include "coop/Analysis/StepGraph.h"
#include "coop/Dialect/Coop/IR/CoopDialect.h"
#include "coop/Dialect/Coop/IR/CoopOps.h"
#include "coop/Planner/Plan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/AnalysisManager.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace planner = ::coop::planner;

static llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                            llvm::cl::desc("<step.mlir>"),
                                            llvm::cl::Required);
static llvm::cl::opt<std::string> outputFile("o", llvm::cl::desc("JSON output"),
                                             llvm::cl::init("-"));
static llvm::cl::opt<int64_t>
    alignment("alignment",
              llvm::cl::desc("Buffer alignment for the none arena (the "
                             "--coop-plan-memory default)"),
              llvm::cl::init(512));

static const char *kindName(planner::InstructionKind kind) {
  switch (kind) {
  case planner::InstructionKind::Run:
    return "run";
  case planner::InstructionKind::Recompute:
    return "recompute";
  case planner::InstructionKind::Evict:
    return "evict";
  case planner::InstructionKind::Free:
    return "free";
  }
  return "?";
}

static void writePlan(llvm::json::OStream &j, const planner::Plan &plan) {
  j.attributeObject("plan", [&] {
    j.attribute("budgetBytes", plan.budgetBytes);
    j.attributeArray("instructions", [&] {
      for (const planner::Instruction &ins : plan.instructions) {
        j.object([&] {
          j.attribute("kind", kindName(ins.kind));
          j.attribute("op", ins.op);
          j.attribute("tensor", ins.tensor);
          // The outputs that got a buffer, and which took an operand's.
          j.attributeArray("outputs", [&] {
            for (const planner::Allocation &a : ins.outputs)
              j.value(a.tensor);
          });
          j.attributeArray("inPlace", [&] {
            for (const planner::Allocation &a : ins.outputs)
              if (a.inPlace)
                j.value(a.tensor);
          });
        });
      }
    });
  });
}

static void writeGraph(llvm::json::OStream &j, StringRef stepName,
                       const planner::Graph &graph, int64_t noneArena,
                       const planner::Plan *plan) {
  planner::MemoryStats stats = planner::computeMemoryStats(graph);
  double baseline = 0.0;
  for (const planner::Op &op : graph.ops)
    baseline += op.costUs;
  j.object([&] {
    j.attribute("step", stepName);
    j.attribute("alignment", alignment.getValue());
    // What `ratio` multiplies in --coop-plan-memory.
    j.attribute("noneArenaBytes", noneArena);
    j.attribute("baselineCostUs", baseline);
    j.attribute("persistentBytes", stats.persistentBytes);
    j.attribute("peakLiveBytes", stats.peakLiveBytes);
    j.attribute("floorBytes", stats.floorBytes);
    j.attributeArray("tensors", [&] {
      for (size_t id = 0; id < graph.tensors.size(); ++id) {
        const planner::Tensor &t = graph.tensors[id];
        const auto tensor = static_cast<planner::TensorId>(id);
        j.object([&] {
          j.attribute("name", t.name);
          j.attribute("bytes", t.bytes);
          j.attribute("role", planner::roleName(t.role));
          j.attribute("producer", t.producer);
          j.attribute("viewOf", t.viewOf);
          j.attribute("previousVersion", t.previousVersion);
          // Derived here so the script need not re-implement aliasing.
          j.attribute("storage", graph.storageOf(tensor));
          j.attribute("content", graph.contentOf(tensor));
          j.attribute("persistent", graph.isPersistent(tensor));
          j.attribute("isStepOutput", t.isStepOutput);
        });
      }
    });
    j.attributeArray("ops", [&] {
      for (const planner::Op &op : graph.ops) {
        j.object([&] {
          j.attribute("name", op.name);
          j.attribute("costUs", op.costUs);
          j.attributeArray("inputs", [&] {
            for (planner::TensorId in : op.inputs)
              j.value(in);
          });
          j.attributeArray("outputs", [&] {
            for (planner::TensorId out : op.outputs)
              j.value(out);
          });
          j.attribute("workspaceBytes", op.workspaceBytes);
          j.attribute("isView", op.isView);
          j.attribute("isRandom", op.isRandom);
          j.attribute("discardableInPlace", op.discardableInPlace);
        });
      }
    });
    if (plan)
      writePlan(j, *plan);
  });
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::ParseCommandLineOptions(
      argc, argv, "Write a coop.step's planner graph as JSON\n");

  DialectRegistry registry;
  registry.insert<mlir::coop::CoopDialect, func::FuncDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  std::string error;
  auto file = openInputFile(inputFile, &error);
  if (!file) {
    llvm::errs() << "coop-dump-graph: " << error << "\n";
    return 1;
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  // One step per file is what the eval imports; a second would make the
  // JSON ambiguous.
  func::FuncOp step;
  for (auto func : module->getOps<func::FuncOp>()) {
    if (!mlir::coop::isTrainingStep(func))
      continue;
    if (step) {
      llvm::errs() << "coop-dump-graph: more than one coop.step in "
                   << inputFile << "\n";
      return 1;
    }
    step = func;
  }
  if (!step) {
    llvm::errs() << "coop-dump-graph: no coop.step in " << inputFile << "\n";
    return 1;
  }
  // Through an analysis manager, as the passes get them: PlannedStep reads
  // a planned step back, StepGraph an unplanned one.
  ModuleAnalysisManager moduleAnalyses(*module, /*passInstrumentor=*/nullptr);
  AnalysisManager analyses =
      AnalysisManager(moduleAnalyses).nest(step.getOperation());
  const planner::Plan *plan = nullptr;
  if (step->hasAttr(mlir::coop::CoopDialect::kPlanAttrName)) {
    const auto &planned = analyses.getAnalysis<mlir::coop::PlannedStep>();
    if (!planned.isValid()) {
      emitError(planned.getErrorLoc())
          << "cannot read the plan: " << planned.getError();
      return 1;
    }
    plan = &planned.getPlan();
  }
  const auto &graph = analyses.getAnalysis<mlir::coop::StepGraph>();
  if (!graph.isValid()) {
    emitError(graph.getErrorLoc()) << "cannot read step: " << graph.getError();
    return 1;
  }

  // The same options --coop-plan-memory builds for ratio=R: defaults, policy
  // none, the given alignment.
  planner::PlanOptions options;
  options.policy = planner::Policy::None;
  options.alignment = alignment;
  int64_t noneArena = 0;
  if (planner::Status status =
          planner::minimumBudget(graph.getGraph(), options, &noneArena);
      !status) {
    llvm::errs() << "coop-dump-graph: cannot size the step without "
                    "rematerialization: "
                 << status.message() << "\n";
    return 1;
  }

  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << "coop-dump-graph: " << error << "\n";
    return 1;
  }
  {
    llvm::json::OStream j(output->os(), /*IndentSize=*/0);
    writeGraph(j, step.getSymName(), graph.getGraph(), noneArena, plan);
  }
  output->os() << "\n";
  output->keep();
  return 0;
}
