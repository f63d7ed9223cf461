//===- Passes.h - coop passes ------------------------------------*- C++ -*-===//

#ifndef COOP_TRANSFORMS_PASSES_H
#define COOP_TRANSFORMS_PASSES_H

#include "coop/Dialect/Coop/IR/CoopDialect.h"
#include "coop/Dialect/CoopRT/IR/CoopRT.h"
#include "coop/Planner/Deadline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::coop {

#define GEN_PASS_DECL
#include "coop/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "coop/Transforms/Passes.h.inc"

/// Registers --coop-compile: plan, verify and lower.
void registerCoopPipelines();

} // namespace mlir::coop

#endif // COOP_TRANSFORMS_PASSES_H
