//===- CoopDialect.h - coop dialect declaration ------------------*- C++ -*-===//

#ifndef COOP_DIALECT_COOP_IR_COOPDIALECT_H
#define COOP_DIALECT_COOP_IR_COOPDIALECT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include "coop/Dialect/Coop/IR/CoopOpsDialect.h.inc"

#endif // COOP_DIALECT_COOP_IR_COOPDIALECT_H
