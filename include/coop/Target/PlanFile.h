//===- PlanFile.h - coop_rt programs <-> protobuf Plan files -----*- C++ -*-===//
//
// The Plan file (proto/plan.proto) is what the runtime loads. Writing it
// from a coop_rt program and reading it back give the same program.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_TARGET_PLANFILE_H
#define COOP_TARGET_PLANFILE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::coop {

/// Serializes the module's single coop_rt.program as a Plan file
/// (proto/PlanFileFormat.h), after checking that importPlan reads it back.
LogicalResult exportPlan(ModuleOp module, llvm::raw_ostream &output);

/// Reads a serialized Plan into a module holding one coop_rt.program.
/// Malformed, truncated or inconsistent input emits an error naming the
/// problem and returns null.
OwningOpRef<ModuleOp> importPlan(llvm::StringRef bytes,
                                 llvm::StringRef sourceName,
                                 MLIRContext *context);

/// Registers --coop-rt-to-plan and --plan-to-coop-rt.
void registerPlanTranslations();

} // namespace mlir::coop

#endif // COOP_TARGET_PLANFILE_H
