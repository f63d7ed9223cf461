//===- CoopRT.h - The runtime-facing plan dialect ----------------*- C++ -*-===//

#ifndef COOP_DIALECT_COOPRT_IR_COOPRT_H
#define COOP_DIALECT_COOPRT_IR_COOPRT_H

#include "coop/Dialect/Coop/IR/CoopOps.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"

#include "coop/Dialect/CoopRT/IR/CoopRTDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "coop/Dialect/CoopRT/IR/CoopRTAttrs.h.inc"

#define GET_OP_CLASSES
#include "coop/Dialect/CoopRT/IR/CoopRTOps.h.inc"

#endif // COOP_DIALECT_COOPRT_IR_COOPRT_H
