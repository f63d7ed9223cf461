//===- TrainingGraphFuzzer.cpp - libFuzzer target: the graph importer -----===//
//
// Feeds arbitrary bytes to the TrainingGraph importer (what
// `coop-translate --import-training-graph` runs). A graph it accepts must
// verify, and must print as IR that parses back: the importer may refuse
// anything, but never crash or write what it cannot read.
//
//===----------------------------------------------------------------------===//

#include "MlirFuzzSupport.h"

#include "coop/Target/TrainingGraph.h"

#include "mlir/IR/Verifier.h"

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ::coop::fuzz::QuietContext context;
  OwningOpRef<ModuleOp> module = mlir::coop::importTrainingGraph(
      StringRef(reinterpret_cast<const char *>(data), size), "fuzz",
      context.get());
  if (!module)
    return 0;
  if (failed(verify(*module)))
    std::abort();
  ::coop::fuzz::requireParsesBack(*module);
  return 0;
}
