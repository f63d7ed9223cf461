//===- MlirFuzzSupport.h - What the MLIR fuzzers share ------------*- C++ -*-===//

#ifndef COOP_FUZZ_MLIRFUZZSUPPORT_H
#define COOP_FUZZ_MLIRFUZZSUPPORT_H

#include "coop/Dialect/Coop/IR/CoopDialect.h"
#include "coop/Dialect/CoopRT/IR/CoopRT.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>

namespace coop::fuzz {

/// The dialects coop-opt and coop-translate load, single-threaded, with
/// diagnostics swallowed: refusals are expected, their text is not the point.
class QuietContext {
public:
  QuietContext()
      : context(registry(), mlir::MLIRContext::Threading::DISABLED),
        quiet(&context, [](mlir::Diagnostic &) { return mlir::success(); }) {
    context.loadAllAvailableDialects();
  }
  mlir::MLIRContext *get() { return &context; }

private:
  static mlir::DialectRegistry registry() {
    mlir::DialectRegistry registry;
    registry.insert<mlir::coop::CoopDialect, mlir::coop_rt::CoopRTDialect,
                    mlir::func::FuncDialect>();
    return registry;
  }
  mlir::MLIRContext context;
  mlir::ScopedDiagnosticHandler quiet;
};

/// A tool may refuse its input, but what it writes it must read back:
/// aborts (a finding) when `module` does not print as IR that parses.
inline void requireParsesBack(mlir::ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  if (!mlir::parseSourceString<mlir::ModuleOp>(os.str(), module.getContext()))
    std::abort();
}

} // namespace coop::fuzz

#endif // COOP_FUZZ_MLIRFUZZSUPPORT_H
