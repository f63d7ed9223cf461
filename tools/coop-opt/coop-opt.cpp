//===- coop-opt.cpp - The coop pass driver --------------------------------===//

#include "coop/Dialect/Coop/IR/CoopDialect.h"
#include "coop/Dialect/CoopRT/IR/CoopRT.h"
#include "coop/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::coop::CoopDialect, mlir::coop_rt::CoopRTDialect,
                  mlir::func::FuncDialect>();
  mlir::coop::registerCoopPasses();
  mlir::coop::registerCoopPipelines();
  // Generic clean-ups users chain with coop passes.
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Coop memory-planning compiler driver\n", registry));
}
