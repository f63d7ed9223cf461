//===- Pipelines.cpp - Named pass pipelines -------------------------------===//

#include "coop/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

void mlir::coop::registerCoopPipelines() {
  // The pipeline takes exactly the options of coop-plan-memory and hands
  // them over, so the two can never disagree. It merges duplicate ops
  // first (each copy would be one more tensor to keep or recompute), then
  // costs the ops that have no cost: planning with every cost zero picks
  // plans that recompute far more than needed.
  registerPassPipeline(
      "coop-compile",
      "Merge duplicates, run updates early, cost, plan, verify and lower "
      "every training step: coop-merge-duplicates, coop-hoist-state-updates, "
      "coop-annotate-costs (the a100 roofline for ops without cost_us; "
      "costs in the input, e.g. from a profile, are kept), "
      "coop-plan-memory (whose options it takes, e.g. "
      "--coop-compile=\"ratio=0.5 policy=coop\"), coop-verify-plan, "
      "coop-lower-to-runtime",
      [](OpPassManager &pm, StringRef options,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        std::unique_ptr<Pass> plan = createCoopPlanMemory();
        if (failed(plan->initializeOptions(options, errorHandler)))
          return failure();
        pm.addNestedPass<func::FuncOp>(createCoopMergeDuplicates());
        pm.addNestedPass<func::FuncOp>(createCoopHoistStateUpdates());
        pm.addPass(createCoopAnnotateCosts());
        pm.addPass(std::move(plan));
        pm.addNestedPass<func::FuncOp>(createCoopVerifyPlan());
        pm.addPass(createCoopLowerToRuntime());
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)>) {});
}
