//===- TrainingGraph.h - Import exported training graphs ---------*- C++ -*-===//
//
// Reads the protobuf TrainingGraph that python/coop_export writes
// (proto/training_graph.proto) into a module holding one coop.step function.
//
//===----------------------------------------------------------------------===//

#ifndef COOP_TARGET_TRAININGGRAPH_H
#define COOP_TARGET_TRAININGGRAPH_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::coop {

/// Builds a module with one `coop.step` function from the serialized
/// TrainingGraph in `bytes`. `sourceName` names the file in diagnostics.
/// Malformed, truncated or inconsistent input emits an error and returns a
/// null module; the result is verified.
OwningOpRef<ModuleOp> importTrainingGraph(llvm::StringRef bytes,
                                          llvm::StringRef sourceName,
                                          MLIRContext *context);

/// Registers `--import-training-graph` with mlir-translate's registry.
void registerImportTrainingGraphTranslation();

} // namespace mlir::coop

#endif // COOP_TARGET_TRAININGGRAPH_H
