//===- MlirFuzzer.cpp - libFuzzer target: parse, verify, check, lower -----===//
//
// Feeds arbitrary text to the MLIR parser with the coop dialects (their
// verifiers run as it parses), then runs what `--coop-compile` runs after
// planning on every planned step: coop-verify-plan and
// coop-lower-to-runtime. Whatever the lowering writes must parse back.
//
//===----------------------------------------------------------------------===//

#include "MlirFuzzSupport.h"

#include "coop/Dialect/Coop/IR/CoopOps.h"
#include "coop/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ::coop::fuzz::QuietContext context;
  // MLIR's lexer reads up to a terminating NUL, as files have in coop-opt.
  std::string source(reinterpret_cast<const char *>(data), size);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(source, context.get());
  if (!module)
    return 0;
  bool planned = false;
  module->walk([&](func::FuncOp func) {
    planned |= mlir::coop::isTrainingStep(func) &&
               func->hasAttr(mlir::coop::CoopDialect::kPlanAttrName);
  });
  if (!planned)
    return 0;
  PassManager pm(context.get());
  pm.addNestedPass<func::FuncOp>(mlir::coop::createCoopVerifyPlan());
  pm.addPass(mlir::coop::createCoopLowerToRuntime());
  if (failed(pm.run(*module)))
    return 0;
  ::coop::fuzz::requireParsesBack(*module);
  return 0;
}
